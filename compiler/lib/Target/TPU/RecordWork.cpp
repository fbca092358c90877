// tpu-record-work: what each source op cannot do without, recorded on the
// function as `tpu.work` for the bundle, from which the simulator computes
// the roofline (docs/simulator.md#roofline).
//
// Runs on the planned TPU dialect, before the lowering to instructions, and
// charges work to source ops exactly as the lowering attributes instructions
// (ProgramBuilder::setSource): an op on its own, or a row group, moves every
// tensor under its (first) op's name; a matmul group loads its matmul's
// operands and stores its result under the matmul's name and each epilogue
// operand under the epilogue op's; every op's arithmetic is its own.
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/Target/TPU/WindowPlan.h"
#include "tpu/isa/Bundle.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <set>

namespace mlir::tpu {
#define GEN_PASS_DEF_RECORDWORK
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

namespace tpu::codegen {
namespace {

using mlir::Value;

uint64_t elementsOf(Value value) {
  return uint64_t(llvm::cast<mlir::ShapedType>(value.getType()).getNumElements());
}

// How many of `size` positions along an axis some window of an im2col reads.
int64_t coveredPositions(int64_t size, int64_t outputs, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t before) {
  std::vector<bool> covered(size_t(size), false);
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t k = 0; k < kernel; ++k)
      if (int64_t at = o * stride + k * dilation - before; at >= 0 && at < size)
        covered[size_t(at)] = true;
  return std::count(covered.begin(), covered.end(), true);
}

// The bytes of `operand` that `op` must read at least once: all of them,
// except where it reads a part: a slice its box, a gather at most a row per
// index, an im2col the input positions some window covers.
uint64_t neededBytes(mlir::Operation &op, Value operand) {
  uint64_t all = dramBytesOf(operand);
  uint64_t elementBytes = isa::dtypeBytes(dramDType(operand));
  if (llvm::isa<mlir::tpu::SliceOp>(op))
    return std::min(all, elementsOf(op.getResult(0)) * elementBytes);
  if (auto gather = llvm::dyn_cast<mlir::tpu::GatherOp>(op);
      gather && operand == gather.getValues())
    return std::min(all, elementsOf(gather.getResult()) * elementBytes);
  auto windowed = [&](auto window) {
    llvm::ArrayRef<int64_t> shape = window.getInput().getType().getShape();
    int64_t rows =
        coveredPositions(shape[1], window.getOutputHeight(), window.getKernel()[0],
                         window.getStride()[0], window.getDilation()[0], window.getPad()[0]);
    int64_t cols =
        coveredPositions(shape[2], window.getOutputWidth(), window.getKernel()[1],
                         window.getStride()[1], window.getDilation()[1], window.getPad()[2]);
    return all / uint64_t(shape[1] * shape[2]) * uint64_t(rows * cols);
  };
  if (auto im2col = llvm::dyn_cast<mlir::tpu::Im2ColOp>(op); im2col && operand == im2col.getInput())
    return windowed(im2col);
  if (auto window = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(op);
      window && operand == window.getInput())
    return windowed(window);
  return all;
}

class WorkLedger {
public:
  // The arithmetic of one op: its matrix products and its vector elements.
  void compute(mlir::Operation &op) {
    SourceWork &work = work_[sourceName(&op)];
    auto vector = [&](uint64_t elements, std::optional<isa::Opcode> opcode) {
      if (!opcode)
        return; // a copy: the DMA round trip is the copy
      work.vector_elements += elements;
      if (isa::isTranscendental(*opcode))
        work.transcendental_elements += elements;
    };
    if (auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(op)) {
      auto [m, k] = matrixShape(matmul.getLhs());
      int64_t n = matrixShape(matmul.getRhs()).second;
      // A convolution on chip skips its padding taps.
      if (auto conv = matmul->getAttrOfType<mlir::tpu::ConvTilingAttr>(mlir::tpu::kTilingAttr))
        m = convStreamedRows(convShapeOf(matmul.getLhs().getDefiningOp<mlir::tpu::Im2ColOp>(), n),
                             conv.getTileK());
      work.gemms.push_back({1, uint64_t(m), uint64_t(k), uint64_t(n)});
    } else if (auto batch = llvm::dyn_cast<mlir::tpu::BatchMatMulOp>(op)) {
      llvm::ArrayRef<int64_t> lhs = batch.getLhs().getType().getShape();
      work.gemms.push_back({uint64_t(lhs[0]), uint64_t(lhs[1]), uint64_t(lhs[2]),
                            uint64_t(batch.getRhs().getType().getShape()[2])});
    } else if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op)) {
      vector(elementsOf(binary.getResult()), binaryOpcode(binary.getKind()));
    } else if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op)) {
      vector(elementsOf(unary.getResult()), unaryOpcode(unary.getKind()));
    } else if (auto clamp = llvm::dyn_cast<mlir::tpu::ClampOp>(op)) {
      vector(elementsOf(clamp.getResult()), isa::Opcode::VClamp);
    } else if (auto toInt = llvm::dyn_cast<mlir::tpu::ToIntOp>(op)) {
      vector(elementsOf(toInt.getResult()), isa::Opcode::VCvtF2I);
    } else if (auto toFloat = llvm::dyn_cast<mlir::tpu::ToFloatOp>(op)) {
      vector(elementsOf(toFloat.getResult()), isa::Opcode::VCvtI2F);
    } else if (auto reduce = llvm::dyn_cast<mlir::tpu::RowReduceOp>(op)) {
      vector(elementsOf(reduce.getInput()), isa::Opcode::VRowSum);
    } else if (auto window = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(op)) {
      // Per output element: combining its taps (those of the kernel rows
      // the lowering combines, WindowLayout::rowTaps) takes one op fewer
      // than taps, and weights one multiply per tap and the bias, or the
      // scale.
      const WindowLayout layout = windowLayoutOf(window);
      const ConvShape &shape = layout.shape;
      uint64_t ops = 0;
      for (int64_t oh = 0; oh < shape.outHeight; ++oh) {
        uint64_t taps = uint64_t(layout.rowTaps(oh) * shape.kernel[1]);
        ops += taps - 1 + (window.getWeights() ? taps + 1 : 0) + (window.getScale() ? 1 : 0);
      }
      vector(elementsOf(window.getResult()) / uint64_t(shape.outHeight) * ops, isa::Opcode::VAdd);
    }
  }

  // `name`'s instructions read `needed` bytes of `value`'s DRAM tensor.
  void read(const std::string &name, Value value, uint64_t needed) {
    uint64_t &bytes = reads_[name][mlir::tpu::dramTensor(value)];
    bytes = std::max(bytes, needed);
    readers_[mlir::tpu::dramTensor(value)].insert(name);
  }
  // `name`'s instructions store `value`.
  void write(const std::string &name, Value value) { writer_[value] = name; }

  // Per source op its work, and the model's compulsory DRAM bytes: what the
  // inputs and weights must give, and the outputs.
  mlir::DictionaryAttr attribute(mlir::func::FuncOp function) {
    mlir::Builder builder(function.getContext());
    llvm::DenseSet<Value> outputs;
    for (Value value : function.getBody().front().getTerminator()->getOperands())
      outputs.insert(mlir::tpu::dramTensor(value));
    // A tensor another source op (or the host) reads must leave its writer
    // through DRAM; one its writer alone reads need not.
    for (auto [tensor, name] : writer_)
      if (outputs.count(tensor) || readers_[tensor].size() > readers_[tensor].count(name))
        work_[name].dram_bytes += dramBytesOf(tensor);
    uint64_t modelBytes = 0;
    llvm::DenseMap<Value, uint64_t> given; // per input or weight, the most any op needs
    for (auto &[name, tensors] : reads_)
      for (auto [tensor, bytes] : tensors) {
        auto writer = writer_.find(tensor);
        if (writer == writer_.end() || writer->second != name)
          work_[name].dram_bytes += bytes;
        if (writer == writer_.end())
          given[tensor] = std::max(given[tensor], bytes);
      }
    for (auto [tensor, bytes] : given)
      modelBytes += bytes;
    for (Value output : outputs)
      modelBytes += dramBytesOf(output);

    llvm::SmallVector<mlir::Attribute> ops;
    for (auto &[name, work] : work_) {
      llvm::SmallVector<int64_t> gemms;
      for (const GemmShape &gemm : work.gemms)
        gemms.append({int64_t(gemm.batch), int64_t(gemm.m), int64_t(gemm.k), int64_t(gemm.n)});
      ops.push_back(builder.getDictionaryAttr(
          {builder.getNamedAttr("name", builder.getStringAttr(name)),
           builder.getNamedAttr("gemms", builder.getDenseI64ArrayAttr(gemms)),
           builder.getNamedAttr("vector_elements",
                                builder.getI64IntegerAttr(int64_t(work.vector_elements))),
           builder.getNamedAttr("transcendental_elements",
                                builder.getI64IntegerAttr(int64_t(work.transcendental_elements))),
           builder.getNamedAttr("dram_bytes",
                                builder.getI64IntegerAttr(int64_t(work.dram_bytes)))}));
    }
    return builder.getDictionaryAttr(
        {builder.getNamedAttr("dram_bytes", builder.getI64IntegerAttr(int64_t(modelBytes))),
         builder.getNamedAttr("source_ops", builder.getArrayAttr(ops))});
  }

private:
  std::map<std::string, SourceWork> work_;
  std::map<std::string, llvm::MapVector<Value, uint64_t>> reads_;
  llvm::MapVector<Value, std::string> writer_;
  llvm::DenseMap<Value, std::set<std::string>> readers_;
};

} // namespace
} // namespace tpu::codegen

namespace {

class RecordWork : public mlir::tpu::impl::RecordWorkBase<RecordWork> {
public:
  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    if (!function.getOps<mlir::tpu::InstOp>().empty())
      return; // lowered already: the ops the work is counted from are gone
    tpu::codegen::WorkLedger ledger;
    for (mlir::Operation &op : function.getBody().front()) {
      if (llvm::isa<mlir::tpu::ViewOp, mlir::tpu::DramConstantOp, mlir::arith::ConstantOp,
                    mlir::func::ReturnOp>(op) ||
          !llvm::isa<mlir::tpu::TPUDialect>(op.getDialect()) || mlir::tpu::isFoldedLayout(&op))
        continue;
      std::string name = tpu::codegen::sourceName(&op);
      auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op);
      if (!fused) {
        ledger.compute(op);
        for (mlir::Value operand : op.getOperands())
          ledger.read(name, operand, tpu::codegen::neededBytes(op, operand));
      } else {
        bool epilogue = fused.hasEpilogue();
        for (mlir::Operation &member : fused.getMembers()) {
          ledger.compute(member);
          std::string reader =
              epilogue && &member != &fused.getHead() ? tpu::codegen::sourceName(&member) : name;
          for (mlir::Value operand : member.getOperands())
            if (operand.getParentRegion() != &fused.getBody())
              ledger.read(reader, operand, tpu::codegen::neededBytes(member, operand));
        }
      }
      for (mlir::Value result : op.getResults())
        ledger.write(name, result);
    }
    function->setAttr(mlir::tpu::kWorkAttr, ledger.attribute(function));
  }
};

} // namespace
