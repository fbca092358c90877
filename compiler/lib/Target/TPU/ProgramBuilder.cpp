// What the lowering passes to the ISA level share (ProgramBuilder.h).
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/Target/TPU/IsaLimits.h"

#include "tpu/isa/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "mlir/Transforms/RegionUtils.h"

#include <fmt/format.h>

namespace tpu::codegen {

using isa::Field;
using isa::Opcode;
using isa::Queue;
using mlir::Value;
using mlir::tpu::Spread;

std::pair<int64_t, int64_t> matrixShape(Value value) {
  auto shape =
      mlir::tpu::matrixType(llvm::cast<mlir::RankedTensorType>(value.getType())).getShape();
  return {shape[0], shape[1]};
}

llvm::ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
}

isa::DType dramDType(Value value) {
  // A folded transpose's is its input's.
  value = mlir::tpu::dramTensor(value);
  if (mlir::Operation *op = value.getDefiningOp())
    if (auto name = op->getAttrOfType<mlir::StringAttr>(mlir::tpu::kDramDTypeAttr)) {
      if (name.getValue() != "bf16")
        throw Error(fmt::format("{} '{}' is not bf16", mlir::tpu::kDramDTypeAttr.str(),
                                name.getValue().str()));
      return isa::DType::BF16;
    }
  return llvm::cast<mlir::ShapedType>(value.getType()).getElementType().isInteger(32)
             ? isa::DType::I32
             : isa::DType::F32;
}

uint64_t dramBytesOf(Value value) {
  return uint64_t(llvm::cast<mlir::ShapedType>(value.getType()).getNumElements()) *
         isa::dtypeBytes(dramDType(value));
}

void unchargeDramBytes(mlir::func::FuncOp function,
                       const llvm::DenseMap<mlir::StringAttr, uint64_t> &bytes) {
  auto work = function->getAttrOfType<mlir::DictionaryAttr>(mlir::tpu::kWorkAttr);
  auto ops = work ? work.getAs<mlir::ArrayAttr>("source_ops") : nullptr;
  if (!ops || bytes.empty())
    return;
  mlir::Builder builder(function.getContext());
  llvm::SmallVector<mlir::Attribute> charged;
  for (mlir::Attribute op : ops) {
    auto entry = llvm::cast<mlir::DictionaryAttr>(op);
    auto name = entry.getAs<mlir::StringAttr>("name");
    auto counted = entry.getAs<mlir::IntegerAttr>("dram_bytes");
    uint64_t spared = name && counted ? bytes.lookup(name) : 0;
    if (spared == 0) {
      charged.push_back(entry);
      continue;
    }
    mlir::NamedAttrList fields(entry);
    uint64_t before = uint64_t(counted.getInt());
    fields.set("dram_bytes", builder.getI64IntegerAttr(int64_t(before - std::min(spared, before))));
    charged.push_back(fields.getDictionary(function.getContext()));
  }
  mlir::NamedAttrList fields(work);
  fields.set("source_ops", builder.getArrayAttr(charged));
  function->setAttr(mlir::tpu::kWorkAttr, fields.getDictionary(function.getContext()));
}

namespace {

// A transpose between attention's [N, S, H, D] and [N, H, S, D].
bool isHeadTranspose(mlir::tpu::TransposeOp transpose) {
  return transpose && transpose.getPerms() == llvm::ArrayRef<int64_t>{0, 2, 1, 3};
}

// Whether `batched` ([B, S, D]) is the [N, H, S, D] side `heads` viewed.
bool batchesHeads(Value batched, Value heads) {
  llvm::ArrayRef<int64_t> b = shapeOf(batched), h = shapeOf(heads);
  return b.size() == 3 && h.size() == 4 && b[0] == h[0] * h[1] && b[1] == h[2] && b[2] == h[3];
}

// Whether batched matmuls are the only readers of `result` (through views),
// each batching its [N, H, ...] heads, and as their weights where
// `asWeights`.
bool readByBatches(Value result, bool asWeights) {
  llvm::SmallVector<mlir::OpOperand *> uses = usesThroughViews(result);
  return !uses.empty() && llvm::all_of(uses, [&](mlir::OpOperand *use) {
    auto reader = llvm::dyn_cast<mlir::tpu::BatchMatMulOp>(use->getOwner());
    return reader && (!asWeights || use->getOperandNumber() == 1) &&
           batchesHeads(use->get(), result);
  });
}

// A key transpose its weight readers load in place (keyTransposeFolds).
bool isKeyTranspose(mlir::tpu::TransposeOp transpose) {
  return transpose && transpose.getPerms() == llvm::ArrayRef<int64_t>{0, 2, 3, 1} &&
         readByBatches(transpose.getResult(), /*asWeights=*/true);
}

// Whether only matrix products read `value` (through views, through
// convolutions' windows read in place: their bands go straight to the
// array, and through folded head transposes: their batched matmuls read
// the heads in place).
bool onlyArrayReads(Value value) {
  return llvm::all_of(value.getUses(), [](mlir::OpOperand &use) {
    mlir::Operation *user = use.getOwner();
    if (auto view = llvm::dyn_cast<mlir::tpu::ViewOp>(user))
      return onlyArrayReads(view.getResult());
    if (auto im2col = llvm::dyn_cast<mlir::tpu::Im2ColOp>(user))
      return use.get() == im2col.getInput() && mlir::tpu::readInPlace(im2col);
    if (auto transpose = llvm::dyn_cast<mlir::tpu::TransposeOp>(user))
      return transpose->hasAttr(mlir::tpu::kLayoutFoldedAttr) &&
             (isHeadTranspose(transpose) || isKeyTranspose(transpose)) &&
             onlyArrayReads(transpose.getResult());
    return llvm::isa<mlir::tpu::MatMulOp, mlir::tpu::BatchMatMulOp>(user);
  });
}

} // namespace

bool onlyTheArrayReads(Value value) {
  mlir::Operation *op = value.getDefiningOp();
  // Constants, and what the matrix and vector units store through a Matrix
  // of the result's dtype (not the data movement, which copies words).
  bool storesAnyDType =
      op && llvm::isa<mlir::arith::ConstantOp, mlir::tpu::DramConstantOp, mlir::tpu::FusedOp,
                      mlir::tpu::MatMulOp, mlir::tpu::BatchMatMulOp, mlir::tpu::BinaryOp,
                      mlir::tpu::UnaryOp, mlir::tpu::ClampOp, mlir::tpu::RowReduceOp,
                      mlir::tpu::WindowReduceOp>(op);
  return storesAnyDType && llvm::cast<mlir::ShapedType>(value.getType()).getElementType().isF32() &&
         !value.use_empty() && onlyArrayReads(value);
}

int64_t plannedElementBytes(Value value, bool narrow) {
  while (auto view = value.getDefiningOp<mlir::tpu::ViewOp>())
    value = view.getInput();
  return narrow && onlyTheArrayReads(value) ? 2 : int64_t(kWordBytes);
}

namespace {
// The folded layout transpose whose NHWC side `value` is: the one that
// defines it (through views), or the one its only use (through views)
// stores it into.
mlir::tpu::TransposeOp foldedLayoutOf(Value value) {
  // perms[1] is 2 from NCHW to NHWC, 3 from NHWC to NCHW; a head transpose
  // (perms[3] is 3) is no layout's.
  auto folded = [](mlir::tpu::TransposeOp transpose, int64_t channelAxis) {
    return transpose && transpose->hasAttr(mlir::tpu::kLayoutFoldedAttr) &&
                   transpose.getPerms()[1] == channelAxis && transpose.getPerms()[3] != 3 &&
                   !isKeyTranspose(transpose)
               ? transpose
               : nullptr;
  };
  for (Value read = value;;) {
    if (auto view = read.getDefiningOp<mlir::tpu::ViewOp>())
      read = view.getInput();
    else if (auto transpose = folded(read.getDefiningOp<mlir::tpu::TransposeOp>(), 2))
      return transpose;
    else
      break;
  }
  while (value.hasOneUse()) {
    mlir::Operation *user = *value.getUsers().begin();
    if (auto transpose = folded(llvm::dyn_cast<mlir::tpu::TransposeOp>(user), 3))
      return transpose;
    if (!llvm::isa<mlir::tpu::ViewOp>(user))
      break;
    value = user->getResult(0);
  }
  return nullptr;
}
} // namespace

int64_t nchwPixelsOf(Value value) {
  mlir::tpu::TransposeOp transpose = foldedLayoutOf(value);
  if (!transpose)
    return 0;
  llvm::ArrayRef<int64_t> nchw =
      shapeOf(transpose.getPerms()[1] == 2 ? transpose.getInput() : transpose.getResult());
  return nchw[2] * nchw[3];
}

Matrix matrixOf(Value value) {
  std::optional<uint64_t> address = mlir::tpu::dramAddress(value);
  if (!address)
    throw Error("an operand has no DRAM place; run tpu-plan-memory first");
  auto [rows, cols] = matrixShape(value);
  return Matrix{*address, rows, cols, dramDType(value), nchwPixelsOf(value)};
}

llvm::SmallVector<mlir::OpOperand *> usesThroughViews(Value value) {
  llvm::SmallVector<mlir::OpOperand *> uses;
  for (mlir::OpOperand &use : value.getUses())
    if (auto view = llvm::dyn_cast<mlir::tpu::ViewOp>(use.getOwner()))
      uses.append(usesThroughViews(view.getResult()));
    else
      uses.push_back(&use);
  return uses;
}

namespace {

// The batched matmul writing `transpose`'s input (through views) and read
// by nothing else.
mlir::tpu::BatchMatMulOp headWriter(mlir::tpu::TransposeOp transpose) {
  Value value = transpose.getInput();
  while (auto view = value.getDefiningOp<mlir::tpu::ViewOp>())
    value = view.getInput();
  auto writer = value.getDefiningOp<mlir::tpu::BatchMatMulOp>();
  llvm::SmallVector<mlir::OpOperand *> uses;
  if (writer)
    uses = usesThroughViews(writer.getResult());
  return writer && uses.size() == 1 && uses.front()->getOwner() == transpose &&
                 batchesHeads(writer.getResult(), transpose.getInput())
             ? writer
             : nullptr;
}

// Whether batched matmuls are the only readers of `transpose`'s result
// (through views), each batching its heads: they load them from its input.
bool readByHeadBatches(mlir::tpu::TransposeOp transpose) {
  return readByBatches(transpose.getResult(), /*asWeights=*/false);
}
} // namespace

bool keyTransposeFolds(mlir::tpu::TransposeOp transpose) { return isKeyTranspose(transpose); }

bool headTransposeFolds(mlir::tpu::TransposeOp transpose) {
  return isHeadTranspose(transpose) && (readByHeadBatches(transpose) || headWriter(transpose));
}

mlir::tpu::TransposeOp headTransposeOf(Value value) {
  auto folded = [](mlir::tpu::TransposeOp transpose) {
    return isHeadTranspose(transpose) && transpose->hasAttr(mlir::tpu::kLayoutFoldedAttr);
  };
  // Read: the transpose's result, where its readers load it (which the
  // lowering of its writer, replacing it, leaves true).
  for (Value read = value;;) {
    if (auto view = read.getDefiningOp<mlir::tpu::ViewOp>()) {
      read = view.getInput();
    } else {
      auto transpose = read.getDefiningOp<mlir::tpu::TransposeOp>();
      if (folded(transpose) && readByHeadBatches(transpose))
        return transpose;
      break;
    }
  }
  // Written: its only reader is a transpose its readers do not load.
  if (auto writer = value.getDefiningOp<mlir::tpu::BatchMatMulOp>()) {
    llvm::SmallVector<mlir::OpOperand *> uses = usesThroughViews(value);
    auto transpose = uses.size() == 1
                         ? llvm::dyn_cast<mlir::tpu::TransposeOp>(uses.front()->getOwner())
                         : nullptr;
    if (folded(transpose) && !readByHeadBatches(transpose) && headWriter(transpose) == writer)
      return transpose;
  }
  return nullptr;
}

Matrix batchOf(Value value, const Matrix &all, int64_t batch) {
  llvm::ArrayRef<int64_t> shape = shapeOf(value);
  const int64_t rows = shape[1], cols = shape[2];
  Matrix matrix{all.address, rows, cols, all.dtype};
  int64_t first = batch * rows * cols;
  if (mlir::tpu::TransposeOp transpose = headTransposeOf(value)) {
    // The [N, H, S, D] side is the one `value` views.
    const int64_t heads =
        shapeOf(readByHeadBatches(transpose) ? transpose.getResult() : transpose.getInput())[1];
    first = ((batch / heads) * rows * heads + batch % heads) * cols;
    matrix.stride = heads * cols;
  }
  Value read = value;
  while (auto view = read.getDefiningOp<mlir::tpu::ViewOp>())
    read = view.getInput();
  if (auto transpose = read.getDefiningOp<mlir::tpu::TransposeOp>();
      transpose && transpose->hasAttr(mlir::tpu::kLayoutFoldedAttr) && isKeyTranspose(transpose)) {
    // Head b of the [N, S, H, D] keys: S DRAM rows of its D keys, H*D apart.
    llvm::ArrayRef<int64_t> keys = shapeOf(transpose.getInput());
    const int64_t heads = keys[2];
    first = ((batch / heads) * keys[1] * heads + batch % heads) * keys[3];
    matrix.pixels = rows;
    matrix.stride = heads * keys[3];
  }
  matrix.address += uint64_t(first) * isa::dtypeBytes(all.dtype);
  return matrix;
}

ConvShape convShapeOf(mlir::tpu::Im2ColOp im2col, int64_t outputs) {
  ConvShape shape = convShape(shapeOf(im2col.getInput()), im2col.getKernel(), im2col.getStride(),
                              im2col.getDilation(), im2col.getPad(),
                              {im2col.getOutputHeight(), im2col.getOutputWidth()}, outputs);
  shape.channelMajor = nchwPixelsOf(im2col.getInput()) > 0;
  return shape;
}

std::string sourceName(mlir::Operation *op) {
  if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op))
    return sourceName(&fused.getHead());
  std::string name = mlir::tpu::sourceName(op->getLoc());
  return name.empty() ? op->getName().getStringRef().str() : name;
}

//===----------------------------------------------------------------------===//
// ProgramBuilder
//===----------------------------------------------------------------------===//

void ProgramBuilder::setSource(mlir::Operation *op) {
  if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op))
    return setSource(&fused.getHead());
  location = llvm::isa<mlir::NameLoc>(op->getLoc())
                 ? op->getLoc()
                 : mlir::NameLoc::get(builder.getStringAttr(sourceName(op)), op->getLoc());
}

void ProgramBuilder::emit(const isa::Instruction &instruction) {
  mlir::tpu::createInstruction(builder, location, instruction);
}

Value ProgramBuilder::signal(Queue from, Queue to, bool weightLoadsOnly) {
  return builder.create<mlir::tpu::SignalOp>(location, mlir::tpu::dialectQueue(from),
                                             mlir::tpu::dialectQueue(to), weightLoadsOnly);
}

void ProgramBuilder::await(Value token) { builder.create<mlir::tpu::AwaitOp>(location, token); }

void ProgramBuilder::dependsOn(Queue from, Queue to) {
  builder.create<mlir::tpu::DependOp>(location, mlir::tpu::dialectQueue(from),
                                      mlir::tpu::dialectQueue(to));
}

void ProgramBuilder::beforeLoad() {
  dependsOn(Queue::Compute, Queue::Load);
  dependsOn(Queue::Store, Queue::Load);
}

void ProgramBuilder::beforeCompute() {
  dependsOn(Queue::Load, Queue::Compute);
  dependsOn(Queue::Store, Queue::Compute);
}

void ProgramBuilder::beforeStore() { dependsOn(Queue::Compute, Queue::Store); }

namespace {
// The rows x cols a transfer of a block moves: the block itself, or where
// its DRAM rows are `cols` apart (contiguous, as the on-chip block always
// is) the fewest, longest rows that divide it. Each DMA row is one
// request, and requests in flight are limited, so short rows are bound by
// the DRAM latency, not the bus (a 128-byte weight row on 128x128: 1.6
// cycles where the bus takes 1).
std::pair<int64_t, int64_t> coalescedShape(int64_t rows, int64_t cols, int64_t dramStride) {
  if (dramStride != cols || rows == 1)
    return {rows, cols};
  const int64_t elements = rows * cols;
  for (int64_t longest = std::min(elements, kMaxCols); longest > cols; --longest)
    if (elements % longest == 0 && elements / longest <= kMaxDmaRows)
      return {elements / longest, longest};
  return {rows, cols};
}

isa::Instruction dma(Opcode opcode, const Matrix &dram, int64_t row, int64_t col, int64_t rows,
                     int64_t cols, isa::Space space, uint64_t sramAddress, int64_t sramStride) {
  // Rows dense on chip may coalesce with rows dense in DRAM.
  auto [dmaRows, dmaCols] = sramStride == cols ? coalescedShape(rows, cols, dram.rowStride())
                                               : std::pair<int64_t, int64_t>{rows, cols};
  return isa::makeInstruction(
      opcode, {{Field::DramAddr, dram.at(row, col)},
               {Field::DramStride, uint64_t(dmaCols == cols ? dram.rowStride() : dmaCols)},
               {Field::Space, uint64_t(space)},
               {Field::SramAddr, sramAddress},
               {Field::SramStride, uint64_t(dmaCols == cols ? sramStride : dmaCols)},
               {Field::Rows, uint64_t(dmaRows)},
               {Field::Cols, uint64_t(dmaCols)},
               {Field::DType, uint64_t(dram.dtype)}});
}
} // namespace

void ProgramBuilder::load(const Matrix &source, int64_t row, int64_t col, int64_t rows,
                          int64_t cols, isa::Space space, uint64_t sramAddress,
                          int64_t sramStride) {
  transfer(Opcode::DmaLoad, source, row, col, rows, cols, space, sramAddress,
           sramStride ? sramStride : cols);
}

void ProgramBuilder::repeatRow(const Matrix &source, int64_t col, int64_t cols, int64_t copies,
                               uint64_t sramAddress) {
  if (copies == 1)
    return load(source, 0, col, 1, cols, isa::Space::Scratchpad, sramAddress);
  loadRows(*this, source, source.at(0, col), 0, sramAddress, cols, copies, cols);
}

void ProgramBuilder::store(const Matrix &target, int64_t row, int64_t col, int64_t rows,
                           int64_t cols, isa::Space space, uint64_t sramAddress,
                           int64_t sramStride) {
  transfer(Opcode::DmaStore, target, row, col, rows, cols, space, sramAddress,
           sramStride ? sramStride : cols);
}

std::optional<Span> ProgramBuilder::lastStoreFrom(isa::Space space) const {
  mlir::Block *block = builder.getInsertionBlock();
  for (mlir::Block::iterator it = builder.getInsertionPoint(); it != block->begin();) {
    auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(*--it);
    if (!inst)
      continue;
    isa::Instruction instruction = mlir::tpu::instructionOf(inst);
    if (instruction.opcode != Opcode::DmaStore || instruction.get(Field::Space) != uint64_t(space))
      continue;
    std::optional<Span> read;
    forEachSpan(instruction, 0, [&](Field, const Span &span) { read = span; });
    return read;
  }
  return std::nullopt;
}

// An NCHW matrix's tile: per image, its pixels are contiguous in each
// channel's DRAM row, so one transposing transfer of `cols` channels by the
// image's pixels in the tile lands them as dense pixel rows on chip.
void ProgramBuilder::transfer(Opcode opcode, const Matrix &dram, int64_t row, int64_t col,
                              int64_t rows, int64_t cols, isa::Space space, uint64_t sramAddress,
                              int64_t sramStride) {
  if (dram.pixels == 0)
    return emit(dma(opcode, dram, row, col, rows, cols, space, sramAddress, sramStride));
  const int64_t channelStride = dram.stride ? dram.stride : dram.pixels;
  for (int64_t r = row; r < row + rows;) {
    int64_t image = r / dram.pixels, pixel = r % dram.pixels;
    int64_t span = std::min({row + rows - r, dram.pixels - pixel, kMaxCols});
    for (int64_t c0 = 0; c0 < cols; c0 += kMaxDmaRows) {
      int64_t first = (image * dram.cols + col + c0) * channelStride + pixel;
      emit(isa::makeInstruction(
          opcode, {{Field::DramAddr, dram.address + uint64_t(first) * isa::dtypeBytes(dram.dtype)},
                   {Field::DramStride, uint64_t(channelStride)},
                   {Field::Space, uint64_t(space)},
                   {Field::SramAddr, sramAddress + uint64_t((r - row) * sramStride + c0)},
                   {Field::SramStride, uint64_t(sramStride)},
                   {Field::Rows, uint64_t(std::min(kMaxDmaRows, cols - c0))},
                   {Field::Cols, uint64_t(span)},
                   {Field::DType, uint64_t(dram.dtype)},
                   {Field::Transpose, 1}}));
    }
    r += span;
  }
}

void loadRows(ProgramBuilder &builder, const Matrix &from, uint64_t dram, int64_t dramStride,
              uint64_t sram, int64_t sramStride, int64_t rows, int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxDmaRows)
    builder.emit(isa::makeInstruction(
        Opcode::DmaLoad,
        {{Field::DramAddr, dram + uint64_t(r0 * dramStride) * isa::dtypeBytes(from.dtype)},
         {Field::DramStride, uint64_t(dramStride)},
         {Field::Space, uint64_t(isa::Space::Scratchpad)},
         {Field::SramAddr, sram + uint64_t(r0 * sramStride)},
         {Field::SramStride, uint64_t(sramStride)},
         {Field::Rows, uint64_t(std::min(kMaxDmaRows, rows - r0))},
         {Field::Cols, uint64_t(cols)},
         {Field::DType, uint64_t(from.dtype)}}));
}

//===----------------------------------------------------------------------===//
// The vector unit's steps
//===----------------------------------------------------------------------===//

isa::Instruction vectorOp(Opcode opcode, uint64_t dst, uint64_t src, int64_t rows, int64_t cols) {
  auto sp = uint64_t(isa::Space::Scratchpad);
  return isa::makeInstruction(opcode, {{Field::DstSpace, sp},
                                       {Field::DstAddr, dst},
                                       {Field::SrcSpace, sp},
                                       {Field::SrcAddr, src},
                                       {Field::Rows, uint64_t(rows)},
                                       {Field::Cols, uint64_t(cols)}});
}

isa::Instruction vectorOp(Opcode opcode, uint64_t dst, uint64_t src, uint64_t src2,
                          isa::Broadcast broadcast, int64_t rows, int64_t cols) {
  return vectorOp(opcode, dst, src, rows, cols)
      .set(Field::Src2Space, uint64_t(isa::Space::Scratchpad))
      .set(Field::Src2Addr, src2)
      .set(Field::Broadcast, uint64_t(broadcast));
}

Opcode binaryOpcode(mlir::tpu::BinaryKind kind) {
  switch (kind) {
  case mlir::tpu::BinaryKind::add:
    return Opcode::VAdd;
  case mlir::tpu::BinaryKind::sub:
    return Opcode::VSub;
  case mlir::tpu::BinaryKind::mul:
    return Opcode::VMul;
  case mlir::tpu::BinaryKind::max:
    return Opcode::VMax;
  case mlir::tpu::BinaryKind::min:
    return Opcode::VMin;
  case mlir::tpu::BinaryKind::gt:
    return Opcode::VGreater;
  case mlir::tpu::BinaryKind::ge:
    return Opcode::VGreaterEqual;
  case mlir::tpu::BinaryKind::eq:
    return Opcode::VEqual;
  }
  llvm_unreachable("unknown binary kind");
}

std::optional<Opcode> unaryOpcode(mlir::tpu::UnaryKind kind) {
  switch (kind) {
  case mlir::tpu::UnaryKind::relu:
    return Opcode::VRelu;
  case mlir::tpu::UnaryKind::exp:
    return Opcode::VExp;
  case mlir::tpu::UnaryKind::reciprocal:
    return Opcode::VRecip;
  case mlir::tpu::UnaryKind::rsqrt:
    return Opcode::VRsqrt;
  case mlir::tpu::UnaryKind::sigmoid:
    return Opcode::VSigmoid;
  case mlir::tpu::UnaryKind::tanh:
    return Opcode::VTanh;
  case mlir::tpu::UnaryKind::log:
    return Opcode::VLog;
  case mlir::tpu::UnaryKind::copy:
    return std::nullopt; // the DMA round trip is the copy
  }
  llvm_unreachable("unknown unary kind");
}

VectorStep elementwiseStep(mlir::Operation &op, Value input) {
  if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op)) {
    // `input` may be a fused intermediate, which has a shape but no place.
    auto [rows, cols] = matrixShape(input);
    Matrix other = matrixOf(binary.getLhs() == input ? binary.getRhs() : binary.getLhs());
    return {other, *mlir::tpu::spreadOf({rows, cols}, {other.rows, other.cols}),
            binaryOpcode(binary.getKind()), &op};
  }
  if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op))
    return {{}, Spread::Same, unaryOpcode(unary.getKind()), &op};
  if (auto clamp = llvm::dyn_cast<mlir::tpu::ClampOp>(op))
    return {matrixOf(clamp.getBounds()), Spread::Scalar, Opcode::VClamp, &op};
  if (llvm::isa<mlir::tpu::ToIntOp>(op))
    return {{}, Spread::Same, Opcode::VCvtF2I, &op};
  if (llvm::isa<mlir::tpu::ToFloatOp>(op))
    return {{}, Spread::Same, Opcode::VCvtI2F, &op};
  throw Error(fmt::format("'{}' is not elementwise", op.getName().getStringRef().str()));
}

std::vector<VectorStep> epilogueSteps(mlir::tpu::FusedOp group) {
  std::vector<VectorStep> steps;
  Value chain = group.getHead().getResult(0);
  for (mlir::Operation &member : llvm::drop_begin(group.getMembers())) {
    if (auto pool = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(member)) {
      VectorStep step{{},
                      Spread::Same,
                      pool.getKind() == mlir::tpu::ReduceKind::max ? Opcode::VMax : Opcode::VAdd,
                      &member};
      step.poolStride = pool.getStride()[0];
      steps.push_back(step);
      if (pool.getScale())
        steps.push_back({matrixOf(pool.getScale()), Spread::Scalar, Opcode::VMul, &member});
    } else if (!llvm::isa<mlir::tpu::ViewOp>(member)) {
      steps.push_back(elementwiseStep(member, chain));
    }
    chain = member.getResult(0);
  }
  return steps;
}

int64_t pooledPosition(int64_t row, int64_t column, int64_t bandRows, int64_t width,
                       int64_t poolStride) {
  const int64_t s = poolStride, block = row % s * s + column % s;
  return block * (bandRows / s) * (width / s) + row / s * (width / s) + column / s;
}

isa::Broadcast broadcastOf(Spread spread) {
  switch (spread) {
  case Spread::Same:
    return isa::Broadcast::None;
  case Spread::Row:
    return isa::Broadcast::Row;
  case Spread::Scalar:
    return isa::Broadcast::Scalar;
  case Spread::Column:
    return isa::Broadcast::Column;
  }
  llvm_unreachable("unknown spread");
}

void loadOperand(ProgramBuilder &builder, const VectorStep &step, int64_t r0, int64_t c0,
                 int64_t rows, int64_t cols, uint64_t address, const HardwareConfig &config) {
  switch (step.spread) {
  case Spread::Same:
    return builder.load(step.operand, r0, c0, rows, cols, isa::Space::Scratchpad, address);
  case Spread::Row:
    return builder.repeatRow(step.operand, c0, cols, rowCopies(step, rows, cols, config), address);
  case Spread::Scalar:
    return builder.load(step.operand, 0, 0, 1, step.operand.cols, isa::Space::Scratchpad, address);
  case Spread::Column:
    return builder.load(step.operand, r0, 0, rows, 1, isa::Space::Scratchpad, address);
  }
}

namespace {

// The groups of `lanes` words a vector op on rows x cols takes.
int64_t laneGroups(int64_t rows, int64_t cols, int64_t lanes) {
  return rows * ((cols + lanes - 1) / lanes);
}

} // namespace

std::pair<int64_t, int64_t> denseShape(int64_t rows, int64_t cols, int64_t lanes) {
  static const int64_t maxRows = int64_t(isa::fieldMaximum(isa::Opcode::VAdd, isa::Field::Rows));
  const int64_t elements = rows * cols;
  auto groups = [&](int64_t c) { return laneGroups(elements / c, c, lanes); };
  std::pair<int64_t, int64_t> best{rows, cols};
  for (int64_t c = 1; c <= std::min(elements, kMaxCols); ++c)
    if (elements % c == 0 && elements / c <= maxRows && groups(c) < groups(best.second))
      best = {elements / c, c};
  return best;
}

int64_t rowCopies(const VectorStep &step, int64_t rows, int64_t cols,
                  const HardwareConfig &config) {
  // (An NCHW view's row is no DRAM row.)
  if (!step.foldsRows || step.spread != Spread::Row || step.operand.rows == 0 ||
      step.operand.pixels != 0)
    return 1;
  const int64_t lanes = int64_t(config.vector.lanes);
  const int64_t room = std::min(std::max(cols, lanes), kMaxCols);
  auto groups = [&](int64_t copies) { return laneGroups(rows / copies, copies * cols, lanes); };
  const double copyCycles =
      std::ceil(double(cols * isa::dtypeBytes(step.operand.dtype)) / config.dram.bytes_per_cycle);
  int64_t best = 1;
  for (int64_t copies = 2; copies * cols <= room; ++copies)
    if (rows % copies == 0 && groups(copies) < groups(best) &&
        double(groups(1) - groups(copies)) > double(copies - 1) * copyCycles)
      best = copies;
  return best;
}

std::pair<int64_t, int64_t> laneShape(const VectorStep &step, int64_t rows, int64_t cols,
                                      const HardwareConfig &config) {
  if (step.operand.rows && step.spread == Spread::Row) {
    const int64_t copies = rowCopies(step, rows, cols, config);
    return {rows / copies, cols * copies};
  }
  if (step.operand.rows && step.spread == Spread::Column)
    return {rows, cols};
  return denseShape(rows, cols, int64_t(config.vector.lanes));
}

void emitStep(ProgramBuilder &builder, const VectorStep &step, uint64_t dst, uint64_t src,
              uint64_t operand, int64_t rows, int64_t cols, const HardwareConfig &config) {
  std::tie(rows, cols) = laneShape(step, rows, cols, config);
  if (step.operand.rows == 0) {
    builder.emit(vectorOp(*step.opcode, dst, src, rows, cols));
  } else {
    builder.emit(vectorOp(*step.opcode, dst, src, operand, broadcastOf(step.spread), rows, cols));
  }
}

void throwNoPlan() { throw Error("has no tiling; run tpu-plan-tiles first"); }

//===----------------------------------------------------------------------===//
// Lowering in place
//===----------------------------------------------------------------------===//

mlir::LogicalResult lowerInPlace(mlir::Operation *op, mlir::PatternRewriter &rewriter,
                                 llvm::function_ref<void(ProgramBuilder &)> lower) {
  rewriter.setInsertionPoint(op);
  mlir::Operation *before = op->getPrevNode();
  ProgramBuilder builder(rewriter);
  builder.setSource(op);
  try {
    lower(builder);
  } catch (const Error &error) {
    // A pattern that fails leaves the IR as it was.
    while (op->getPrevNode() != before)
      rewriter.eraseOp(op->getPrevNode());
    op->emitError(error.what());
    return mlir::failure();
  }
  // What the instructions read: the operands, and what a group reads from
  // outside.
  llvm::SetVector<Value> inputs(op->getOperands().begin(), op->getOperands().end());
  for (mlir::Region &region : op->getRegions())
    mlir::getUsedValuesDefinedAbove(region, inputs);
  rewriter.setInsertionPoint(op);
  llvm::SmallVector<Value> stored;
  for (Value result : op->getResults()) {
    auto storedOp = rewriter.create<mlir::tpu::StoredOp>(op->getLoc(), result.getType(),
                                                         int64_t(*mlir::tpu::dramAddress(result)),
                                                         inputs.getArrayRef());
    if (mlir::Attribute dtype = op->getAttr(mlir::tpu::kDramDTypeAttr))
      storedOp->setAttr(mlir::tpu::kDramDTypeAttr, dtype);
    stored.push_back(storedOp);
  }
  rewriter.replaceOp(op, stored);
  return mlir::success();
}

mlir::LogicalResult applyToEach(mlir::func::FuncOp function,
                                const mlir::FrozenRewritePatternSet &patterns,
                                llvm::function_ref<bool(mlir::Operation *)> lowers) {
  llvm::SmallVector<mlir::Operation *> ops;
  for (mlir::Operation &op : function.getBody().front())
    if (lowers(&op))
      ops.push_back(&op);
  mlir::PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  mlir::PatternRewriter rewriter(function.getContext());
  bool lowered = true;
  for (mlir::Operation *op : ops)
    lowered &= mlir::succeeded(applicator.matchAndRewrite(op, rewriter));
  return mlir::success(lowered); // an operation that stays: its pattern reported why
}

} // namespace tpu::codegen
