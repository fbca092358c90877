// The program bundle (.tpub): what the compiler writes and the simulator runs.
//
// Layout (little-endian):
//   BundleHeader (fixed size, see below)
//   instructions      num_instructions x 16 bytes
//   metadata          metadata_bytes of JSON: config, tensor map, source ops
//   constants         constant_bytes, placed in DRAM at constant_address
//   reference         reference_bytes (version 2): the fp32 values of the
//                     constants the image holds as bf16, for the output check
// A CUDA bundle holds the generated CUDA source in the constants section.
// The CRC-32 in the header covers every byte after the CRC field itself: the
// rest of the header and every section, so no single-bit error goes unnoticed.
// docs/bundle.md gives the byte layout.
#pragma once

#include "tpu/isa/HardwareConfig.h"
#include "tpu/isa/Isa.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpu {

constexpr char kBundleMagic[4] = {'T', 'P', 'U', 'B'};
constexpr uint32_t kBundleVersion = 2;
// Version 1 (no reference section, a 48-byte header) still loads.
constexpr uint32_t kOldestBundleVersion = 1;
// The header's CRC-32 field, and where the bytes it covers start.
constexpr size_t kBundleCrcOffset = 12;
constexpr size_t kBundleCrcCoverageStart = kBundleCrcOffset + 4;

// The element type the host sees for a tensor: the DRAM dtype's own, or
// int64 for an output the program stores as i32 words (ArgMax's indices,
// which ONNX gives as int64; the runtime widens them) and for an input the
// program reads as f32 (a training step's class labels; the runtime converts
// them, exact below 2^24).
enum class HostType : uint8_t { Stored, I64 };

struct TensorInfo {
  enum class Role { Input, Output };
  std::string name;
  std::vector<int64_t> shape;
  isa::DType dtype = isa::DType::F32;
  uint64_t dram_address = 0;
  Role role = Role::Input;
  // Outputs: the longest chain of reductions (sum of K over dependent matmuls)
  // from an input to this tensor; sets its comparison tolerance
  // (docs/numerics.md). Zero for inputs.
  uint64_t reduction_length = 0;
  HostType host_type = HostType::Stored;
  // Outputs: the next value of the input of the same name (a training step's
  // parameter or optimizer buffer), which the runtime keeps in DRAM from one
  // run to the next.
  bool state = false;

  uint64_t elements() const;
  uint64_t bytes() const { return elements() * isa::dtypeBytes(dtype); }
};

// A training step's origin (tpuc --train): the model it was built from and
// the inputs that start as that model's initializers of the same name (the
// other state inputs, optimizer buffers, start at zero).
struct TrainingInfo {
  std::string model_path;
  std::vector<std::string> parameters;
};

// One matrix product the matrix unit must compute: `batch` independent
// products of an m x k matrix (streamed through the array) and a k x n one
// (loaded as weight tiles).
struct GemmShape {
  uint64_t batch = 1, m = 0, k = 0, n = 0;
  bool operator==(const GemmShape &other) const {
    return batch == other.batch && m == other.m && k == other.k && n == other.n;
  }
};

// The work a source operation cannot do without, as the compiler counts it
// (docs/simulator.md#roofline): its matrix products, the elements its vector
// operations must produce (or, for a row reduction, read), of those the ones
// through a transcendental, and the DRAM bytes its instructions must move.
struct SourceWork {
  std::vector<GemmShape> gemms;
  uint64_t vector_elements = 0;
  uint64_t transcendental_elements = 0; // of vector_elements
  uint64_t dram_bytes = 0;
  bool operator==(const SourceWork &other) const {
    return gemms == other.gemms && vector_elements == other.vector_elements &&
           transcendental_elements == other.transcendental_elements &&
           dram_bytes == other.dram_bytes;
  }
};

// What the whole model must do: the bytes of its inputs, weights and outputs
// (each crosses DRAM once), and per entry of Bundle::source_ops its work.
struct CompulsoryWork {
  uint64_t dram_bytes = 0;
  std::vector<SourceWork> source_ops;
  bool operator==(const CompulsoryWork &other) const {
    return dram_bytes == other.dram_bytes && source_ops == other.source_ops;
  }
};

// A constant the DRAM image holds as bf16 (the compiler rounded each value to
// nearest even), with the fp32 values it was rounded from: what the output
// check's reference run (SimOptions::round_operands = false) reads in its
// place, so that rounding the weights shows in the rounding check and not
// in the program check (docs/numerics.md).
struct ReferenceConstant {
  uint64_t dram_address = 0;
  std::vector<float> values;
  bool operator==(const ReferenceConstant &other) const {
    return dram_address == other.dram_address && values == other.values;
  }
};

// A CUDA bundle's program (tpuc --target=cuda -o OUT.tpub, docs/gpu.md): the
// generated CUDA C++ file, which the runtime's CUDA backend compiles and runs,
// and its kernels in launch order.
struct CudaKernel {
  std::string name;
  std::string source_ops; // the graph operations it runs, as in the source's comments
  std::string kind;       // gemm, row or element
  uint64_t global_bytes = 0;
  bool operator==(const CudaKernel &other) const {
    return name == other.name && source_ops == other.source_ops && kind == other.kind &&
           global_bytes == other.global_bytes;
  }
};

struct CudaProgram {
  std::string gpu;    // the architecture it was tuned for: sm_80, sm_90, sm_90a
  std::string fusion; // none, epilogue or full
  std::string source; // stored in the constants section
  std::vector<CudaKernel> kernels;
};

struct Bundle {
  // Unused by CUDA bundles, which hold no accelerator program.
  HardwareConfig config;
  std::vector<isa::Instruction> program;
  std::vector<uint8_t> constants;
  uint64_t constant_address = 0;
  uint64_t dram_bytes = 0;         // DRAM the program touches: constants, tensors, scratch
  std::vector<TensorInfo> inputs;  // in the model's input order
  std::vector<TensorInfo> outputs; // in the model's output order
  // Graph operations the instructions came from; source_of[i] indexes
  // source_ops for instruction i.
  std::vector<std::string> source_ops;
  std::vector<uint32_t> source_of;
  // Absent for inference bundles.
  std::optional<TrainingInfo> training;
  // Optional (bundles from before it, or built in code, have none): the
  // compulsory work of the model and of each source op, which the simulator's
  // roofline is computed from.
  std::optional<CompulsoryWork> work;
  // The constants stored as bf16, each once (none in bundles compiled with
  // tpuc --dram-dtype=f32, for an i8 array, or from before version 2).
  std::vector<ReferenceConstant> reference_constants;
  // Present in a CUDA bundle, which has no instructions, constants or config:
  // its tensors' dram_address and dram_bytes lay out a host image of the
  // inputs and outputs (what the runtime's Session fills and reads), and the
  // CUDA program runs on it.
  std::optional<CudaProgram> cuda;

  // "cuda" for a CUDA bundle, "tpu" for the accelerator's.
  std::string target() const { return cuda ? "cuda" : "tpu"; }

  // Checks internal consistency (addresses inside DRAM, tensor map, source
  // map, instructions against the config by the rules of Legality.h); throws
  // tpu::Error naming the fault, "instruction INDEX (DISASSEMBLY): problem"
  // for an instruction.
  void validate() const;
};

// The input a state output updates; null for other outputs.
const TensorInfo *stateInput(const Bundle &bundle, const TensorInfo &output);

std::vector<uint8_t> serializeBundle(const Bundle &bundle);
// Rejects truncated, corrupt, wrong-version or inconsistent data with a
// tpu::Error; never reads out of bounds.
Bundle parseBundle(const std::vector<uint8_t> &bytes);
// Validates first, so that nothing the loader would reject gets written.
void writeBundle(const Bundle &bundle, const std::string &path);
// Errors name the path.
Bundle readBundle(const std::string &path);

uint32_t crc32(const uint8_t *data, size_t size);

} // namespace tpu
