// Host emulation of the CUDA subset that generated GPU code uses (docs/gpu.md).
//
// Including this header instead of the CUDA headers lets a generated .cu file, or the device
// library tpu_cuda.cuh with TPU_CUDA_EMULATE defined, compile with a plain C++17 compiler and run
// on the CPU. Blocks run one after another; the threads of a block run as cooperative fibers
// (ucontext) that switch only at synchronisation points:
//   - __syncthreads: every thread of the block must arrive at the same barrier (same file:line);
//   - warp collectives (mma, ldmatrix, shuffles, __syncwarp): all 32 lanes of the warp must
//     arrive at the same operation; the last lane to arrive computes the result of every lane
//     from the per-lane inputs, using the PTX ISA fragment layouts.
// Everything between two synchronisation points of a thread runs at once, so the emulator is
// deliberately hostile to racy code: fibers are picked in a seeded order, warp by warp (seed 0:
// highest thread first, otherwise warps and lanes shuffled), dynamic shared memory is filled with
// NaN bytes at every block start, and cp.async copies stay pending until the issuing thread waits
// for their group. A missing barrier or wait therefore yields wrong numbers instead of passing by
// luck. A deadlock (threads waiting at a barrier or collective that others never reach) is
// reported as one line on stderr and exit status 1, as are misaligned or oversized operations and
// accesses past the end of the dynamic shared memory (which ends at a guard page).
//
// Not thread-safe: launches must come from one host thread. Not emulated: atomics, streams,
// clusters, memory-model subtleties beyond "visible after wait + barrier", timing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <sys/mman.h>
#include <tuple>
#include <ucontext.h>
#include <unistd.h>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// Blocks run one after another, so one static instance per kernel serves every block.
#define __shared__ static
#define __syncthreads() ::tpu_emu::syncthreads(__FILE__, __LINE__)

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};

// CUDA's vector types, with their alignment (16-byte loads and stores of generated code).
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
  unsigned x, y;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

namespace tpu_emu {

// Counters a test can inspect after a launch; reset with reset_stats().
struct Stats {
  uint64_t launches = 0;
  uint64_t blocks = 0;
  uint64_t barriers = 0;        // completed __syncthreads (per block)
  uint64_t mma = 0;             // warp-level mma.m16n8k16 operations
  uint64_t ldmatrix = 0;        // warp-level ldmatrix operations
  uint64_t ldmatrix_phases = 0; // 8x16-byte row groups read by ldmatrix (one per matrix)
  // Extra shared-memory wavefronts the ldmatrix phases needed: for every phase, the largest number
  // of distinct 4-byte words that fall into one bank (bank = (address / 4) % 32), minus one.
  uint64_t ldmatrix_bank_conflicts = 0;
  uint64_t cp_async_bytes = 0;
  uint64_t context_switches = 0;
};

namespace detail {

[[noreturn]] inline void fail(const std::string &message) {
  std::fprintf(stderr, "tpu_emu: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(1);
}

constexpr int kWarpSize = 32;
constexpr int kMaxThreadsPerBlock = 1024;
// The largest dynamic shared memory a block may opt into (sm_90: 227 KiB).
constexpr size_t kMaxDynamicSmem = 227 * 1024;
// Warp collectives exchange at most this many bytes of input and of output per lane.
constexpr size_t kCollectiveBytes = 64;
constexpr size_t kFiberStackBytes = 256 * 1024;

enum class FiberState { Ready, AtBarrier, AtCollective, Done };

struct PendingCopy {
  void *dst;
  std::vector<unsigned char> bytes; // read from the source when the copy was issued
};

struct Fiber {
  ucontext_t context;
  void *stack = nullptr; // mmap'ed, lowest page a guard
  dim3 thread_idx;
  int linear_id = 0;
  FiberState state = FiberState::Ready;
  std::vector<PendingCopy> uncommitted;
  std::vector<std::vector<PendingCopy>> committed; // oldest group first
};

struct WarpRendezvous {
  const char *operation = nullptr; // the collective the arrived lanes wait in
  int arrived = 0;
  alignas(16) unsigned char in[kWarpSize][kCollectiveBytes];
  alignas(16) unsigned char out[kWarpSize][kCollectiveBytes];
};

struct Block {
  dim3 block_idx, block_dim, grid_dim;
  std::vector<Fiber> fibers;
  std::vector<WarpRendezvous> warps;
  int at_barrier = 0;
  const char *barrier_file = nullptr;
  int barrier_line = 0;
  unsigned char *dynamic_smem = nullptr; // ends right before a guard page (SmemArena)
  size_t dynamic_smem_bytes = 0;         // requested size rounded up to 128
  ucontext_t scheduler;
  Fiber *current = nullptr;
  std::function<void()> body;
};

struct Global {
  Block *block = nullptr;
  Stats stats;
  uint64_t seed = 0;
  bool seed_from_env_read = false;
};

inline Global &global() {
  static Global g;
  return g;
}

inline Block &block() {
  Block *b = global().block;
  if (!b)
    fail("a device function ran outside a kernel launch");
  return *b;
}

inline Fiber &self() { return *block().current; }

inline std::string block_name(const Block &b) {
  return "block (" + std::to_string(b.block_idx.x) + "," + std::to_string(b.block_idx.y) + "," +
         std::to_string(b.block_idx.z) + ")";
}

// Hands control back to the scheduler; returns when the scheduler resumes this fiber.
inline void yield_to_scheduler() {
  Block &b = block();
  Fiber &f = *b.current;
  ++global().stats.context_switches;
  swapcontext(&f.context, &b.scheduler);
}

inline void fiber_entry() {
  Block &b = block();
  b.body();
  b.current->state = FiberState::Done;
  // Returning resumes uc_link, the scheduler.
}

inline void *allocate_stack() {
  long page = sysconf(_SC_PAGESIZE);
  void *memory = mmap(nullptr, kFiberStackBytes + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    fail("cannot allocate a fiber stack");
  // A stack overflow then faults instead of silently corrupting the neighbouring fiber.
  mprotect(memory, page, PROT_NONE);
  return memory;
}

inline void free_stack(void *memory) {
  munmap(memory, kFiberStackBytes + static_cast<size_t>(sysconf(_SC_PAGESIZE)));
}

inline uint64_t schedule_seed() {
  Global &g = global();
  if (!g.seed_from_env_read) {
    g.seed_from_env_read = true;
    if (const char *env = std::getenv("TPU_EMU_SEED"))
      g.seed = std::strtoull(env, nullptr, 10);
  }
  return g.seed;
}

// Dynamic shared memory placed so that it ends right before an inaccessible page: a kernel that
// uses more than it asked for at launch faults there, and the SIGSEGV handler turns that into one
// line (instead of silently overwriting the host heap).
struct SmemArena {
  unsigned char *mapping = nullptr, *guard = nullptr;
  size_t mapped = 0;
  struct sigaction previous {};

  static SmemArena *&active() {
    static SmemArena *arena = nullptr;
    return arena;
  }

  static void on_fault(int signal, siginfo_t *info, void *) {
    SmemArena *arena = active();
    auto *address = static_cast<unsigned char *>(info->si_addr);
    long page = sysconf(_SC_PAGESIZE);
    if (arena && address >= arena->guard && address < arena->guard + page) {
      static const char message[] =
          "tpu_emu: access beyond the dynamic shared memory the launch requested\n";
      ssize_t ignored = write(2, message, sizeof message - 1);
      (void)ignored;
      _exit(1);
    }
    // Any other fault: the default action (a crash with a core dump where enabled).
    signal_default(signal);
  }

  static void signal_default(int signal) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigaction(signal, &action, nullptr);
  }

  // Returns the 128-byte aligned start of `bytes` (rounded up to 128) of shared memory.
  unsigned char *allocate(size_t bytes, size_t &rounded) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    rounded = (bytes + 127) / 128 * 128;
    size_t usable = (rounded + page - 1) / page * page;
    mapped = usable + page;
    void *memory =
        mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
      fail("cannot allocate shared memory");
    mapping = static_cast<unsigned char *>(memory);
    guard = mapping + usable;
    mprotect(guard, page, PROT_NONE);
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, &previous);
    active() = this;
    return guard - rounded;
  }

  ~SmemArena() {
    if (!mapping)
      return;
    sigaction(SIGSEGV, &previous, nullptr);
    active() = nullptr;
    munmap(mapping, mapped);
  }
};

// Points the fiber at the start of the kernel on its own stack. Kept out of launch's loops:
// getcontext returns like setjmp, which would make the loop variables "clobbered".
inline void start_fiber(Fiber &f, ucontext_t &scheduler) {
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = static_cast<char *>(f.stack) + sysconf(_SC_PAGESIZE);
  f.context.uc_stack.ss_size = kFiberStackBytes;
  f.context.uc_link = &scheduler;
  makecontext(&f.context, fiber_entry, 0);
}

// Explains why no fiber can run and exits.
[[noreturn]] inline void report_deadlock(const Block &b) {
  int at_barrier = 0, at_collective = 0, done = 0;
  const char *collective = nullptr;
  for (const Fiber &f : b.fibers) {
    at_barrier += f.state == FiberState::AtBarrier;
    done += f.state == FiberState::Done;
    if (f.state == FiberState::AtCollective) {
      ++at_collective;
      collective = b.warps[f.linear_id / kWarpSize].operation;
    }
  }
  std::string message = "deadlock in " + block_name(b) + ": " + std::to_string(at_barrier) +
                        " threads wait at __syncthreads";
  if (at_barrier)
    message += " (" + std::string(b.barrier_file) + ":" + std::to_string(b.barrier_line) + ")";
  message += ", " + std::to_string(at_collective) + " at a warp collective";
  if (collective)
    message += " (" + std::string(collective) + ")";
  message += ", " + std::to_string(done) + " exited; a barrier or collective in divergent code?";
  fail(message);
}

// Runs every thread of the current block to completion.
inline void run_block(Block &b) {
  std::mt19937_64 random(schedule_seed() * 0x9E3779B97F4A7C15ull + b.block_idx.x * 7919u +
                         b.block_idx.y * 104729u + b.block_idx.z * 1299709u);
  bool reverse_order = schedule_seed() == 0;
  std::vector<int> ready;
  for (;;) {
    ready.clear();
    bool all_done = true;
    for (const Fiber &f : b.fibers) {
      if (f.state == FiberState::Ready)
        ready.push_back(f.linear_id);
      all_done = all_done && f.state == FiberState::Done;
    }
    if (all_done)
      return;
    if (ready.empty())
      report_deadlock(b);
    // Warp by warp: the first warp of a round runs all its lanes to their next synchronisation
    // point before any other warp moves, so reading another warp's shared-memory data without a
    // barrier always finds it missing (a fully random interleaving misses that about half the
    // time). Lanes within a warp are shuffled too, to expose missing __syncwarp.
    if (reverse_order) {
      std::reverse(ready.begin(), ready.end());
    } else {
      std::vector<int> warp_order(b.warps.size());
      for (size_t w = 0; w < warp_order.size(); ++w)
        warp_order[w] = static_cast<int>(w);
      std::shuffle(warp_order.begin(), warp_order.end(), random);
      std::vector<int> rank(b.warps.size());
      for (size_t position = 0; position < warp_order.size(); ++position)
        rank[warp_order[position]] = static_cast<int>(position);
      std::shuffle(ready.begin(), ready.end(), random);
      std::stable_sort(ready.begin(), ready.end(),
                       [&](int x, int y) { return rank[x / kWarpSize] < rank[y / kWarpSize]; });
    }
    for (int id : ready) {
      Fiber &f = b.fibers[id];
      if (f.state != FiberState::Ready) // released or blocked by an earlier fiber of this round
        continue;
      b.current = &f;
      swapcontext(&b.scheduler, &f.context);
      b.current = nullptr;
    }
  }
}

} // namespace detail

inline Stats &stats() { return detail::global().stats; }
inline void reset_stats() { detail::global().stats = Stats{}; }
// Scheduling order of the fibers: 0 runs the highest thread index first, any other value a
// pseudo-random order of the warps, and of the lanes within each warp, drawn from it. The
// environment variable TPU_EMU_SEED sets the initial value.
inline void set_schedule_seed(uint64_t seed) {
  detail::global().seed_from_env_read = true;
  detail::global().seed = seed;
}

inline unsigned char *dynamic_smem() { return detail::block().dynamic_smem; }

inline void syncthreads(const char *file, int line) {
  using namespace detail;
  Block &b = block();
  Fiber &f = *b.current;
  if (b.at_barrier == 0) {
    b.barrier_file = file;
    b.barrier_line = line;
  } else if (b.barrier_line != line || std::strcmp(b.barrier_file, file) != 0) {
    fail("divergent __syncthreads in " + block_name(b) + ": thread " + std::to_string(f.linear_id) +
         " at " + file + ":" + std::to_string(line) + ", others at " + b.barrier_file + ":" +
         std::to_string(b.barrier_line));
  }
  if (++b.at_barrier < static_cast<int>(b.fibers.size())) {
    f.state = FiberState::AtBarrier;
    yield_to_scheduler();
    return;
  }
  // The last thread to arrive releases the others and carries on.
  b.at_barrier = 0;
  ++global().stats.barriers;
  for (Fiber &other : b.fibers)
    if (other.state == FiberState::AtBarrier)
      other.state = FiberState::Ready;
}

// A warp-wide operation: every lane contributes `in`; once all 32 lanes of the warp have
// arrived, the last one calls compute(ins, outs) for the whole warp; every lane gets its `out`.
// `operation` names the collective (a string literal) so that lanes in different collectives are
// reported instead of being paired up.
template <class Out, class In, class Compute>
Out warp_collective(const char *operation, const In &in, Compute compute) {
  using namespace detail;
  static_assert(sizeof(In) <= kCollectiveBytes && sizeof(Out) <= kCollectiveBytes,
                "collective payload too large");
  Block &b = block();
  Fiber &f = *b.current;
  int warp = f.linear_id / kWarpSize, lane = f.linear_id % kWarpSize;
  if ((warp + 1) * kWarpSize > static_cast<int>(b.fibers.size()))
    fail(std::string(operation) + " in a partial warp (block size " +
         std::to_string(b.fibers.size()) + " is not a multiple of 32)");
  WarpRendezvous &w = b.warps[warp];
  if (w.arrived == 0) {
    w.operation = operation;
  } else if (std::strcmp(w.operation, operation) != 0) {
    fail("divergent warp in " + block_name(b) + ": lane " + std::to_string(lane) + " of warp " +
         std::to_string(warp) + " reached " + operation + " while other lanes wait in " +
         w.operation);
  }
  std::memcpy(w.in[lane], &in, sizeof(In));
  if (++w.arrived < kWarpSize) {
    f.state = FiberState::AtCollective;
    yield_to_scheduler();
  } else {
    In ins[kWarpSize];
    Out outs[kWarpSize];
    for (int l = 0; l < kWarpSize; ++l)
      std::memcpy(&ins[l], w.in[l], sizeof(In));
    compute(ins, outs);
    for (int l = 0; l < kWarpSize; ++l)
      std::memcpy(w.out[l], &outs[l], sizeof(Out));
    w.arrived = 0;
    for (int l = 0; l < kWarpSize; ++l) {
      Fiber &other = b.fibers[warp * kWarpSize + l];
      if (other.state == FiberState::AtCollective)
        other.state = FiberState::Ready;
    }
  }
  Out out;
  std::memcpy(&out, w.out[lane], sizeof(Out));
  return out;
}

namespace detail {
inline void check_full_mask(unsigned mask, const char *operation) {
  if (mask != 0xffffffffu)
    fail(std::string(operation) + " with mask " + std::to_string(mask) +
         ": only full-warp masks are emulated");
}

inline float bf16_bits_to_float(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}
} // namespace detail

inline void syncwarp(unsigned mask) {
  detail::check_full_mask(mask, "__syncwarp");
  struct Empty {};
  warp_collective<Empty>("__syncwarp", Empty{}, [](const Empty *, Empty *) {});
}

// __shfl_xor_sync: lane l receives the value of lane l ^ lane_mask (within groups of `width`).
template <class T> T shfl_xor(unsigned mask, T value, int lane_mask, int width) {
  detail::check_full_mask(mask, "__shfl_xor_sync");
  struct In {
    T value;
    int lane_mask, width;
  };
  return warp_collective<T>("__shfl_xor_sync", In{value, lane_mask, width},
                            [](const In *ins, T *outs) {
                              for (int l = 0; l < detail::kWarpSize; ++l) {
                                int source = l ^ ins[l].lane_mask;
                                // Sources outside the lane's group of `width` return its own value.
                                if (source / ins[l].width != l / ins[l].width)
                                  source = l;
                                outs[l] = ins[source].value;
                              }
                            });
}

// __shfl_sync: lane l receives the value of lane src_lane.
template <class T> T shfl(unsigned mask, T value, int src_lane) {
  detail::check_full_mask(mask, "__shfl_sync");
  struct In {
    T value;
    int source;
  };
  return warp_collective<T>("__shfl_sync", In{value, src_lane}, [](const In *ins, T *outs) {
    for (int l = 0; l < detail::kWarpSize; ++l)
      outs[l] = ins[ins[l].source & (detail::kWarpSize - 1)].value;
  });
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d = a * b + d per warp. Fragment layout
// (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"), g = lane / 4,
// t = lane % 4, each 32-bit register holds two bf16, the lower column/row index in the low half:
//   A (16x16): a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]
//   B (16x8):  b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]
//   C (16x8):  c0,c1 = C[g][2t..2t+1], c2,c3 = C[g+8][2t..2t+1]
inline void mma_m16n8k16_bf16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
  struct In {
    uint32_t a[4], b[2];
    float c[4];
  };
  struct Out {
    float d[4];
  };
  In in;
  std::memcpy(in.a, a, sizeof in.a);
  std::memcpy(in.b, b, sizeof in.b);
  std::memcpy(in.c, d, sizeof in.c);
  Out out = warp_collective<Out>("mma.m16n8k16", in, [](const In *ins, Out *outs) {
    ++stats().mma;
    float A[16][16], B[16][8], C[16][8];
    for (int lane = 0; lane < detail::kWarpSize; ++lane) {
      int g = lane / 4, t = lane % 4;
      for (int half = 0; half < 2; ++half) {
        auto a_half = [&](int reg) {
          return detail::bf16_bits_to_float(static_cast<uint16_t>(ins[lane].a[reg] >> 16 * half));
        };
        auto b_half = [&](int reg) {
          return detail::bf16_bits_to_float(static_cast<uint16_t>(ins[lane].b[reg] >> 16 * half));
        };
        A[g][2 * t + half] = a_half(0);
        A[g + 8][2 * t + half] = a_half(1);
        A[g][2 * t + 8 + half] = a_half(2);
        A[g + 8][2 * t + 8 + half] = a_half(3);
        B[2 * t + half][g] = b_half(0);
        B[2 * t + 8 + half][g] = b_half(1);
        C[g][2 * t + half] = ins[lane].c[half];
        C[g + 8][2 * t + half] = ins[lane].c[2 + half];
      }
    }
    for (int lane = 0; lane < detail::kWarpSize; ++lane) {
      int g = lane / 4, t = lane % 4;
      for (int reg = 0; reg < 4; ++reg) {
        int row = g + 8 * (reg / 2), col = 2 * t + reg % 2;
        float sum = C[row][col];
        for (int k = 0; k < 16; ++k)
          sum += A[row][k] * B[k][col];
        outs[lane].d[reg] = sum;
      }
    }
  });
  std::memcpy(d, out.d, sizeof out.d);
}

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lanes 8j..8j+7 give the addresses of
// the 8 rows (16 bytes each) of matrix j; register j of lane l receives M_j[l/4][2(l%4)..+1]
// (.trans: M_j[2(l%4)..+1][l/4]), the lower index in the low half.
inline void ldmatrix(uint32_t *regs, int matrices, bool transpose, const void *row_address) {
  struct In {
    const unsigned char *row;
    int matrices;
    bool transpose;
  };
  struct Out {
    uint32_t regs[4];
  };
  In in{static_cast<const unsigned char *>(row_address), matrices, transpose};
  Out out = warp_collective<Out>("ldmatrix", in, [](const In *ins, Out *outs) {
    ++stats().ldmatrix;
    int matrices = ins[0].matrices;
    bool transpose = ins[0].transpose;
    for (int l = 1; l < detail::kWarpSize; ++l)
      if (ins[l].matrices != matrices || ins[l].transpose != transpose)
        detail::fail("ldmatrix lanes disagree on the shape");
    // Only the lanes that give row addresses (8 per matrix) need valid ones.
    for (int l = 0; l < 8 * matrices; ++l)
      if (reinterpret_cast<uintptr_t>(ins[l].row) % 16 != 0)
        detail::fail("ldmatrix row address of lane " + std::to_string(l) + " not 16-byte aligned");
    for (int j = 0; j < matrices; ++j) {
      // One phase: the 8 rows of matrix j. Count distinct words per bank.
      ++stats().ldmatrix_phases;
      std::vector<uintptr_t> words_in_bank[32];
      for (int r = 0; r < 8; ++r)
        for (int w = 0; w < 4; ++w) {
          uintptr_t word = reinterpret_cast<uintptr_t>(ins[8 * j + r].row) / 4 + w;
          auto &bank = words_in_bank[word % 32];
          if (std::find(bank.begin(), bank.end(), word) == bank.end())
            bank.push_back(word);
        }
      size_t wavefronts = 1;
      for (auto &bank : words_in_bank)
        wavefronts = std::max(wavefronts, bank.size());
      stats().ldmatrix_bank_conflicts += wavefronts - 1;
      auto element = [&](int row, int col) {
        uint16_t value;
        std::memcpy(&value, ins[8 * j + row].row + 2 * col, sizeof value);
        return static_cast<uint32_t>(value);
      };
      for (int l = 0; l < detail::kWarpSize; ++l) {
        int q = l / 4, p = 2 * (l % 4);
        uint32_t low = transpose ? element(p, q) : element(q, p);
        uint32_t high = transpose ? element(p + 1, q) : element(q, p + 1);
        outs[l].regs[j] = low | high << 16;
      }
    }
  });
  std::memcpy(regs, out.regs, sizeof(uint32_t) * matrices);
}

// cp.async.{ca,cg}.shared.global [dst], [src], cp_size, src_size: the source bytes are read now,
// the destination written only when the thread waits for the commit group (zero-filled beyond
// src_size).
inline void cp_async(void *dst, const void *src, int cp_size, int src_size) {
  if (reinterpret_cast<uintptr_t>(dst) % cp_size != 0 ||
      (src_size > 0 && reinterpret_cast<uintptr_t>(src) % cp_size != 0))
    detail::fail("cp.async address not aligned to its size " + std::to_string(cp_size));
  if (src_size < 0 || src_size > cp_size)
    detail::fail("cp.async src_size out of range");
  detail::PendingCopy copy{dst, std::vector<unsigned char>(cp_size, 0)};
  if (src_size > 0)
    std::memcpy(copy.bytes.data(), src, src_size);
  stats().cp_async_bytes += cp_size;
  detail::self().uncommitted.push_back(std::move(copy));
}

inline void cp_async_commit() {
  detail::Fiber &f = detail::self();
  f.committed.push_back(std::move(f.uncommitted));
  f.uncommitted.clear();
}

// cp.async.wait_group n: completes the thread's committed groups until at most n are pending.
inline void cp_async_wait(int pending) {
  detail::Fiber &f = detail::self();
  while (static_cast<int>(f.committed.size()) > pending) {
    for (const detail::PendingCopy &copy : f.committed.front())
      std::memcpy(copy.dst, copy.bytes.data(), copy.bytes.size());
    f.committed.erase(f.committed.begin());
  }
}

// Runs kernel(args...) for every block of `grid`, each with `block` threads and `smem_bytes` of
// dynamic shared memory (filled with 0xFF bytes, a NaN in bf16 and fp32).
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block_dim, size_t smem_bytes,
            Args &&...args) {
  using namespace detail;
  size_t threads = static_cast<size_t>(block_dim.x) * block_dim.y * block_dim.z;
  if (threads == 0 || threads > static_cast<size_t>(kMaxThreadsPerBlock))
    fail("launch with " + std::to_string(threads) + " threads per block (1..1024)");
  if (smem_bytes > kMaxDynamicSmem)
    fail("launch with " + std::to_string(smem_bytes) + " bytes of dynamic shared memory (max " +
         std::to_string(kMaxDynamicSmem) + ")");
  if (global().block)
    fail("kernel launched from device code");
  ++stats().launches;
  // Parameters are copied as for a real launch: the kernel sees its own values.
  std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  Block b;
  b.block_dim = block_dim;
  b.grid_dim = grid;
  b.fibers.resize(threads);
  b.warps.resize((threads + kWarpSize - 1) / kWarpSize);
  for (Fiber &f : b.fibers)
    f.stack = allocate_stack();
  b.body = [&] { std::apply(kernel, params); };
  SmemArena arena;
  b.dynamic_smem = arena.allocate(smem_bytes, b.dynamic_smem_bytes);
  global().block = &b;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        b.block_idx = dim3(x, y, z);
        std::memset(b.dynamic_smem, 0xFF, b.dynamic_smem_bytes);
        b.at_barrier = 0;
        for (size_t i = 0; i < threads; ++i) {
          Fiber &f = b.fibers[i];
          unsigned id = static_cast<unsigned>(i);
          f.linear_id = static_cast<int>(i);
          f.thread_idx = dim3(id % block_dim.x, id / block_dim.x % block_dim.y,
                              id / (block_dim.x * block_dim.y));
          f.state = FiberState::Ready;
          f.uncommitted.clear();
          f.committed.clear();
          start_fiber(f, b.scheduler);
        }
        for (WarpRendezvous &w : b.warps)
          w.arrived = 0;
        ++stats().blocks;
        run_block(b);
      }
  global().block = nullptr;
  for (Fiber &f : b.fibers)
    free_stack(f.stack);
}

inline const dim3 &thread_idx() { return detail::self().thread_idx; }
inline const dim3 &block_idx() { return detail::block().block_idx; }
inline const dim3 &block_dim() { return detail::block().block_dim; }
inline const dim3 &grid_dim() { return detail::block().grid_dim; }

} // namespace tpu_emu

#define threadIdx (::tpu_emu::thread_idx())
#define blockIdx (::tpu_emu::block_idx())
#define blockDim (::tpu_emu::block_dim())
#define gridDim (::tpu_emu::grid_dim())

template <class T> T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  return ::tpu_emu::shfl_xor(mask, value, lane_mask, width);
}
template <class T> T __shfl_sync(unsigned mask, T value, int src_lane) {
  return ::tpu_emu::shfl(mask, value, src_lane);
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::tpu_emu::syncwarp(mask); }

// Fast-math intrinsics of row kernels: exact host functions (the device versions are
// approximations within a few ulp).
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float x, float y) { return x / y; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

// ---- Runtime API: device memory is host memory, work is synchronous. ----

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaMalloc(void **pointer, size_t bytes) {
  // 256-byte alignment, as cudaMalloc guarantees; the size is rounded up for aligned_alloc.
  *pointer = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}
template <class T> cudaError_t cudaMalloc(T **pointer, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void **>(pointer), bytes);
}
inline cudaError_t cudaFree(void *pointer) {
  std::free(pointer);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void *dst, int value, size_t bytes) {
  std::memset(dst, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
inline const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  }
  return "unknown error";
}
template <class Kernel> cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) {
  return cudaSuccess;
}

struct CUevent_st {
  std::chrono::steady_clock::time_point time;
};
using cudaEvent_t = CUevent_st *;
inline cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = new CUevent_st{};
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, int stream = 0) {
  (void)stream;
  event->time = std::chrono::steady_clock::now();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
// Host time between the two records: the emulator's speed, not a GPU's.
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}
