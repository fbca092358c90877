// The CUDA target (docs/gpu.md): one kernel per fusion group of the fused
// TOSA graph, and a host driver, in one CUDA C++ file with the device
// library (prelude/tpu_cuda.cuh) and the host support
// (prelude/tpu_cuda_host.h) pasted in, so that `nvcc OUT.cu` builds it.
//
// Kernels come in three kinds:
//   gemm     a group headed by a matmul or conv2d: tensor cores through the
//            device library's gemm_block, the rest of the group applied to
//            the accumulators in registers (the epilogue);
//   row      a group with reductions along the last axis (softmax, layer
//            normalization): one block per row, block-wide reductions;
//   element  anything else (elementwise chains, transposes, slices, pools,
//            depthwise convolution): one thread per output element.
#include "tpu/Target/CUDA/EmitCUDA.h"

#include "ElementCode.h"
#include "TileRule.h"

#include "tpu/Dialect/TPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <regex>
#include <sstream>

namespace mlir::tpu::cuda {

const std::vector<GpuTarget> &gpuTargets() {
  using namespace ::tpu::cuda;
  static const std::vector<GpuTarget> targets = {
      {"sm_80", kSmemPerBlockSm80, kMultiprocessorsA100},
      {"sm_90", kSmemPerBlockSm90, kMultiprocessorsH100},
      {"sm_90a", kSmemPerBlockSm90, kMultiprocessorsH100}};
  return targets;
}

const GpuTarget *findGpuTarget(const std::string &name) {
  for (const GpuTarget &target : gpuTargets())
    if (target.name == name)
      return &target;
  return nullptr;
}

namespace {

// The device library and host support, embedded at build time.
const char kDeviceLibrary[] =
#include "tpu_cuda.cuh.inc"
    ;
const char kHostSupport[] =
#include "tpu_cuda_host.h.inc"
    ;
const char kHopperLibrary[] =
#include "tpu_cuda_sm90a.cuh.inc"
    ;

// Whether GEMMs with weights take the Hopper path (wgmma fed by TMA, tpu_cuda_sm90a.cuh).
bool isHopper(const GpuTarget &gpu) { return gpu.name == "sm_90a"; }

// nvcc's target flags for the generated file: sm_90a code alone on Hopper (nvcc 13's
// -arch=sm_90a also builds compute_90 PTX, where ptxas refuses wgmma).
std::string nvccArchFlags(const GpuTarget &gpu) {
  return isHopper(gpu) ? "-gencode arch=compute_90a,code=sm_90a" : "-arch=" + gpu.name;
}

// The standalone program's main(), or with TPU_CUDA_LIBRARY the runtime's
// entry point (docs/gpu.md#the-runtimes-entry-point): model::execute on the
// caller's host buffers, errors as a message rather than an exit.
// hostCode() opens it with the model's input and output counts.
constexpr const char kEntryPoints[] =
    R"(extern "C" int tpu_cuda_run(const float *const *inputs, size_t input_count,
                            float *const *outputs, size_t output_count, float *kernel_ms,
                            size_t kernel_count, char *error, size_t error_bytes) {
  try {
    if (input_count != kModelInputs || output_count != kModelOutputs ||
        kernel_count != model::kKernelCount)
      tpu_host::fail("the caller passes " + std::to_string(input_count) + " inputs, " +
                     std::to_string(output_count) + " outputs and " +
                     std::to_string(kernel_count) + " kernels; the model has " +
                     std::to_string(kModelInputs) + ", " + std::to_string(kModelOutputs) + " and " +
                     std::to_string(model::kKernelCount));
    model::execute(inputs, outputs, kernel_ms);
    return 0;
  } catch (const std::exception &exception) {
    std::snprintf(error, error_bytes, "%s", exception.what());
    return 1;
  }
}
#else
int main(int argc, char **argv) { return model::main(argc, argv); }
#endif
)";

struct Buffer {
  enum class Role { Input, Intermediate, Constant, Weight };
  std::string name;
  std::vector<int64_t> shape;
  Role role;
  std::vector<uint8_t> data; // constants and weights
  bool bf16 = false;         // an intermediate only tensor cores read

  bool isBf16() const { return role == Role::Weight || bf16; }
  // The statement that stores `value` at `offset`.
  std::string store(const std::string &offset, const std::string &value) const {
    return isBf16() ? fmt::format("{}[{}] = tpu_cuda::to_bf16({});", name, offset, value)
                    : fmt::format("{}[{}] = {};", name, offset, value);
  }
  std::string type() const { return isBf16() ? "tpu_cuda::bf16" : "float"; }
  uint64_t bytes() const { return uint64_t(elementsOf(shape)) * (isBf16() ? 2 : 4); }
};

// A TMA tensor map of bf16 weights [rows][cols] (rows `pitch` elements
// apart) read in boxes of boxRows x 64: a field of the host's Buffers.
struct TensorMap {
  size_t buffer;
  int64_t rows, cols, pitch, boxRows;
  bool operator==(const TensorMap &o) const { return buffer == o.buffer && boxRows == o.boxRows; }
};

struct Kernel {
  std::string name, kind, sourceOps, comment, code;
  std::vector<size_t> reads; // buffers, in parameter order
  // A read passed as a tensor map (a __grid_constant__ CUtensorMap), not a pointer.
  std::optional<TensorMap> tensorMap;
  size_t writes = 0;
  std::string grid, block;
  int64_t sharedBytes = 0;
};

// "fc1 (Gemm)" -> "fc1", as a C identifier.
std::string identifierOf(const std::string &source) {
  std::string name = source.substr(0, source.find(" ("));
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name.empty() ? "op" : name;
}

uint16_t toBf16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return uint16_t(bits >> 16);
}

std::vector<float> floatsOf(DenseElementsAttr data) {
  return {data.getValues<float>().begin(), data.getValues<float>().end()};
}

std::string base64(const std::vector<uint8_t> &bytes) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  text.reserve(bytes.size() / 3 * 4 + 4);
  for (size_t at = 0; at < bytes.size(); at += 3) {
    uint32_t chunk = uint32_t(bytes[at]) << 16;
    if (at + 1 < bytes.size())
      chunk |= uint32_t(bytes[at + 1]) << 8;
    if (at + 2 < bytes.size())
      chunk |= bytes[at + 2];
    for (int sextet = 0; sextet < 4; ++sextet)
      text += at + sextet <= bytes.size() ? alphabet[(chunk >> (18 - 6 * sextet)) & 63] : '=';
  }
  return text;
}

bool isElementwise(Operation *op) {
  return llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp,
                   tosa::PowOp, tosa::ExpOp, tosa::LogOp, tosa::ReciprocalOp, tosa::RsqrtOp,
                   tosa::ErfOp, tosa::TanhOp, tosa::SigmoidOp, tosa::AbsOp, tosa::NegateOp,
                   tosa::FloorOp, tosa::CeilOp, tosa::ClampOp>(op);
}

class Emitter {
public:
  Emitter(func::FuncOp main, const CudaOptions &options, const GpuTarget &gpu)
      : main(main), options(options), gpu(gpu) {}

  FailureOr<CudaSource> run();

private:
  size_t addBuffer(std::string name, std::vector<int64_t> shape, Buffer::Role role) {
    buffers.push_back(Buffer{std::move(name), std::move(shape), role, {}, false});
    return buffers.size() - 1;
  }
  FailureOr<size_t> bufferOf(Value value);
  FailureOr<size_t> weightOf(Value value, bool transpose);
  // The buffer a kernel writes `result` into: bf16 where only tensor cores
  // read it, since they round it to bf16 anyway.
  size_t outputBuffer(Value result);
  LogicalResult emitGroup(llvm::ArrayRef<Operation *> members, Value result);
  LogicalResult emitGemm(llvm::ArrayRef<Operation *> members, Value result);
  LogicalResult emitRow(llvm::ArrayRef<Operation *> members, Value result,
                        llvm::ArrayRef<Operation *> reductions);
  LogicalResult emitElementwise(llvm::ArrayRef<Operation *> members, Value result);
  // The buffer of a value the kernel reads, added to the kernel's
  // parameters; a value without one sets `status` to failure.
  std::optional<size_t> operand(Kernel &kernel, Value value, LogicalResult &status);
  // ElementCode's loads for a kernel: through operand(), widening bf16.
  ElementCode::Load loader(Kernel &kernel, LogicalResult &status,
                           std::vector<size_t> *fields = nullptr);
  // What the kernel moves: each buffer it reads once, its result once.
  uint64_t globalBytes(const Kernel &kernel) const {
    uint64_t bytes = buffers[kernel.writes].bytes();
    for (size_t read : kernel.reads)
      bytes += buffers[read].bytes();
    return bytes;
  }
  // The kernel's parameters, in order: buffers read, then the output.
  std::string parameters(const Kernel &kernel) const;
  void finish(Kernel kernel, llvm::ArrayRef<Operation *> members, Value result);
  std::string sourceOpsOf(llvm::ArrayRef<Operation *> members) const;
  std::string hostCode() const;
  // The model's tensors and kernels, as a CUDA bundle records them.
  CudaSource describe() const;
  void computeReductionLengths();

  mutable func::FuncOp main; // MLIR's accessors are not const
  const CudaOptions &options;
  const GpuTarget &gpu;
  std::vector<Buffer> buffers;
  llvm::DenseMap<Value, size_t> bufferIndex;
  llvm::DenseMap<Value, size_t> weightIndex;
  llvm::DenseMap<Value, int64_t> reductionLength;
  llvm::DenseSet<Value> tensorCoreOnly; // group results only GEMM operands read
  std::vector<Kernel> kernels;
  std::vector<TensorMap> tensorMaps; // of every kernel, once each
  int intermediates = 0, constants = 0;
  Value groupResult; // the result of the group being emitted, outside it
};

FailureOr<size_t> Emitter::bufferOf(Value value) {
  if (auto found = bufferIndex.find(value); found != bufferIndex.end())
    return found->second;
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isF32())
    return emitError(value.getLoc(), "the CUDA target handles float32 tensors only, not ")
           << value.getType();
  // A reshape outside any group is a view: the same elements in the same order.
  if (auto reshape = value.getDefiningOp<tosa::ReshapeOp>()) {
    FailureOr<size_t> source = bufferOf(reshape.getInput1());
    if (succeeded(source))
      bufferIndex[value] = *source;
    return source;
  }
  DenseElementsAttr data = constantData(value);
  if (!data)
    return emitError(value.getLoc(), "the CUDA target found no buffer for this value");
  size_t index =
      addBuffer(fmt::format("cst{}", constants++), shapeOf(value), Buffer::Role::Constant);
  std::vector<float> values = floatsOf(data);
  buffers[index].data.resize(values.size() * 4);
  std::memcpy(buffers[index].data.data(), values.data(), values.size() * 4);
  bufferIndex[value] = index;
  return index;
}

// A matrix unit's constant operand in bf16, converted at compile time, K
// contiguous: [batch][N][K] from a matmul's [batch][K][N] (transpose), or a
// conv2d's [OC][KH][KW][IC] as it is. On Hopper the rows are padded with
// zeros to a multiple of 8 elements ([batch][N][Kp], [OC][Kp]): TMA needs
// 16-byte row strides.
FailureOr<size_t> Emitter::weightOf(Value value, bool transpose) {
  if (auto found = weightIndex.find(value); found != weightIndex.end())
    return found->second;
  std::vector<float> values = floatsOf(constantData(value));
  std::vector<int64_t> shape = shapeOf(value);
  if (values.size() == 1) // a splat
    values.assign(size_t(elementsOf(shape)), values[0]);
  if (transpose) { // [B][K][N] -> [B][N][K]
    int64_t batch = shape[0], k = shape[1], n = shape[2];
    std::vector<float> transposed(values.size());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t row = 0; row < k; ++row)
        for (int64_t col = 0; col < n; ++col)
          transposed[(b * n + col) * k + row] = values[(b * k + row) * n + col];
    values = std::move(transposed);
    shape = {batch, n, k};
  }
  if (isHopper(gpu)) {
    // K: the last axis of a matmul's [batch][N][K], KH * KW * IC of a conv2d's.
    std::vector<int64_t> rows = transpose ? std::vector<int64_t>(shape.begin(), shape.end() - 1)
                                          : std::vector<int64_t>{shape.front()};
    int64_t k = elementsOf(shape) / elementsOf(rows), pitch = (k + 7) / 8 * 8;
    std::vector<float> padded(size_t(elementsOf(rows) * pitch), 0.0f);
    for (int64_t row = 0; row < elementsOf(rows); ++row)
      std::copy_n(values.begin() + row * k, k, padded.begin() + row * pitch);
    values = std::move(padded);
    shape = rows;
    shape.push_back(pitch);
  }
  size_t index = addBuffer(fmt::format("w{}", weightIndex.size()), shape, Buffer::Role::Weight);
  std::vector<uint8_t> &bytes = buffers[index].data;
  bytes.resize(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = toBf16Bits(values[i]);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  weightIndex[value] = index;
  return index;
}

std::optional<size_t> Emitter::operand(Kernel &kernel, Value value, LogicalResult &status) {
  FailureOr<size_t> buffer = bufferOf(value);
  if (failed(buffer)) {
    status = failure();
    return std::nullopt;
  }
  if (!llvm::is_contained(kernel.reads, *buffer))
    kernel.reads.push_back(*buffer);
  return *buffer;
}

// `fields`, when given, collects the buffers read (the GEMM epilogue's).
ElementCode::Load Emitter::loader(Kernel &kernel, LogicalResult &status,
                                  std::vector<size_t> *fields) {
  return [this, &kernel, &status, fields](Value value, const std::string &offset) {
    std::optional<size_t> buffer = operand(kernel, value, status);
    if (!buffer)
      return std::string("0.0f");
    if (fields && !llvm::is_contained(*fields, *buffer))
      fields->push_back(*buffer);
    const Buffer &read = buffers[*buffer];
    return read.isBf16() ? fmt::format("tpu_cuda::to_float({}[{}])", read.name, offset)
                         : fmt::format("{}[{}]", read.name, offset);
  };
}

std::string Emitter::sourceOpsOf(llvm::ArrayRef<Operation *> members) const {
  std::vector<std::string> names;
  for (Operation *op : members) {
    // A model's node, "fc1 (Gemm)"; an op the compiler made names its kind.
    std::string name = sourceName(op->getLoc());
    if (name.find(" (") == std::string::npos)
      name = op->getName().stripDialect().str();
    if (!llvm::is_contained(names, name))
      names.push_back(name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string Emitter::parameters(const Kernel &kernel) const {
  std::vector<std::string> list;
  for (size_t read : kernel.reads)
    list.push_back(
        kernel.tensorMap && kernel.tensorMap->buffer == read
            ? fmt::format("const __grid_constant__ CUtensorMap {}_map", buffers[read].name)
            : fmt::format("const {} *__restrict__ {}", buffers[read].type(), buffers[read].name));
  list.push_back(fmt::format("{} *__restrict__ {}", buffers[kernel.writes].type(),
                             buffers[kernel.writes].name));
  return fmt::format("{}", fmt::join(list, ", "));
}

// Drops the definitions nothing reads (index arithmetic the emitter set up
// on the way to a value the kernel already held), until none is left.
std::string withoutUnusedDefinitions(const std::string &code) {
  static const std::regex definition(R"(^\s*const (?:int|float) (\w+) = .*;$)");
  std::vector<std::string> lines;
  std::istringstream stream(code);
  for (std::string line; std::getline(stream, line);)
    lines.push_back(line);
  for (bool changed = true; changed;) {
    changed = false;
    std::string text;
    for (const std::string &line : lines)
      text += line + "\n";
    for (size_t i = 0; i < lines.size(); ++i) {
      std::smatch match;
      if (!std::regex_match(lines[i], match, definition))
        continue;
      std::regex use("\\b" + match[1].str() + "\\b");
      auto uses = std::distance(std::sregex_iterator(text.begin(), text.end(), use),
                                std::sregex_iterator());
      if (uses == 1) {
        lines.erase(lines.begin() + long(i));
        changed = true;
        break;
      }
    }
  }
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  return text;
}

void Emitter::finish(Kernel kernel, llvm::ArrayRef<Operation *> members, Value result) {
  kernel.code = withoutUnusedDefinitions(kernel.code);
  kernel.sourceOps = sourceOpsOf(members);
  kernel.name = fmt::format("k{}_{}", kernels.size(), identifierOf(kernel.sourceOps));
  // The code names the kernel and its parameters by placeholder.
  for (auto [placeholder, text] : {std::pair{std::string("{name}"), kernel.name},
                                   std::pair{std::string("{parameters}"), parameters(kernel)}})
    for (size_t at; (at = kernel.code.find(placeholder)) != std::string::npos;)
      kernel.code.replace(at, placeholder.size(), text);
  bufferIndex[result] = kernel.writes;
  kernels.push_back(std::move(kernel));
}

size_t Emitter::outputBuffer(Value result) {
  size_t index =
      addBuffer(fmt::format("t{}", intermediates++), shapeOf(result), Buffer::Role::Intermediate);
  buffers[index].bf16 = result == groupResult && tensorCoreOnly.contains(groupResult);
  return index;
}

// Whether every reader of `value` (through reshapes between groups) is a
// GEMM kernel's A operand or activation B operand.
bool onlyTensorCoresRead(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    auto group = llvm::dyn_cast<FusedOp>(user->getParentOp());
    if (!group && llvm::isa<tosa::ReshapeOp>(user)) {
      if (!onlyTensorCoresRead(user->getResult(0)))
        return false;
      continue;
    }
    bool head = !group || &group.getHead() == user;
    bool operandOfGemm = (llvm::isa<tosa::MatMulOp>(user) && use.getOperandNumber() < 2) ||
                         (llvm::isa<tosa::Conv2DOp>(user) && use.getOperandNumber() == 0);
    if (!head || !operandOfGemm)
      return false;
  }
  return !value.use_empty();
}

LogicalResult Emitter::emitGroup(llvm::ArrayRef<Operation *> members, Value result) {
  Operation *head = members.front();
  for (Operation *op : members.drop_front())
    if (llvm::isa<tosa::MatMulOp, tosa::Conv2DOp>(op))
      return op->emitError("the CUDA target runs a matmul or conv2d only at the head of its "
                           "fusion group");
  if (llvm::isa<tosa::MatMulOp, tosa::Conv2DOp>(head))
    return emitGemm(members, result);
  // Row kernels: every reduction along the last axis of a tensor with the
  // result's rows, all of one length.
  std::vector<int64_t> shape = shapeOf(result);
  llvm::SmallVector<Operation *> reductions;
  bool rowLocal = !shape.empty();
  int64_t length = -1;
  for (Operation *op : members) {
    if (!llvm::isa<tosa::ReduceSumOp, tosa::ReduceMaxOp>(op))
      continue;
    std::vector<int64_t> input = shapeOf(op->getOperand(0));
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    rowLocal = rowLocal && input.size() == shape.size() && axis == int64_t(input.size()) - 1 &&
               std::equal(input.begin(), input.end() - 1, shape.begin()) &&
               (length < 0 || length == input.back()) &&
               (shape.back() == 1 || shape.back() == input.back());
    length = input.back();
    reductions.push_back(op);
  }
  if (!reductions.empty() && rowLocal)
    return emitRow(members, result, reductions);
  return emitElementwise(members, result);
}

LogicalResult Emitter::emitElementwise(llvm::ArrayRef<Operation *> members, Value result) {
  llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
  Kernel kernel;
  kernel.kind = "element";
  LogicalResult status = success();
  ElementCode code(memberSet, loader(kernel, status), 1);
  std::vector<int64_t> shape = shapeOf(result);
  int64_t elements = elementsOf(shape);
  Coords at = code.coordinates("i", shape);
  FailureOr<std::string> value = code.valueAt(result, at);
  if (failed(value) || failed(status))
    return failure();
  kernel.writes = outputBuffer(result);
  const int threads = 256;
  kernel.grid = fmt::format("dim3({})", (elements + threads - 1) / threads);
  kernel.block = fmt::format("dim3({})", threads);
  kernel.comment = fmt::format("one thread per element of {}", fmt::join(shape, "x"));
  kernel.code =
      fmt::format("__global__ void __launch_bounds__({}) {{name}}({{parameters}}) {{\n"
                  "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  if (i >= {}) return;\n{}  {}\n}}\n",
                  threads, elements, code.take(), buffers[kernel.writes].store("i", *value));
  finish(std::move(kernel), members, result);
  return success();
}

LogicalResult Emitter::emitRow(llvm::ArrayRef<Operation *> members, Value result,
                               llvm::ArrayRef<Operation *> reductions) {
  llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
  Kernel kernel;
  kernel.kind = "row";
  LogicalResult status = success();
  ElementCode code(memberSet, loader(kernel, status), 1);
  std::vector<int64_t> shape = shapeOf(result);
  int64_t length = shapeOf(reductions.front()->getOperand(0)).back();
  int64_t rows = elementsOf(shape) / shape.back();
  std::vector<int64_t> rowShape(shape.begin(), shape.end() - 1);
  Coords rowAt = code.coordinates("row", rowShape);
  Coords elementAt = rowAt;
  elementAt.push_back("j");
  // One pass over the row per reduction, in the group's order; each pass
  // recomputes what it reads, which stays in L1.
  std::string body;
  for (Operation *reduction : reductions) {
    bool isMax = llvm::isa<tosa::ReduceMaxOp>(reduction);
    std::string partial = code.fresh("p"), total = code.fresh("r");
    FailureOr<std::string> element = failure();
    std::string loop = code.nested([&] {
      element = code.valueAt(reduction->getOperand(0), elementAt);
      if (succeeded(element))
        code.line(isMax ? fmt::format("{0} = fmaxf({0}, {1});", partial, *element)
                        : fmt::format("{} += {};", partial, *element));
    });
    if (failed(element))
      return failure();
    body += code.take();
    body += fmt::format("  float {} = {};\n"
                        "  for (int j = threadIdx.x; j < {}; j += blockDim.x) {{\n{}  }}\n"
                        "  const float {} = tpu_cuda::{}({});\n",
                        partial, isMax ? "-INFINITY" : "0.0f", length, loop, total,
                        isMax ? "block_max" : "block_sum", partial);
    code.give(reduction->getResult(0), total);
  }
  kernel.writes = outputBuffer(result);
  // By index: reading constants adds buffers, which moves them.
  const size_t out = kernel.writes;
  std::string store;
  if (shape.back() == length) {
    FailureOr<std::string> element = failure();
    std::string loop = code.nested([&] {
      element = code.valueAt(result, elementAt);
      if (succeeded(element))
        code.line(buffers[out].store(fmt::format("row * {} + j", length), *element));
    });
    if (failed(element))
      return failure();
    store = fmt::format("{}  for (int j = threadIdx.x; j < {}; j += blockDim.x) {{\n{}  }}\n",
                        code.take(), length, loop);
  } else {
    Coords scalarAt = rowAt;
    scalarAt.push_back("0");
    FailureOr<std::string> element = code.valueAt(result, scalarAt);
    if (failed(element))
      return failure();
    store = fmt::format("{}  if (threadIdx.x == 0) {}\n", code.take(),
                        buffers[out].store("row", *element));
  }
  if (failed(status))
    return failure();
  const int threads = length >= 256 ? 256 : length > 64 ? 128 : 32;
  kernel.grid = fmt::format("dim3({})", rows);
  kernel.block = fmt::format("dim3({})", threads);
  kernel.comment =
      fmt::format("one block of {} threads per row: {} rows of {}, {} reduction{}", threads, rows,
                  length, reductions.size(), reductions.size() == 1 ? "" : "s");
  kernel.code = fmt::format("__global__ void __launch_bounds__({}) {{name}}({{parameters}}) {{\n"
                            "  const int row = blockIdx.x;\n{}{}}}\n",
                            threads, body, store);
  finish(std::move(kernel), members, result);
  return success();
}

// The members the epilogue may apply to the accumulators in registers: each
// one that depends on the head is elementwise on the head's elements (or a
// reshape of them), so that output element i needs only accumulator i.
bool epilogueFits(llvm::ArrayRef<Operation *> members, Value result) {
  Value head = members.front()->getResult(0);
  int64_t elements = elementsOf(shapeOf(head));
  llvm::DenseSet<Value> dependent{head};
  for (Operation *op : members.drop_front()) {
    bool uses = llvm::any_of(op->getOperands(), [&](Value v) { return dependent.contains(v); });
    if (!uses)
      continue;
    if (!llvm::isa<tosa::ReshapeOp>(op) && !isElementwise(op))
      return false;
    for (Value operand : op->getOperands())
      if (dependent.contains(operand) && shapeOf(operand) != shapeOf(op->getResult(0)) &&
          !llvm::isa<tosa::ReshapeOp>(op))
        return false;
    dependent.insert(op->getResult(0));
  }
  return dependent.contains(result) && elementsOf(shapeOf(result)) == elements;
}

LogicalResult Emitter::emitGemm(llvm::ArrayRef<Operation *> members, Value result) {
  Operation *head = members.front();
  if (!epilogueFits(members, result)) {
    // The head and the longest start of its epilogue chain that fits (a
    // pool ending it does not) on tensor cores; the rest of the group
    // reads their result.
    size_t fitting = members.size() - 1;
    while (fitting > 1 &&
           !epilogueFits(members.take_front(fitting), members[fitting - 1]->getResult(0)))
      --fitting;
    if (failed(emitGemm(members.take_front(fitting), members[fitting - 1]->getResult(0))))
      return failure();
    return emitGroup(members.drop_front(fitting), result);
  }
  Kernel kernel;
  kernel.kind = "gemm";
  LogicalResult status = success();
  // A GEMM operand's element type and buffer name (copies: buffers move).
  auto read = [&](Value value) {
    std::optional<size_t> buffer = operand(kernel, value, status);
    return buffer ? std::pair(buffers[*buffer].type(), buffers[*buffer].name)
                  : std::pair(std::string("float"), std::string("?"));
  };
  int64_t batch, m, n, k;
  std::string aLoader, bLoader, geometry;
  // Constant B: its buffer, rows in all and per batch (0: shared by every batch).
  std::optional<size_t> weightBuffer;
  int64_t weightRows = 0, weightBatchRows = 0;
  std::optional<Value> bias;
  if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(head)) {
    std::vector<int64_t> a = shapeOf(matmul.getA()), b = shapeOf(matmul.getB());
    batch = a[0], m = a[1], k = a[2], n = b[2];
    auto [aType, aName] = read(matmul.getA());
    aLoader = fmt::format("tpu_cuda::DenseA<{}>({}, {}, {})", aType, aName, m, k);
    if (constantData(matmul.getB())) {
      FailureOr<size_t> weights = weightOf(matmul.getB(), /*transpose=*/true);
      kernel.reads.push_back(*weights);
      weightRows = b[0] * n, weightBatchRows = b[0] == 1 ? 0 : n, weightBuffer = *weights;
      bLoader = fmt::format("tpu_cuda::DenseB_NK({}, {}, {}, {})", buffers[*weights].name, n, k,
                            b[0] == 1 ? 0 : n * k);
    } else {
      auto [bType, bName] = read(matmul.getB());
      bLoader = fmt::format("tpu_cuda::DenseB_KN<{}>({}, {}, {})", bType, bName, k, n);
    }
    geometry = fmt::format("matmul [{}x{}x{}] x [{}x{}x{}]", batch, m, k, b[0], k, n);
  } else {
    auto conv = llvm::cast<tosa::Conv2DOp>(head);
    std::vector<int64_t> input = shapeOf(conv.getInput()), weight = shapeOf(conv.getWeight()),
                         output = shapeOf(conv.getOutput());
    if (!constantData(conv.getWeight()))
      return conv.emitError("the CUDA target needs constant convolution weights");
    llvm::ArrayRef<int64_t> pad = conv.getPad(), stride = conv.getStride(),
                            dilation = conv.getDilation();
    batch = 1, m = output[0] * output[1] * output[2], n = weight[0];
    k = weight[1] * weight[2] * weight[3];
    std::string shape =
        fmt::format("tpu_cuda::ConvShape{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}}",
                    input[0], input[1], input[2], input[3], weight[1], weight[2], stride[0],
                    stride[1], pad[0], pad[2], dilation[0], dilation[1], output[1], output[2]);
    auto [inputType, inputName] = read(conv.getInput());
    aLoader = fmt::format("tpu_cuda::ConvA<{}>({}, {})", inputType, inputName, shape);
    FailureOr<size_t> weights = weightOf(conv.getWeight(), /*transpose=*/false);
    kernel.reads.push_back(*weights);
    weightRows = n, weightBatchRows = 0, weightBuffer = *weights;
    bLoader = fmt::format("tpu_cuda::DenseB_NK({}, {}, {})", buffers[*weights].name, n, k);
    geometry = fmt::format("conv2d {}x{} stride {}x{} pad {}, implicit GEMM (no im2col buffer)",
                           weight[1], weight[2], stride[0], stride[1], fmt::join(pad, ","));
    bias = conv.getBias();
  }

  // The epilogue: output element (batch, m, n) is element (batch * M + m) * N
  // + n of the head, and of every value after it.
  llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
  std::vector<size_t> epilogueReads; // the epilogue functor's fields
  ElementCode code(memberSet, loader(kernel, status, &epilogueReads), 2);
  std::string index = code.fresh("i");
  code.line(fmt::format("const int {} = {};", index,
                        batch == 1 ? fmt::format("m * {} + n", n)
                                   : fmt::format("(batch * {} + m) * {} + n", m, n)));
  std::string accumulator = "acc";
  if (bias) {
    FailureOr<std::string> term = code.valueAt(*bias, {"n"});
    if (failed(term))
      return failure();
    if (*term != "0.0f") {
      accumulator = code.fresh("v");
      code.line(fmt::format("const float {} = acc + {};", accumulator, *term));
    }
  }
  code.give(head->getResult(0), accumulator);
  Coords at = code.coordinates(index, shapeOf(result));
  FailureOr<std::string> value = code.valueAt(result, at);
  if (failed(value) || failed(status))
    return failure();
  kernel.writes = outputBuffer(result);
  // By index: reading constants adds buffers, which moves them.
  const size_t out = kernel.writes;
  code.line(buffers[out].store(index, *value));

  // The epilogue's fields: what it reads, then the output.
  std::vector<std::string> fields, fieldNames;
  for (size_t read : epilogueReads) {
    fields.push_back(
        fmt::format("  const {} *__restrict__ {};\n", buffers[read].type(), buffers[read].name));
    fieldNames.push_back(buffers[read].name);
  }
  fields.push_back(fmt::format("  {} *__restrict__ {};\n", buffers[out].type(), buffers[out].name));
  fieldNames.push_back(buffers[out].name);
  std::string epilogue = fmt::format(
      "struct {{name}}_epilogue {{\n{}"
      "  __device__ __forceinline__ void operator()(int{}, int m, int n, float acc) const {{\n{}  "
      "}}\n}};\n",
      fmt::join(fields, ""), batch == 1 ? "" : " batch", code.take());
  std::string tileType, call;
  int64_t bm, bn;
  if (isHopper(gpu) && weightBuffer) {
    ::tpu::cuda::HopperTileChoice tile = ::tpu::cuda::chooseHopperTile(
        m, n, k, int(gpu.shared_bytes_per_block), gpu.multiprocessors, batch);
    bm = tile.bm, bn = tile.bn;
    kernel.block = fmt::format("dim3({})", tile.threads());
    kernel.sharedBytes = tile.smemBytes();
    kernel.tensorMap =
        TensorMap{*weightBuffer, weightRows, k, buffers[*weightBuffer].shape.back(), bn};
    if (!llvm::is_contained(tensorMaps, *kernel.tensorMap))
      tensorMaps.push_back(*kernel.tensorMap);
    kernel.comment = fmt::format(
        "{}: C[{}][{}][{}] on tensor cores, K = {}; Hopper: tile {}x{}x64, {} warpgroup{} of "
        "wgmma m64n{}k16, B by TMA, {} stages ({} B shared)",
        geometry, batch, m, n, k, bm, bn, tile.warpgroups(), tile.warpgroups() == 1 ? "" : "s", bn,
        tile.stages, tile.smemBytes());
    tileType = fmt::format("tpu_cuda::HopperTileConfig<{}, {}, {}>", bm, bn, tile.stages);
    call = fmt::format("tpu_cuda::gemm_block_sm90a<{{name}}_tile>({}, &{}_map, {}", aLoader,
                       buffers[*weightBuffer].name, weightBatchRows);
  } else {
    ::tpu::cuda::TileChoice tile = ::tpu::cuda::chooseTile(m, n, k, int(gpu.shared_bytes_per_block),
                                                           gpu.multiprocessors, batch);
    bm = tile.bm, bn = tile.bn;
    kernel.block = fmt::format("dim3({})", tile.threads());
    kernel.sharedBytes = tile.smemBytes();
    kernel.comment =
        fmt::format("{}: C[{}][{}][{}] on tensor cores, K = {}; tile {}x{}x{}, {}x{} warps, {} "
                    "stage{} ({} B shared)",
                    geometry, batch, m, n, k, tile.bm, tile.bn, tile.bk, tile.warpsM, tile.warpsN,
                    tile.stages, tile.stages == 1 ? "" : "s", tile.smemBytes());
    tileType = fmt::format("tpu_cuda::TileConfig<{}, {}, {}, {}, {}, {}>", tile.bm, tile.bn,
                           tile.bk, tile.warpsM, tile.warpsN, tile.stages);
    call = fmt::format("tpu_cuda::gemm_block<{{name}}_tile>({}, {}", aLoader, bLoader);
  }
  kernel.grid = fmt::format("dim3({}, {}, {})", (m + bm - 1) / bm, (n + bn - 1) / bn, batch);
  kernel.code = fmt::format(
      "{}using {{name}}_tile = {};\n"
      "__global__ void __launch_bounds__({{name}}_tile::kThreads) {{name}}({{parameters}}) {{\n"
      "  TPU_DYNAMIC_SMEM(smem);\n"
      "  {}, {{name}}_epilogue{{{}}}, {}, {}, {}, smem);\n"
      "}}\n",
      epilogue, tileType, call, fmt::join(fieldNames, ", "), m, n, k);
  finish(std::move(kernel), members, result);
  return success();
}

// The longest chain of accumulations behind each value (docs/numerics.md):
// the output check's tolerance grows with it.
void Emitter::computeReductionLengths() {
  std::function<void(Operation &)> track = [&](Operation &op) {
    if (auto fused = llvm::dyn_cast<FusedOp>(op)) {
      for (Operation &member : fused.getMembers())
        track(member);
      for (auto [result, yielded] :
           llvm::zip(fused.getResults(), fused.getBody().front().getTerminator()->getOperands()))
        reductionLength[result] = reductionLength.lookup(yielded);
      return;
    }
    int64_t length = 0;
    for (Value operand : op.getOperands())
      length = std::max(length, reductionLength.lookup(operand));
    if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(op))
      length += shapeOf(matmul.getA())[2];
    else if (auto conv = llvm::dyn_cast<tosa::Conv2DOp>(op))
      length += elementsOf(shapeOf(conv.getWeight())) / shapeOf(conv.getWeight())[0];
    else if (auto conv = llvm::dyn_cast<tosa::DepthwiseConv2DOp>(op))
      length += shapeOf(conv.getWeight())[0] * shapeOf(conv.getWeight())[1];
    else if (auto sum = llvm::dyn_cast<tosa::ReduceSumOp>(op))
      length += shapeOf(sum.getInput())[sum.getAxis()];
    for (Value result : op.getResults())
      reductionLength[result] = length;
  };
  for (Operation &op : main.getBody().front())
    track(op);
}

FailureOr<CudaSource> Emitter::run() {
  computeReductionLengths();
  for (BlockArgument argument : main.getArguments()) {
    auto name = main.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kTensorNameAttr);
    auto type = llvm::dyn_cast<RankedTensorType>(argument.getType());
    if (!type || !type.getElementType().isF32())
      return emitError(argument.getLoc(),
                       fmt::format("input {}: the CUDA target handles float32 tensors only",
                                   argument.getArgNumber()));
    std::string identifier = identifierOf(name ? name.str() : "input");
    bufferIndex[argument] = addBuffer(fmt::format("in{}_{}", argument.getArgNumber(), identifier),
                                      shapeOf(argument), Buffer::Role::Input);
  }
  for (Operation &op : main.getBody().front()) {
    if (op.hasTrait<OpTrait::ConstantLike>() || llvm::isa<tosa::ReshapeOp, func::ReturnOp>(op))
      continue; // buffers on demand; views
    if (auto fused = llvm::dyn_cast<FusedOp>(op)) {
      if (fused.getNumResults() != 1)
        return fused.emitError("the CUDA target runs fusion groups with one result");
      llvm::SmallVector<Operation *> members;
      for (Operation &member : fused.getMembers())
        members.push_back(&member);
      Value yielded = fused.getBody().front().getTerminator()->getOperand(0);
      groupResult = yielded;
      if (onlyTensorCoresRead(fused.getResult(0)))
        tensorCoreOnly.insert(yielded);
      if (failed(emitGroup(members, yielded)))
        return failure();
      bufferIndex[fused.getResult(0)] = bufferIndex.lookup(yielded);
      continue;
    }
    if (op.getNumResults() != 1)
      return op.emitError("the CUDA target expects one result");
    groupResult = op.getResult(0);
    if (onlyTensorCoresRead(groupResult))
      tensorCoreOnly.insert(groupResult);
    if (failed(emitGroup({&op}, op.getResult(0))))
      return failure();
  }
  auto ret = llvm::cast<func::ReturnOp>(main.getBody().front().getTerminator());
  for (Value output : ret.getOperands())
    if (failed(bufferOf(output)))
      return failure();

  std::string text =
      fmt::format("// Generated by tpuc --target=cuda --gpu={} --fusion={} from {}.\n"
                  "// {} kernels, one per fusion group (docs/gpu.md).\n"
                  "//   build: nvcc -std=c++17 {} -O3 THIS.cu -o model\n"
                  "//   run:   ./model --data DIR [--report R.json] [--outputs DIR]\n"
                  "//   CPU:   scripts/cuda-emulate THIS.cu --data DIR (no GPU needed)\n"
                  "//   -DTPU_CUDA_LIBRARY: tpu_cuda_run() for the runtime instead of main()\n\n",
                  gpu.name, options.fusion, options.model_path, kernels.size(), nvccArchFlags(gpu));
  text += "// ===== device library: compiler/lib/Target/CUDA/prelude/tpu_cuda.cuh =====\n";
  text += kDeviceLibrary;
  text += "\n// ===== host support: compiler/lib/Target/CUDA/prelude/tpu_cuda_host.h =====\n";
  text += kHostSupport;
  if (isHopper(gpu)) {
    text += "\n// ===== Hopper path: compiler/lib/Target/CUDA/prelude/tpu_cuda_sm90a.cuh =====\n";
    text += kHopperLibrary;
  }
  text += "\n// ===== the model's kernels =====\n";
  for (const Kernel &kernel : kernels) {
    uint64_t bytes = globalBytes(kernel);
    text += fmt::format("\n// {}: {}\n//   {}\n//   global memory: {} bytes (each operand read "
                        "once, the result written once)\n{}",
                        kernel.name, kernel.sourceOps, kernel.comment, bytes, kernel.code);
  }
  text += hostCode();
  CudaSource source = describe();
  source.text = std::move(text);
  return source;
}

CudaSource Emitter::describe() const {
  CudaSource source;
  auto nameOr = [](StringAttr name, std::string fallback) { return name ? name.str() : fallback; };
  for (BlockArgument argument : main.getArguments()) {
    unsigned index = argument.getArgNumber();
    source.inputs.push_back({nameOr(main.getArgAttrOfType<StringAttr>(index, kTensorNameAttr),
                                    fmt::format("input_{}", index)),
                             shapeOf(argument), 0});
  }
  auto ret = llvm::cast<func::ReturnOp>(main.getBody().front().getTerminator());
  for (auto [index, output] : llvm::enumerate(ret.getOperands()))
    source.outputs.push_back({nameOr(main.getResultAttrOfType<StringAttr>(index, kTensorNameAttr),
                                     fmt::format("output_{}", index)),
                              shapeOf(output), reductionLength.lookup(output)});
  for (const Kernel &kernel : kernels)
    source.kernels.push_back({kernel.name, kernel.sourceOps, kernel.kind, globalBytes(kernel)});
  return source;
}

std::string Emitter::hostCode() const {
  std::string text = "\n// ===== host driver =====\nnamespace model {\n\n";
  // The weight blob: every constant, 16-byte aligned, as base64 lines.
  std::vector<uint8_t> blob;
  std::vector<uint64_t> offsets(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].data.empty())
      continue;
    blob.resize((blob.size() + 15) / 16 * 16);
    offsets[i] = blob.size();
    blob.insert(blob.end(), buffers[i].data.begin(), buffers[i].data.end());
  }

  text += "struct Buffers {\n";
  for (const Buffer &buffer : buffers)
    text += fmt::format("  {} *{} = nullptr; // [{}]{}\n", buffer.type(), buffer.name,
                        fmt::join(buffer.shape, ", "),
                        buffer.role == Buffer::Role::Weight ? " bf16 weights" : "");
  for (const TensorMap &map : tensorMaps)
    text += fmt::format("  CUtensorMap {}_map{}; // TMA boxes of {} rows x 64\n",
                        buffers[map.buffer].name, map.boxRows, map.boxRows);
  text += "};\n\n";

  text += "const tpu_host::KernelInfo kKernels[] = {\n";
  for (const Kernel &kernel : kernels) {
    uint64_t bytes = globalBytes(kernel);
    text += fmt::format("    {{\"{}\", \"{}\", \"{}\", {}}},\n", kernel.name, kernel.sourceOps,
                        kernel.kind, bytes);
  }
  text += "};\nconstexpr size_t kKernelCount = sizeof(kKernels) / sizeof(kKernels[0]);\n\n";

  text += "void run(const Buffers &b, tpu_host::KernelTimer &timer) {\n";
  for (auto [index, kernel] : llvm::enumerate(kernels)) {
    std::vector<std::string> arguments;
    for (size_t read : kernel.reads)
      arguments.push_back(
          kernel.tensorMap && kernel.tensorMap->buffer == read
              ? fmt::format("b.{}_map{}", buffers[read].name, kernel.tensorMap->boxRows)
              : "b." + buffers[read].name);
    arguments.push_back("b." + buffers[kernel.writes].name);
    text += fmt::format("  timer.start({0});\n  TPU_LAUNCH({1}, {2}, {3}, {4}, {5});\n"
                        "  timer.stop({0});\n",
                        index, kernel.name, kernel.grid, kernel.block, kernel.sharedBytes,
                        fmt::join(arguments, ", "));
  }
  text += "}\n\n";

  // Inputs and outputs, in the function's order.
  auto ret = llvm::cast<func::ReturnOp>(main.getBody().front().getTerminator());
  text += "// Runs the model on host buffers (float32, dense): inputs[i] holds input i,\n"
          "// outputs[i] receives output i and ms[k] kernel k's time.\n"
          "void execute(const float *const *inputs, float *const *outputs, float *ms) {\n"
          "  Buffers b;\n";
  for (const Buffer &buffer : buffers)
    text += fmt::format("  tpu_host::checkCuda(cudaMalloc(&b.{}, {}), \"cudaMalloc\");\n",
                        buffer.name, buffer.bytes());
  text += fmt::format(
      "  const std::vector<uint8_t> blob = tpu_host::decodeBase64(kWeights, kWeightBytes);\n"
      "  if (blob.size() != {}) tpu_host::fail(\"the weight blob is corrupt\");\n",
      blob.size());
  for (auto [index, buffer] : llvm::enumerate(buffers))
    if (!buffer.data.empty())
      text += fmt::format("  tpu_host::checkCuda(cudaMemcpy(b.{}, blob.data() + {}, {}, "
                          "cudaMemcpyHostToDevice), \"cudaMemcpy\");\n",
                          buffer.name, offsets[index], buffer.bytes());
  for (const TensorMap &map : tensorMaps)
    text += fmt::format("  b.{0}_map{1} = tpu_host::weightTensorMap(b.{0}, {2}, {3}, {4}, {1});\n",
                        buffers[map.buffer].name, map.boxRows, map.rows, map.cols, map.pitch);
  for (BlockArgument argument : main.getArguments()) {
    const Buffer &buffer = buffers[bufferIndex.lookup(argument)];
    text += fmt::format("  tpu_host::checkCuda(cudaMemcpy(b.{}, inputs[{}], {}, "
                        "cudaMemcpyHostToDevice), \"cudaMemcpy\");\n",
                        buffer.name, argument.getArgNumber(), buffer.bytes());
  }
  text += "  tpu_host::KernelTimer timer(kKernelCount);\n"
          "#ifndef TPU_CUDA_EMULATE\n"
          "  run(b, timer); // warm-up: module loading and clocks\n"
          "#endif\n"
          "  run(b, timer);\n"
          "  tpu_host::checkCuda(cudaGetLastError(), \"kernel launch\");\n"
          "  tpu_host::checkCuda(cudaDeviceSynchronize(), \"kernel execution\");\n";
  for (auto [index, output] : llvm::enumerate(ret.getOperands()))
    text += fmt::format("  tpu_host::checkCuda(cudaMemcpy(outputs[{}], b.{}, {}, "
                        "cudaMemcpyDeviceToHost), \"cudaMemcpy\");\n",
                        index, buffers[bufferIndex.lookup(output)].name,
                        elementsOf(shapeOf(output)) * 4);
  text += "  for (size_t i = 0; i < kKernelCount; ++i)\n"
          "    ms[i] = timer.milliseconds(i);\n";
  for (const Buffer &buffer : buffers)
    text += fmt::format("  cudaFree(b.{});\n", buffer.name);
  text += "}\n\n";

  text += "int main(int argc, char **argv) {\n"
          "  const tpu_host::Options options = tpu_host::parseOptions(argc, argv,\n"
          "      \"usage: model --data DIR [--report R.json] [--outputs DIR]\\n"
          "  DIR holds input_N.pb (and output_N.pb to check against)\\n\");\n"
          "  std::vector<tpu_host::HostTensor> inputs, outputs;\n";
  for (BlockArgument argument : main.getArguments()) {
    const Buffer &buffer = buffers[bufferIndex.lookup(argument)];
    text += fmt::format(
        "  {{\n    const std::string path = options.data + \"/input_{0}.pb\";\n"
        "    inputs.push_back(tpu_host::readTensor(path));\n"
        "    if (inputs.back().shape != std::vector<int64_t>{{{1}}})\n"
        "      tpu_host::fail(path + \": shape \" + tpu_host::formatShape(inputs.back().shape) + "
        "\", expected [{1}]\");\n  }}\n",
        argument.getArgNumber(), fmt::join(buffer.shape, ", "));
  }
  for (Value output : ret.getOperands()) {
    std::vector<int64_t> shape = shapeOf(output);
    text += fmt::format("  outputs.push_back({{{{{}}}, std::vector<float>({})}});\n",
                        fmt::join(shape, ", "), elementsOf(shape));
  }
  text += "  std::vector<const float *> in;\n"
          "  for (const tpu_host::HostTensor &input : inputs)\n"
          "    in.push_back(input.values.data());\n"
          "  std::vector<float *> out;\n"
          "  for (tpu_host::HostTensor &output : outputs)\n"
          "    out.push_back(output.values.data());\n"
          "  float ms[kKernelCount];\n"
          "  execute(in.data(), out.data(), ms);\n"
          "  bool pass = true;\n";
  for (auto [index, output] : llvm::enumerate(ret.getOperands())) {
    auto name = main.getResultAttrOfType<StringAttr>(index, kTensorNameAttr);
    text += fmt::format(
        "  {{\n    const std::string expected = options.data + \"/output_{0}.pb\";\n"
        "    if (tpu_host::fileExists(expected))\n"
        "      pass = tpu_host::checkOutput(\"{1}\", outputs[{0}], "
        "tpu_host::readTensor(expected), {2}).pass && pass;\n"
        "    else\n"
        "      std::printf(\"{1}: no %s, not compared\\n\", expected.c_str());\n"
        "    if (!options.outputs.empty())\n"
        "      tpu_host::writeTensor(options.outputs + \"/output_{0}.pb\", outputs[{0}]);\n  }}\n",
        index, name ? name.str() : fmt::format("output_{}", index), reductionLength.lookup(output));
  }
  text += "  std::printf(\"%-32s %10s %14s\\n\", \"kernel\", \"ms\", \"global bytes\");\n"
          "  for (size_t i = 0; i < kKernelCount; ++i)\n"
          "    std::printf(\"%-32s %10.4f %14llu\\n\", kKernels[i].name, ms[i],\n"
          "                static_cast<unsigned long long>(kKernels[i].global_bytes));\n";
  text += fmt::format("  if (!options.report.empty())\n"
                      "    tpu_host::writeReport(options.report, \"{}\", \"{}\", \"{}\", kKernels, "
                      "ms, kKernelCount, pass);\n"
                      "  return pass ? 0 : 1;\n}}\n\n}} // namespace model\n\n",
                      options.model_path, gpu.name, options.fusion);
  // After the driver, at the end of the file: the weights are data, not code
  // to read, and only the host pass compiles them.
  size_t executeAt = text.find("// Runs the model on host buffers");
  text = text.substr(0, executeAt) +
         "extern const char kWeights[];\nextern const size_t kWeightBytes;\n\n" +
         text.substr(executeAt);
  text += fmt::format("#ifdef TPU_CUDA_LIBRARY\n"
                      "constexpr size_t kModelInputs = {}, kModelOutputs = {};\n",
                      main.getNumArguments(), ret.getNumOperands());
  text += kEntryPoints;
  text += "\n"
          "// ===== weights: every constant, bf16 for tensor-core operands, base64 =====\n"
          "#if !defined(__CUDA_ARCH__)\n"
          "const char model::kWeights[] =\n";
  std::string encoded = base64(blob);
  constexpr size_t kLine = 96;
  for (size_t at = 0; at < encoded.size(); at += kLine)
    text += fmt::format("    \"{}\"\n", encoded.substr(at, kLine));
  text +=
      fmt::format("    \"\";\nconst size_t model::kWeightBytes = {};\n#endif\n", encoded.size());
  return text;
}

} // namespace

FailureOr<CudaSource> emitCuda(ModuleOp module, const CudaOptions &options) {
  const GpuTarget *gpu = findGpuTarget(options.gpu);
  if (!gpu)
    return module.emitError(fmt::format("unknown GPU '{}'", options.gpu));
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("no function @main");
  return Emitter(main, options, *gpu).run();
}

} // namespace mlir::tpu::cuda
