// The TPU dialect: registration, verifiers and folders.
#include "tpu/Dialect/TPUDialect.h"
#include "tpu/Dialect/TargetConfig.h"

#include "tpu/isa/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::tpu;

#include "tpu/Dialect/TPUOpsDialect.cpp.inc"
#include "tpu/Dialect/TPUOpsEnums.cpp.inc"

#include "tpu/Dialect/TPUInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tpu/Dialect/TPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tpu/Dialect/TPUTypes.cpp.inc"

namespace {
// Prints the target once, at the top, as `#target = #tpu.target<...>`.
struct TPUOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (!llvm::isa<TargetAttr>(attr))
      return AliasResult::NoAlias;
    os << "target";
    return AliasResult::FinalAlias;
  }
};
} // namespace

void TPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tpu/Dialect/TPUOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tpu/Dialect/TPUAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tpu/Dialect/TPUTypes.cpp.inc"
      >();
  addInterfaces<TPUOpAsmInterface>();
}

LogicalResult TPUDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  if (attribute.getName() != kTargetAttr)
    return success();
  if (!llvm::isa<ModuleOp>(op))
    return op->emitError() << "'" << kTargetAttr << "' belongs on the module";
  if (!llvm::isa<TargetAttr>(attribute.getValue()))
    return op->emitError() << "'" << kTargetAttr << "' must be a #tpu.target, got "
                           << attribute.getValue();
  return success();
}

mlir::tpu::TargetAttr mlir::tpu::targetOf(Operation *op) {
  auto module =
      llvm::isa<ModuleOp>(op) ? llvm::cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  return module ? module->getAttrOfType<TargetAttr>(kTargetAttr) : nullptr;
}

FailureOr<TargetAttr> mlir::tpu::getTarget(Operation *op) {
  if (TargetAttr target = targetOf(op))
    return target;
  return op->emitError() << "the module has no '" << kTargetAttr
                         << "' attribute naming the hardware (tpuc sets it from --config)";
}

//===----------------------------------------------------------------------===//
// Attribute parameters
//===----------------------------------------------------------------------===//

FailureOr<APFloat> mlir::tpu::parseReal(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return APFloat(value);
}

// The optional parameters' parsers run only when the parameter is in the
// text: absence never reaches them.
FailureOr<std::optional<APFloat>> mlir::tpu::parseOptionalReal(AsmParser &parser) {
  FailureOr<APFloat> value = parseReal(parser);
  if (failed(value))
    return failure();
  return std::optional<APFloat>(*value);
}

FailureOr<std::optional<uint32_t>> mlir::tpu::parseOptionalCount(AsmParser &parser) {
  uint32_t value = 0;
  if (parser.parseInteger(value))
    return failure();
  return std::optional<uint32_t>(value);
}

void mlir::tpu::printReal(AsmPrinter &printer, const APFloat &value) {
  // fmt's shortest form reads back as the same double.
  std::string text = fmt::format("{}", value.convertToDouble());
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  printer << text;
}

FailureOr<SmallVector<int64_t>> mlir::tpu::parseAddresses(AsmParser &parser) {
  SmallVector<int64_t> addresses;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&] { return parser.parseInteger(addresses.emplace_back()); }))
    return failure();
  return addresses;
}

void mlir::tpu::printAddresses(AsmPrinter &printer, ArrayRef<int64_t> addresses) {
  printer << '[';
  llvm::interleaveComma(addresses, printer);
  printer << ']';
}

//===----------------------------------------------------------------------===//
// The target
//===----------------------------------------------------------------------===//

namespace {
::tpu::HardwareConfig configOf(StringRef name, const APFloat &clockGhz, SystolicArrayAttr array,
                               MemoryAttr scratchpad, MemoryAttr accumulator, VectorUnitAttr vector,
                               DramAttr dram, EnergyAttr energy) {
  ::tpu::HardwareConfig config;
  config.name = name.str();
  config.clock_ghz = clockGhz.convertToDouble();
  config.array.rows = array.getRows();
  config.array.cols = array.getCols();
  config.array.dtype =
      array.getDtype() == ArrayDType::bf16 ? ::tpu::isa::DType::BF16 : ::tpu::isa::DType::I8;
  config.scratchpad = {scratchpad.getKib() * 1024, scratchpad.getBanks()};
  config.accumulator = {accumulator.getKib() * 1024, accumulator.getBanks()};
  config.vector.lanes = vector.getLanes();
  config.vector.pipeline_latency = vector.getPipelineLatency();
  // Left out, the transcendental figures get the defaults a config file
  // leaving them out gets: 1 cycle a group, and vector_element_pj.
  if (std::optional<uint32_t> cycles = vector.getTranscendentalCyclesPerGroup())
    config.vector.transcendental_cycles_per_group = *cycles;
  config.dram.bytes_per_cycle = dram.getBytesPerCycle().convertToDouble();
  config.dram.latency_cycles = dram.getLatencyCycles();
  config.dram.max_outstanding = dram.getMaxOutstanding();
  double vectorElementPj = energy.getVectorElementPj().convertToDouble();
  std::optional<APFloat> transcendentalPj = energy.getVectorTranscendentalPj();
  config.energy = {energy.getMacPj().convertToDouble(),
                   energy.getScratchpadWordPj().convertToDouble(),
                   energy.getAccumulatorWordPj().convertToDouble(),
                   vectorElementPj,
                   transcendentalPj ? transcendentalPj->convertToDouble() : vectorElementPj,
                   energy.getDramBytePj().convertToDouble(),
                   energy.getStaticMw().convertToDouble()};
  return config;
}
} // namespace

::tpu::HardwareConfig mlir::tpu::hardwareConfig(TargetAttr target) {
  return configOf(target.getName(), target.getClockGhz(), target.getArray(), target.getScratchpad(),
                  target.getAccumulator(), target.getVector(), target.getDram(),
                  target.getEnergy());
}

TargetAttr mlir::tpu::targetAttr(MLIRContext *context, const ::tpu::HardwareConfig &config) {
  auto memory = [&](const ::tpu::HardwareConfig::Memory &m) {
    return MemoryAttr::get(context, m.bytes / 1024, m.banks);
  };
  const auto &energy = config.energy;
  auto real = [](double value) { return APFloat(value); };
  return TargetAttr::get(
      context, config.name, real(config.clock_ghz),
      SystolicArrayAttr::get(context, config.array.rows, config.array.cols,
                             config.array.dtype == ::tpu::isa::DType::BF16 ? ArrayDType::bf16
                                                                           : ArrayDType::i8),
      memory(config.scratchpad), memory(config.accumulator),
      VectorUnitAttr::get(context, config.vector.lanes, config.vector.pipeline_latency,
                          config.vector.transcendental_cycles_per_group),
      DramAttr::get(context, real(config.dram.bytes_per_cycle), config.dram.latency_cycles,
                    config.dram.max_outstanding),
      EnergyAttr::get(context, real(energy.mac_pj), real(energy.scratchpad_word_pj),
                      real(energy.accumulator_word_pj), real(energy.vector_element_pj),
                      real(energy.vector_transcendental_pj), real(energy.dram_byte_pj),
                      real(energy.static_mw)));
}

// The checks a config file gets (docs/config.md), so that a target written
// in IR is held to the same ranges.
LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                                 APFloat clockGhz, SystolicArrayAttr array, MemoryAttr scratchpad,
                                 MemoryAttr accumulator, VectorUnitAttr vector, DramAttr dram,
                                 EnergyAttr energy) {
  try {
    configOf(name, clockGhz, array, scratchpad, accumulator, vector, dram, energy)
        .validate("#tpu.target");
  } catch (const ::tpu::Error &error) {
    return emitError() << error.what();
  }
  return success();
}

Operation *TPUDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                           Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

#define GET_OP_CLASSES
#include "tpu/Dialect/TPUOps.cpp.inc"

std::string mlir::tpu::sourceName(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return file.getLine() == 0 // a whole file, such as an ONNX model
               ? file.getFilename().str()
               : fmt::format("{}:{}:{}", file.getFilename().str(), file.getLine(),
                             file.getColumn());
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
    return fused.getLocations().empty() ? "" : sourceName(fused.getLocations().front());
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc))
    return sourceName(call.getCallee());
  return "";
}

bool mlir::tpu::readInPlace(Im2ColOp im2col) {
  return !im2col->use_empty() && llvm::all_of(im2col->getUsers(), [](Operation *user) {
    return llvm::isa<MatMulOp>(user) && user->getAttrOfType<ConvTilingAttr>(kTilingAttr);
  });
}

bool mlir::tpu::isFoldedLayout(Operation *op) {
  return llvm::isa_and_nonnull<TransposeOp>(op) && op->hasAttr(kLayoutFoldedAttr);
}

Value mlir::tpu::dramTensor(Value value) {
  while (llvm::isa_and_nonnull<ViewOp>(value.getDefiningOp()) ||
         isFoldedLayout(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

std::optional<uint64_t> mlir::tpu::dramAddress(Value value) {
  value = dramTensor(value);
  if (auto stored = value.getDefiningOp<StoredOp>())
    return uint64_t(stored.getAddress());
  if (auto constant = value.getDefiningOp<DramConstantOp>())
    return uint64_t(constant.getAddress());
  IntegerAttr address;
  if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
    if (auto function = llvm::dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      address = function.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kDramAddressAttr);
  } else {
    address = value.getDefiningOp()->getAttrOfType<IntegerAttr>(kDramAddressAttr);
  }
  if (!address)
    return std::nullopt;
  return uint64_t(address.getInt());
}

std::optional<Spread> mlir::tpu::spreadOf(ArrayRef<int64_t> matrix, ArrayRef<int64_t> operand) {
  if (operand == matrix)
    return Spread::Same;
  if (operand[0] == 1 && operand[1] == matrix[1])
    return Spread::Row;
  if (operand[0] == 1 && operand[1] == 1)
    return Spread::Scalar;
  if (operand[0] == matrix[0] && operand[1] == 1)
    return Spread::Column;
  return std::nullopt;
}

std::optional<Spread> mlir::tpu::spreadOf(Value full, Value operand) {
  auto matrixOf = [](Value value) {
    return matrixType(llvm::cast<RankedTensorType>(value.getType())).getShape();
  };
  return spreadOf(matrixOf(full), matrixOf(operand));
}

RankedTensorType mlir::tpu::matrixType(RankedTensorType type) {
  int64_t cols = type.getRank() == 0 ? 1 : type.getShape().back();
  return RankedTensorType::get({type.getNumElements() / cols, cols}, type.getElementType());
}

LogicalResult MatMulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (lhs[1] != rhs[0])
    return emitOpError() << "contraction sizes differ: lhs is " << lhs[0] << "x" << lhs[1]
                         << ", rhs is " << rhs[0] << "x" << rhs[1];
  if (result[0] != lhs[0] || result[1] != rhs[1])
    return emitOpError() << "result must be " << lhs[0] << "x" << rhs[1] << ", got " << result[0]
                         << "x" << result[1];
  return success();
}

LogicalResult BatchMatMulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (lhs[0] != rhs[0])
    return emitOpError() << "batch sizes differ: lhs has " << lhs[0] << ", rhs has " << rhs[0];
  if (lhs[2] != rhs[1])
    return emitOpError() << "contraction sizes differ: lhs is " << lhs[1] << "x" << lhs[2]
                         << ", rhs is " << rhs[1] << "x" << rhs[2];
  if (result[0] != lhs[0] || result[1] != lhs[1] || result[2] != rhs[2])
    return emitOpError() << "result must be " << lhs[0] << "x" << lhs[1] << "x" << rhs[2]
                         << ", got " << result[0] << "x" << result[1] << "x" << result[2];
  return success();
}

LogicalResult BinaryOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  if (getResult().getType() != getLhs().getType())
    return emitOpError("result type must equal the lhs type");
  if (!spreadOf(lhs, rhs))
    return emitOpError() << "rhs must be " << lhs[0] << "x" << lhs[1] << ", 1x" << lhs[1] << ", "
                         << lhs[0] << "x1 or 1x1, got " << rhs[0] << "x" << rhs[1];
  return success();
}

LogicalResult RowReduceOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (result[0] != input[0] || result[1] != 1)
    return emitOpError() << "result must be " << input[0] << "x1, got " << result[0] << "x"
                         << result[1];
  return success();
}

// A conversion between int32 words and fp32 keeps the shape.
template <typename Conversion> static LogicalResult verifyConversion(Conversion op) {
  if (op.getInput().getType().getShape() != op.getResult().getType().getShape())
    return op.emitOpError("result shape must equal the input shape");
  return success();
}

LogicalResult ToIntOp::verify() { return verifyConversion(*this); }

LogicalResult ToFloatOp::verify() { return verifyConversion(*this); }

LogicalResult ClampOp::verify() {
  ArrayRef<int64_t> bounds = getBounds().getType().getShape();
  if (bounds[0] != 1 || bounds[1] != 2)
    return emitOpError() << "bounds must be 1x2 (lo, hi), got " << bounds[0] << "x" << bounds[1];
  return success();
}

namespace {
// A padding fill row: one row of up to `length` values.
// `length`: the most values it may hold; none: any number.
LogicalResult verifyFill(Operation *op, Value fill, std::optional<int64_t> length) {
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(fill.getType()).getShape();
  if (shape[0] != 1 || shape[1] < 1 || (length && shape[1] > *length)) {
    InFlightDiagnostic error = op->emitOpError() << "fill must be one row of ";
    if (length)
      error << "1 to " << *length;
    else
      error << "at least 1";
    return error << " values, got " << shape[0] << "x" << shape[1];
  }
  return success();
}
} // namespace

namespace {
// The checks every data-moving op with an N-D input makes: the element type
// is kept, and the input, the result and the op's `what` attribute have one
// entry per axis.
LogicalResult verifyPerAxisCopy(Operation *op, RankedTensorType input, RankedTensorType result,
                                StringRef what, size_t entries) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError("element types differ");
  if (entries != size_t(input.getRank()) || result.getRank() != input.getRank())
    return op->emitOpError() << what << ", input and result must have one entry per axis, got "
                             << entries << ", " << input.getRank() << " and " << result.getRank();
  return success();
}
} // namespace

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  ArrayRef<int64_t> perms = getPerms();
  if (failed(verifyPerAxisCopy(*this, getInput().getType(), getResult().getType(), "perms",
                               perms.size())))
    return failure();
  SmallVector<bool> seen(perms.size(), false);
  for (auto [axis, from] : llvm::enumerate(perms)) {
    if (from < 0 || from >= int64_t(perms.size()) || seen[from])
      return emitOpError("perms must be a permutation of the axes");
    seen[from] = true;
    if (result[axis] != input[from])
      return emitOpError() << "result axis " << axis << " must have size " << input[from]
                           << " (input axis " << from << "), got " << result[axis];
  }
  return success();
}

namespace {
int64_t convolvedSize(int64_t size, int64_t padBefore, int64_t padAfter, int64_t kernel,
                      int64_t stride, int64_t dilation) {
  int64_t span = size + padBefore + padAfter - (kernel - 1) * dilation - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// Output rows (axis 0) or columns (axis 1) of a window op over its NHWC
// input: im2col's and the window reduction's alike.
template <typename WindowOp> int64_t windowOutputSize(WindowOp op, int axis) {
  return convolvedSize(op.getInput().getType().getShape()[1 + axis], op.getPad()[2 * axis],
                       op.getPad()[2 * axis + 1], op.getKernel()[axis], op.getStride()[axis],
                       op.getDilation()[axis]);
}
} // namespace

int64_t Im2ColOp::getOutputHeight() { return windowOutputSize(*this, 0); }

int64_t Im2ColOp::getOutputWidth() { return windowOutputSize(*this, 1); }

namespace {
// What im2col and a window reduction check alike: the window's sizes, that
// it fits the padded input, and a fill row where there is padding.
LogicalResult verifyWindow(Operation *op, ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                           ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation,
                           ArrayRef<int64_t> pad, Value fill, std::optional<int64_t> maxFill) {
  auto positive = [](ArrayRef<int64_t> values) {
    return values.size() == 2 && llvm::all_of(values, [](int64_t v) { return v >= 1; });
  };
  if (!positive(kernel) || !positive(stride) || !positive(dilation))
    return op->emitOpError("kernel, stride and dilation must be two positive sizes each");
  if (pad.size() != 4 || llvm::any_of(pad, [](int64_t v) { return v < 0; }))
    return op->emitOpError("pad must be four non-negative sizes (top, bottom, left, right)");
  if (convolvedSize(input[1], pad[0], pad[1], kernel[0], stride[0], dilation[0]) < 1 ||
      convolvedSize(input[2], pad[2], pad[3], kernel[1], stride[1], dilation[1]) < 1)
    return op->emitOpError("the window does not fit the padded input");
  // Without padding a fill row is optional: a convolution's plan may read
  // zeros from it.
  if (llvm::any_of(pad, [](int64_t v) { return v > 0; }) && !fill)
    return op->emitOpError("with padding needs a fill row");
  // Up to `maxFill` values, the caller's bound (none: any number).
  return fill ? verifyFill(op, fill, maxFill) : success();
}
} // namespace

LogicalResult Im2ColOp::verify() {
  if (failed(verifyWindow(*this, getInput().getType().getShape(), getKernel(), getStride(),
                          getDilation(), getPad(), getFill(),
                          // Any length: tpu-plan-tiles may zero a weight tile from it.
                          std::nullopt)))
    return failure();
  int64_t outputHeight = getOutputHeight(), outputWidth = getOutputWidth();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  int64_t rows = input[0] * outputHeight * outputWidth;
  int64_t cols = getKernel()[0] * getKernel()[1] * input[3];
  if (result[0] != rows || result[1] != cols)
    return emitOpError() << "result must be " << rows << "x" << cols << ", got " << result[0] << "x"
                         << result[1];
  return success();
}

int64_t WindowReduceOp::getOutputHeight() { return windowOutputSize(*this, 0); }

int64_t WindowReduceOp::getOutputWidth() { return windowOutputSize(*this, 1); }

LogicalResult WindowReduceOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  int64_t channels = input[3];
  if (failed(verifyWindow(*this, input, getKernel(), getStride(), getDilation(), getPad(),
                          getFill(), getKernel()[0] * channels)))
    return failure();
  // The DMA engine fills each padding pixel with one row of C values.
  if (getFill() && getFill().getType().getShape()[1] != channels)
    return emitOpError() << "fill must be one row of " << channels << " values";
  int64_t outputHeight = getOutputHeight(), outputWidth = getOutputWidth();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  int64_t rows = input[0] * outputHeight * outputWidth;
  if (result[0] != rows || result[1] != channels)
    return emitOpError() << "result must be " << rows << "x" << channels << ", got " << result[0]
                         << "x" << result[1];
  auto shapeIs = [](Value value, int64_t rows, int64_t cols) {
    ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(value.getType()).getShape();
    return shape[0] == rows && shape[1] == cols;
  };
  bool sum = getKind() == ReduceKind::sum;
  if (getWeights()) {
    int64_t taps = getKernel()[0] * getKernel()[1];
    if (!sum || getScale())
      return emitOpError("weights need kind sum and no scale");
    if (!shapeIs(getWeights(), taps, channels))
      return emitOpError() << "weights must be " << taps << "x" << channels;
    if (!getBias() || !(shapeIs(getBias(), 1, channels) || shapeIs(getBias(), 1, 1)))
      return emitOpError() << "weights need a bias of 1x" << channels << " or 1x1";
  } else if (getBias()) {
    return emitOpError("a bias needs weights");
  }
  if (getScale() && (!sum || !(shapeIs(getScale(), 1, 1) ||
                               shapeIs(getScale(), outputHeight * outputWidth, channels))))
    return emitOpError() << "scale needs kind sum and must be 1x1 or " << outputHeight * outputWidth
                         << "x" << channels;
  return success();
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  ArrayRef<int64_t> start = getStart();
  if (failed(verifyPerAxisCopy(*this, getInput().getType(), getResult().getType(), "start",
                               start.size())))
    return failure();
  for (size_t axis = 0; axis < input.size(); ++axis)
    if (start[axis] < 0 || start[axis] + result[axis] > input[axis])
      return emitOpError() << "axis " << axis << ": [" << start[axis] << ", "
                           << start[axis] + result[axis] << ") is outside the input's "
                           << input[axis];
  return success();
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> values = getValues().getType().getShape();
  ArrayRef<int64_t> indices = getIndices().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (indices[0] != 1 && indices[0] != values[0])
    return emitOpError() << "has " << indices[0] << " rows of indices for " << values[0]
                         << " tables (one row, or one per table)";
  if (result[0] != values[0] || result[1] != indices[1] || result[2] != values[2])
    return emitOpError() << "result must be " << values[0] << "x" << indices[1] << "x" << values[2];
  return success();
}

LogicalResult ConcatOp::verify() {
  ArrayRef<int64_t> result = getResult().getType().getShape();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= int64_t(result.size()))
    return emitOpError() << "axis " << axis << " is not an axis of the result";
  int64_t joined = 0;
  for (Value input : getInputs()) {
    auto type = llvm::cast<RankedTensorType>(input.getType());
    if (type.getElementType() != getResult().getType().getElementType())
      return emitOpError("element types differ");
    ArrayRef<int64_t> shape = type.getShape();
    if (shape.size() != result.size())
      return emitOpError("inputs and result must have the same rank");
    for (size_t d = 0; d < shape.size(); ++d)
      if (int64_t(d) != axis && shape[d] != result[d])
        return emitOpError() << "inputs must match the result on axis " << d;
    joined += shape[axis];
  }
  if (joined != result[axis])
    return emitOpError() << "the inputs add up to " << joined << " on axis " << axis
                         << ", the result has " << result[axis];
  return success();
}

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  ArrayRef<int64_t> low = getLow(), high = getHigh();
  if (failed(verifyPerAxisCopy(*this, getInput().getType(), getResult().getType(), "low",
                               low.size())) ||
      failed(verifyPerAxisCopy(*this, getInput().getType(), getResult().getType(), "high",
                               high.size())))
    return failure();
  if (failed(verifyFill(*this, getFill(), result.back())))
    return failure();
  for (size_t d = 0; d < input.size(); ++d) {
    if (low[d] < 0 || high[d] < 0)
      return emitOpError("padding must not be negative");
    if (result[d] != low[d] + input[d] + high[d])
      return emitOpError() << "result axis " << d << " must have size "
                           << low[d] + input[d] + high[d] << ", got " << result[d];
  }
  return success();
}

LogicalResult ViewOp::verify() {
  auto input = getInput().getType();
  auto result = getResult().getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("element types differ");
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "element counts differ: " << input.getNumElements() << " vs "
                         << result.getNumElements();
  return success();
}

OpFoldResult ViewOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  if (auto constant = llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return constant.reshape(getResult().getType());
  if (auto inner = getInput().getDefiningOp<ViewOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}
