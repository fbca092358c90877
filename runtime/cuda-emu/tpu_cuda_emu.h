// Host emulation of the CUDA subset that generated GPU code uses (docs/gpu.md).
//
// Including this header instead of the CUDA headers lets a generated .cu file, or the device
// library tpu_cuda.cuh with TPU_CUDA_EMULATE defined, compile with a plain C++17 compiler and run
// on the CPU. Blocks run one after another; the threads of a block run as cooperative fibers
// (Boost.Context: a switch is a few nanoseconds, no system call) that switch only at
// synchronisation points:
//   - __syncthreads: every thread of the block must arrive at the same barrier (same file:line);
//   - warp collectives (mma, ldmatrix, shuffles, __syncwarp): all 32 lanes of the warp must
//     arrive at the same operation; the last lane to arrive computes the result of every lane
//     from the per-lane inputs, using the PTX ISA fragment layouts;
//   - warpgroup collectives (wgmma and wgmma.fence, sm_90a): the same over 128 threads;
//   - mbarrier waits that find the phase incomplete.
// Everything between two synchronisation points of a thread runs at once, so the emulator is
// deliberately hostile to racy code: fibers are picked in a seeded order, warp by warp (seed 0:
// highest thread first, otherwise warps and lanes shuffled), dynamic shared memory is filled with
// NaN bytes at every block start, and cp.async copies stay pending until the issuing thread waits
// for their group; TMA copies land only when their mbarrier is tested, wgmma results only at
// wgmma.wait_group. A missing barrier or wait therefore yields wrong numbers instead of passing by
// luck. A deadlock (threads waiting at a barrier or collective that others never reach) is
// reported as one line on stderr and exit status 1, as are misaligned or oversized operations and
// accesses past the end of the dynamic shared memory (which ends at a guard page).
//
// Not thread-safe: launches must come from one host thread. Not emulated: atomics, streams,
// clusters, memory-model subtleties beyond "visible after wait + barrier", timing.
#pragma once

#include <algorithm>
#include <array>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
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
#include <unistd.h>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
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
// Warpgroup-level operations (wgmma) gather the 128 threads of 4 consecutive warps.
constexpr int kWarpgroupSize = 128;
constexpr size_t kFiberStackBytes = 256 * 1024;

enum class FiberState { Ready, AtBarrier, AtCollective, Done };

struct PendingCopy {
  void *dst;
  std::vector<unsigned char> bytes; // read from the source when the copy was issued
};

struct Fiber {
  boost::context::fiber context;       // this thread, where it stopped
  boost::context::fiber scheduler;     // run_block, where it resumed this thread
  boost::context::stack_context stack; // allocated per launch, reused by every block
  dim3 thread_idx;
  int linear_id = 0;
  FiberState state = FiberState::Ready;
  std::vector<PendingCopy> uncommitted;
  std::vector<std::vector<PendingCopy>> committed; // oldest group first
  // wgmma results not yet visible in the accumulator registers, by commit group (the open group
  // last): each the registers d[0..] of one wgmma and the values they get.
  std::vector<std::vector<std::pair<float *, std::vector<float>>>> wgmma_groups;
};

// Where the members of a warp (32) or warpgroup (128) meet for a collective operation.
struct Rendezvous {
  const char *operation = nullptr; // the collective the arrived members wait in
  int arrived = 0;
  std::vector<unsigned char> in, out; // member-major, sizeof(In) / sizeof(Out) bytes each
};

// An mbarrier object (PTX ISA "Parallel Synchronization and Communication Instructions:
// mbarrier"): a phase completes when its pending arrivals and its transaction count both reach
// zero; then the phase number advances and the arrival count is reset.
struct MBarrier {
  int expected = 0, pending = 0;
  int64_t tx = 0;
  uint32_t phase = 0;
  // Bulk tensor copies that signal this barrier, written to shared memory (and counted off tx)
  // only when some thread tests the barrier: data read without waiting is still missing.
  std::vector<PendingCopy> transfers;
  int64_t failed_waits = 0; // since the last phase completed: a hang is reported, not spun
};

struct Block {
  dim3 block_idx, block_dim, grid_dim;
  std::vector<Fiber> fibers;
  std::vector<Rendezvous> warps, warpgroups;
  std::vector<std::pair<uint32_t, MBarrier>> mbarriers; // by shared address; reset per block
  int at_barrier = 0;
  const char *barrier_file = nullptr;
  int barrier_line = 0;
  unsigned char *dynamic_smem = nullptr; // ends right before a guard page (SmemArena)
  size_t dynamic_smem_bytes = 0;         // requested size rounded up to 128
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
  f.scheduler = std::move(f.scheduler).resume();
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

// Fiber stacks have a guard page at their low end, so an overflow faults instead of silently
// corrupting the neighbouring fiber's stack. Mapping them costs system calls, more than a small
// block's work, so a launch maps one per thread and every block's fibers run on them again.
using StackAllocator = boost::context::protected_fixedsize_stack;

struct ReusedStack {
  boost::context::stack_context stack;
  boost::context::stack_context allocate() { return stack; }
  void deallocate(boost::context::stack_context &) {}
};

// Points the fiber at the start of the kernel, on its stack.
inline void start_fiber(Fiber &f) {
  f.context = boost::context::fiber(std::allocator_arg, ReusedStack{f.stack},
                                    [&f](boost::context::fiber &&scheduler) {
                                      f.scheduler = std::move(scheduler);
                                      block().body();
                                      f.state = FiberState::Done;
                                      return std::move(f.scheduler);
                                    });
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
      if (!collective && f.linear_id / kWarpgroupSize < static_cast<int>(b.warpgroups.size()))
        collective = b.warpgroups[f.linear_id / kWarpgroupSize].operation;
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
      f.context = std::move(f.context).resume();
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

// A group-wide operation over the Group threads of a warp (32) or warpgroup (128): every member
// contributes `in`; once all have arrived, the last one calls compute(ins, outs) for the whole
// group; every member gets its `out`. `operation` names the collective (a string literal) so that
// members in different collectives are reported instead of being paired up.
template <int Group, class Out, class In, class Compute>
Out group_collective(const char *operation, const In &in, Compute compute) {
  using namespace detail;
  static_assert(Group == kWarpSize || Group == kWarpgroupSize, "a warp or a warpgroup");
  Block &b = block();
  Fiber &f = *b.current;
  int group = f.linear_id / Group, member = f.linear_id % Group;
  if ((group + 1) * Group > static_cast<int>(b.fibers.size()))
    fail(std::string(operation) + " in a partial " + (Group == kWarpSize ? "warp" : "warpgroup") +
         " (block size " + std::to_string(b.fibers.size()) + " is not a multiple of " +
         std::to_string(Group) + ")");
  Rendezvous &w = (Group == kWarpSize ? b.warps : b.warpgroups)[group];
  if (w.arrived == 0) {
    w.operation = operation;
    w.in.resize(Group * sizeof(In));
    w.out.resize(Group * sizeof(Out));
  } else if (std::strcmp(w.operation, operation) != 0) {
    fail("divergent " + std::string(Group == kWarpSize ? "warp" : "warpgroup") + " in " +
         block_name(b) + ": thread " + std::to_string(member) + " of " +
         (Group == kWarpSize ? "warp " : "warpgroup ") + std::to_string(group) + " reached " +
         operation + " while others wait in " + w.operation);
  }
  std::memcpy(w.in.data() + member * sizeof(In), &in, sizeof(In));
  if (++w.arrived < Group) {
    f.state = FiberState::AtCollective;
    yield_to_scheduler();
  } else {
    std::vector<In> ins(Group);
    std::vector<Out> outs(Group);
    std::memcpy(static_cast<void *>(ins.data()), w.in.data(), Group * sizeof(In));
    compute(ins.data(), outs.data());
    std::memcpy(w.out.data(), static_cast<const void *>(outs.data()), Group * sizeof(Out));
    w.arrived = 0;
    w.operation = nullptr;
    for (int l = 0; l < Group; ++l) {
      Fiber &other = b.fibers[group * Group + l];
      if (other.state == FiberState::AtCollective)
        other.state = FiberState::Ready;
    }
  }
  Out out;
  std::memcpy(static_cast<void *>(&out), w.out.data() + member * sizeof(Out), sizeof(Out));
  return out;
}

// A warp-wide collective (the lanes of one warp).
template <class Out, class In, class Compute>
Out warp_collective(const char *operation, const In &in, Compute compute) {
  return group_collective<detail::kWarpSize, Out>(operation, in, compute);
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

// ---- Hopper (sm_90a): shared-memory addresses, swizzle, wgmma, mbarrier, TMA ----

// The 32-bit shared-window address of a byte of the block's dynamic shared memory (what
// cvta.to.shared gives on a GPU). The window's origin lies 256 KiB before the end of the
// dynamic shared memory, which ends on a page boundary: addresses keep the host address's low 12
// bits, so swizzle patterns (functions of address bits 4..9) are the same on either.
constexpr uint32_t kSharedWindowBytes = 1u << 18;
inline uint32_t shared_address(const void *pointer) {
  detail::Block &b = detail::block();
  auto *p = static_cast<const unsigned char *>(pointer);
  if (p < b.dynamic_smem || p >= b.dynamic_smem + b.dynamic_smem_bytes)
    detail::fail("shared-window address of a pointer outside the dynamic shared memory");
  return static_cast<uint32_t>(p - (b.dynamic_smem + b.dynamic_smem_bytes - kSharedWindowBytes));
}
inline unsigned char *shared_pointer(uint32_t address, size_t bytes) {
  detail::Block &b = detail::block();
  uint32_t first = kSharedWindowBytes - static_cast<uint32_t>(b.dynamic_smem_bytes);
  if (address < first || address + bytes > kSharedWindowBytes)
    detail::fail("shared address " + std::to_string(address) +
                 " outside the dynamic shared memory");
  return b.dynamic_smem + (address - first);
}

// The swizzle of TMA and wgmma (PTX ISA "Shared memory matrix layout", the 32/64/128-byte swizzle
// modes; CUDA driver API CUtensorMapSwizzle): within every span of 8 x `width` bytes, the 16-byte
// chunk index (address bits 4..) is XOR-ed with the 128-byte row index (bits 7..), both taken
// modulo width / 16. width 0 or 16: no swizzle.
inline uint32_t swizzle(uint32_t address, int width) {
  if (width <= 16)
    return address;
  uint32_t mask = static_cast<uint32_t>(width / 16 - 1);
  return address ^ (((address >> 7) & mask) << 4);
}

// A wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"), decoded:
// bits 0-13 start address >> 4, 16-29 leading dimension byte offset >> 4, 32-45 stride
// dimension byte offset >> 4, 49-51 matrix base offset, 62-63 swizzle (0 none, 1 128B, 2 64B,
// 3 32B).
struct MatrixDescriptor {
  uint32_t start, lbo, sbo, base_offset;
  int swizzle_width; // bytes: 0 (none), 32, 64, 128
  explicit MatrixDescriptor(uint64_t d)
      : start(static_cast<uint32_t>(d & 0x3fff) << 4),
        lbo(static_cast<uint32_t>(d >> 16 & 0x3fff) << 4),
        sbo(static_cast<uint32_t>(d >> 32 & 0x3fff) << 4),
        base_offset(static_cast<uint32_t>(d >> 49 & 7)),
        swizzle_width(std::array<int, 4>{0, 128, 64, 32}[d >> 62]) {}

  // Shared address of element (row, k) of a K-major bf16 operand (rows = M of A, N of B):
  // rows come in groups of 8 (core matrices) SBO bytes apart. Without swizzle a core matrix is
  // 8 rows of 16 bytes (128 contiguous bytes) and the next 8 k are LBO bytes further; with a
  // swizzle a row is `width` bytes of k (LBO unused: the 16 k of one instruction fit one row),
  // and the address goes through the swizzle.
  uint32_t k_major_address(int row, int k) const {
    if (base_offset != 0)
      detail::fail("wgmma descriptor with a matrix base offset: not emulated");
    if (swizzle_width == 0)
      return start + (row / 8) * sbo + (k / 8) * lbo + (row % 8) * 16 + (k % 8) * 2;
    return swizzle(start + (row / 8) * sbo + (row % 8) * swizzle_width + k * 2, swizzle_width);
  }
};

// Accumulator register `reg` of thread `thread` (0..127) of a warpgroup holds D[row][col] of an
// m64nNk16 wgmma (PTX ISA "Register Fragments: wgmma .m64nNk16", the D matrix figure): warp w of
// the warpgroup owns rows 16w..16w+15; within it, g = lane / 4, t = lane % 4,
//   d[4j + 0], d[4j + 1] = D[16w + g][8j + 2t], D[16w + g][8j + 2t + 1]
//   d[4j + 2], d[4j + 3] = D[16w + g + 8][8j + 2t], D[16w + g + 8][8j + 2t + 1].
inline std::pair<int, int> wgmma_accumulator_position(int thread, int reg) {
  int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * (reg / 2 % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

// Reads the bf16 at a shared address as a float.
inline float shared_bf16(uint32_t address) {
  uint16_t bits;
  std::memcpy(&bits, shared_pointer(address, 2), 2);
  return detail::bf16_bits_to_float(bits);
}

// wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, desc_a, desc_b, 1, 1, 1, 0, 0: both
// operands K-major in shared memory, D += A * B (scale-d 1). Asynchronous as on a GPU: the result
// is computed from shared memory now, but reaches the accumulator registers only when the thread
// waits for the group (wgmma_wait); until then the registers keep their old values.
constexpr int kMaxWgmmaN = 256;
inline void wgmma_m64nNk16_bf16(float *d, int n, uint64_t desc_a, uint64_t desc_b) {
  if (n % 8 != 0 || n < 8 || n > kMaxWgmmaN)
    detail::fail("wgmma with N = " + std::to_string(n));
  detail::Fiber &self = detail::self();
  if (self.wgmma_groups.empty())
    self.wgmma_groups.emplace_back();
  struct In {
    uint64_t desc_a, desc_b;
    int n;
    float c[kMaxWgmmaN / 2];
  };
  struct Out {
    float d[kMaxWgmmaN / 2];
  };
  In in{desc_a, desc_b, n, {}};
  // The accumulator as the chain of mma_async so far leaves it (in order on one accumulator).
  for (int r = 0; r < n / 2; ++r) {
    in.c[r] = d[r];
    for (const auto &group : self.wgmma_groups)
      for (const auto &[regs, values] : group)
        if (d + r >= regs && d + r < regs + values.size())
          in.c[r] = values[d + r - regs];
  }
  Out out = group_collective<detail::kWarpgroupSize, Out>(
      "wgmma.mma_async", in, [](const In *ins, Out *outs) {
        const int n = ins[0].n;
        for (int t = 1; t < detail::kWarpgroupSize; ++t)
          if (ins[t].n != n || ins[t].desc_a != ins[0].desc_a || ins[t].desc_b != ins[0].desc_b)
            detail::fail("wgmma: the threads of a warpgroup disagree on the shape or descriptors");
        MatrixDescriptor a(ins[0].desc_a), b(ins[0].desc_b);
        std::vector<float> A(64 * 16), B(static_cast<size_t>(n) * 16),
            D(64 * static_cast<size_t>(n));
        for (int row = 0; row < 64; ++row)
          for (int k = 0; k < 16; ++k)
            A[row * 16 + k] = shared_bf16(a.k_major_address(row, k));
        for (int col = 0; col < n; ++col)
          for (int k = 0; k < 16; ++k)
            B[col * 16 + k] = shared_bf16(b.k_major_address(col, k));
        for (int t = 0; t < detail::kWarpgroupSize; ++t)
          for (int r = 0; r < n / 2; ++r) {
            auto [row, col] = wgmma_accumulator_position(t, r);
            D[row * n + col] = ins[t].c[r];
          }
        for (int t = 0; t < detail::kWarpgroupSize; ++t)
          for (int r = 0; r < n / 2; ++r) {
            auto [row, col] = wgmma_accumulator_position(t, r);
            float sum = D[row * n + col];
            for (int k = 0; k < 16; ++k)
              sum += A[row * 16 + k] * B[col * 16 + k];
            outs[t].d[r] = sum;
          }
      });
  self.wgmma_groups.back().emplace_back(d, std::vector<float>(out.d, out.d + n / 2));
}

// wgmma.fence: orders register accesses before the following wgmma (nothing to model here, but
// every thread of the warpgroup must reach it together).
inline void wgmma_fence() {
  struct Empty {};
  group_collective<detail::kWarpgroupSize, Empty>("wgmma.fence", Empty{},
                                                  [](const Empty *, Empty *) {});
}

// wgmma.commit_group: closes the thread's current group of wgmma operations.
inline void wgmma_commit() { detail::self().wgmma_groups.emplace_back(); }

// wgmma.wait_group n: the results of all but the newest n committed groups land in the registers.
inline void wgmma_wait(int pending) {
  auto &groups = detail::self().wgmma_groups;
  // The last group is the open (uncommitted) one when it exists.
  int committed = static_cast<int>(groups.size()) - 1;
  for (; committed > pending; --committed) {
    for (const auto &[regs, values] : groups.front())
      std::copy(values.begin(), values.end(), regs);
    groups.erase(groups.begin());
  }
}

namespace detail {
inline MBarrier &mbarrier_at(uint32_t address, bool create = false) {
  Block &b = block();
  if (address % 8 != 0)
    fail("mbarrier not 8-byte aligned");
  for (auto &[at, barrier] : b.mbarriers)
    if (at == address)
      return barrier;
  if (!create)
    fail("mbarrier at shared address " + std::to_string(address) + " used before mbarrier.init");
  b.mbarriers.emplace_back(address, MBarrier{});
  return b.mbarriers.back().second;
}

inline void mbarrier_try_complete(MBarrier &barrier) {
  if (barrier.pending == 0 && barrier.tx == 0) {
    barrier.failed_waits = 0;
    ++barrier.phase;
    barrier.pending = barrier.expected;
  }
}
} // namespace detail

// mbarrier.init.shared::cta.b64 [bar], count.
inline void mbarrier_init(void *bar, int count) {
  shared_pointer(shared_address(bar), 8);
  detail::MBarrier &barrier = detail::mbarrier_at(shared_address(bar), true);
  barrier = detail::MBarrier{};
  barrier.expected = barrier.pending = count;
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], tx: adds tx to the transaction count, then
// arrives.
inline void mbarrier_arrive_expect_tx(void *bar, uint32_t tx) {
  detail::MBarrier &barrier = detail::mbarrier_at(shared_address(bar));
  if (barrier.pending == 0)
    detail::fail("mbarrier: more arrivals than its count");
  barrier.tx += tx;
  --barrier.pending;
  detail::mbarrier_try_complete(barrier);
}

// mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity: whether the phase with that parity
// has completed (the current phase's parity differs). Testing the barrier delivers the bulk copies
// that signal it; a thread that finds it incomplete yields to the others.
inline bool mbarrier_try_wait_parity(void *bar, uint32_t parity) {
  detail::MBarrier &barrier = detail::mbarrier_at(shared_address(bar));
  for (const detail::PendingCopy &copy : barrier.transfers) {
    std::memcpy(copy.dst, copy.bytes.data(), copy.bytes.size());
    barrier.tx -= static_cast<int64_t>(copy.bytes.size());
  }
  barrier.transfers.clear();
  detail::mbarrier_try_complete(barrier);
  if ((barrier.phase & 1) != (parity & 1))
    return true;
  if (++barrier.failed_waits > 100'000'000)
    detail::fail("mbarrier wait that never completes (missing arrival or transaction bytes)");
  detail::yield_to_scheduler();
  return false;
}

} // namespace tpu_emu

// ---- CUDA driver API: tensor maps (cuTensorMapEncodeTiled), as the tiled TMA loads read them ----

using CUresult = int;
constexpr CUresult CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1;
using cuuint32_t = uint32_t;
using cuuint64_t = uint64_t;
enum CUtensorMapDataType {
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
};
enum CUtensorMapInterleave { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum CUtensorMapSwizzle {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B,
  CU_TENSOR_MAP_SWIZZLE_64B,
  CU_TENSOR_MAP_SWIZZLE_128B
};
enum CUtensorMapL2promotion {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
};
enum CUtensorMapFloatOOBfill { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };

// What the driver encodes into its opaque 128-byte map, in the clear.
struct CUtensorMap {
  const unsigned char *global;
  uint32_t rank, element_bytes;
  uint64_t dims[5];
  uint64_t strides[5]; // bytes; strides[0] = element_bytes
  uint32_t box[5];
  int swizzle_width; // bytes: 0, 32, 64, 128
};

// The checks of the driver's documentation: rank 1..5, a 16-byte aligned address, strides
// multiples of 16 bytes, box extents 1..256, and with a swizzle the inner box extent at most the
// swizzle span.
inline CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                       void *global, const cuuint64_t *dims,
                                       const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *element_strides,
                                       CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                       CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  CUtensorMap m{};
  m.element_bytes = type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ? 2 : 4;
  m.rank = rank;
  m.global = static_cast<const unsigned char *>(global);
  m.swizzle_width = std::array<int, 4>{0, 32, 64, 128}[swizzle];
  if (rank < 1 || rank > 5 || reinterpret_cast<uintptr_t>(global) % 16 != 0 ||
      interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  m.strides[0] = m.element_bytes;
  for (uint32_t i = 0; i < rank; ++i) {
    m.dims[i] = dims[i];
    m.box[i] = box[i];
    if (i > 0)
      m.strides[i] = strides[i - 1];
    if (dims[i] == 0 || box[i] == 0 || box[i] > 256 || element_strides[i] != 1 ||
        (i > 0 && m.strides[i] % 16 != 0))
      return CUDA_ERROR_INVALID_VALUE;
  }
  if ((box[0] * m.element_bytes) % 16 != 0 ||
      (m.swizzle_width && box[0] * m.element_bytes > static_cast<uint32_t>(m.swizzle_width)))
    return CUDA_ERROR_INVALID_VALUE;
  *map = m;
  return CUDA_SUCCESS;
}

namespace tpu_emu {

// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [map, {c0,
// c1}], [bar]: the box at coordinates (c0, c1) (c0 innermost), elements outside the tensor
// zero-filled, written row after row (box[0] elements each) from dst through the map's swizzle;
// the bytes count off the barrier's transaction count when it is next tested.
inline void tma_load_2d(void *dst, const CUtensorMap *map, int c0, int c1, void *bar) {
  const CUtensorMap &m = *map;
  if (m.rank != 2)
    detail::fail("2-D tensor copy with a rank-" + std::to_string(m.rank) + " tensor map");
  uint32_t base = shared_address(dst);
  if (base % 128 != 0 || (m.swizzle_width && base % (8 * m.swizzle_width) != 0))
    detail::fail("tensor copy destination not aligned to its swizzle pattern");
  detail::MBarrier &barrier = detail::mbarrier_at(shared_address(bar));
  const uint32_t row_bytes = m.box[0] * m.element_bytes;
  for (uint32_t r = 0; r < m.box[1]; ++r)
    for (uint32_t chunk = 0; chunk < row_bytes / 16; ++chunk) {
      detail::PendingCopy copy{nullptr, std::vector<unsigned char>(16, 0)};
      for (uint32_t e = 0; e < 16 / m.element_bytes; ++e) {
        int64_t x = c0 + static_cast<int64_t>(chunk * 16 / m.element_bytes + e), y = c1 + r;
        if (x >= 0 && y >= 0 && static_cast<uint64_t>(x) < m.dims[0] &&
            static_cast<uint64_t>(y) < m.dims[1])
          std::memcpy(copy.bytes.data() + e * m.element_bytes,
                      m.global + y * m.strides[1] + x * m.element_bytes, m.element_bytes);
      }
      copy.dst = shared_pointer(swizzle(base + r * row_bytes + chunk * 16, m.swizzle_width), 16);
      barrier.transfers.push_back(std::move(copy));
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
  b.warpgroups.resize(threads / kWarpgroupSize);
  StackAllocator stacks(kFiberStackBytes);
  for (Fiber &f : b.fibers)
    f.stack = stacks.allocate();
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
          f.wgmma_groups.clear();
          start_fiber(f);
        }
        for (Rendezvous &w : b.warps)
          w.arrived = 0;
        for (Rendezvous &w : b.warpgroups)
          w.arrived = 0;
        b.mbarriers.clear();
        ++stats().blocks;
        run_block(b);
      }
  global().block = nullptr;
  for (Fiber &f : b.fibers)
    stacks.deallocate(f.stack);
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
// The driver entry points the generated code asks for (so that it needs no -lcuda): only
// cuTensorMapEncodeTiled.
using PFN_cuTensorMapEncodeTiled_v12000 = decltype(&cuTensorMapEncodeTiled);
enum cudaDriverEntryPointQueryResult {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1
};
constexpr unsigned long long cudaEnableDefault = 0;
inline cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **function,
                                                    unsigned int, unsigned long long,
                                                    cudaDriverEntryPointQueryResult *status) {
  bool found = std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
  *function = found ? reinterpret_cast<void *>(&cuTensorMapEncodeTiled) : nullptr;
  *status = found ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
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
