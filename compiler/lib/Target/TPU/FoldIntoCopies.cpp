// tpu-fold-into-copies: an in-place elementwise op whose results only v.copy
// instructions read is applied by those copies instead: one pass of the
// vector unit over the tile less.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/Passes.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FOLDINTOCOPIES
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
namespace isa = ::tpu::isa;
using isa::Field;
using isa::Opcode;
using ::tpu::codegen::Span;

namespace {

// How far past an op its results are followed: beyond, the op stays.
constexpr size_t kMostFollowed = 4096;

// dst = f(src) element by element, the operands dense rows x cols: a vector
// op with v.copy's fields (no second source) that is no row reduction.
bool isElementwiseUnary(const isa::Instruction &inst) {
  const isa::OpcodeInfo &info = isa::opcodeInfo(inst.opcode);
  if (inst.opcode == Opcode::VCopy || info.unit != isa::Unit::Vector ||
      info.fields.size() != isa::opcodeInfo(Opcode::VCopy).fields.size() ||
      isa::usesField(info, Field::Src2Addr))
    return false;
  ::tpu::OperandShape dst = ::tpu::vectorDestinationShape(inst);
  return dst.rows == inst.get(Field::Rows) && dst.cols == inst.get(Field::Cols);
}

// The words of one memory still holding an op's results: disjoint
// [begin, end) runs, in order.
class LiveWords {
public:
  LiveWords(uint64_t begin, uint64_t end) : runs{{begin, end}} {}
  bool empty() const { return runs.empty(); }
  bool overlaps(uint64_t begin, uint64_t end) const {
    return llvm::any_of(runs, [&](auto run) { return begin < run.second && run.first < end; });
  }
  bool covers(uint64_t begin, uint64_t end) const {
    return llvm::any_of(runs, [&](auto run) { return run.first <= begin && end <= run.second; });
  }
  void remove(uint64_t begin, uint64_t end) {
    SmallVector<std::pair<uint64_t, uint64_t>, 4> left;
    for (auto [first, last] : runs) {
      if (first < begin)
        left.push_back({first, std::min(last, begin)});
      if (end < last)
        left.push_back({std::max(first, end), last});
    }
    runs = std::move(left);
  }

private:
  SmallVector<std::pair<uint64_t, uint64_t>, 4> runs;
};

class FoldIntoCopies : public mlir::tpu::impl::FoldIntoCopiesBase<FoldIntoCopies> {
public:
  void runOnOperation() override {
    mlir::tpu::TargetAttr target = mlir::tpu::targetOf(getOperation());
    if (!target)
      return;
    arrayCols = mlir::tpu::hardwareConfig(target).array.cols;
    program = mlir::tpu::decodeInstructions(getOperation().getBody().front());
    for (size_t at = 0; at < program.size(); ++at) {
      const isa::Instruction &op = program[at].second;
      if (!isElementwiseUnary(op) || op.get(Field::DstSpace) != op.get(Field::SrcSpace) ||
          op.get(Field::DstAddr) != op.get(Field::SrcAddr))
        continue;
      SmallVector<size_t> copies;
      if (!onlyCopiesRead(at, copies) || copies.empty())
        continue;
      for (size_t copy : copies) {
        isa::Instruction applied = program[copy].second;
        applied.opcode = op.opcode;
        mlir::tpu::InstOp copied = program[copy].first;
        OpBuilder builder(copied);
        // The op's source location: the copies now compute it.
        program[copy] = {mlir::tpu::createInstruction(builder, program[at].first.getLoc(), applied),
                         applied};
        copied.erase();
      }
      // Its words keep their values from before it; only the copies read them.
      program[at].first.erase();
      ++numFolded;
    }
  }

private:
  // Whether only v.copy instructions read the words program[at] wrote
  // before something overwrites them (`copies`: those that read them all
  // still unchanged). A copy reading only some of them, any other reader, or
  // results followed past kMostFollowed instructions keeps the op.
  bool onlyCopiesRead(size_t at, SmallVectorImpl<size_t> &copies) const {
    const isa::Instruction &op = program[at].second;
    const uint64_t space = op.get(Field::DstSpace), begin = op.get(Field::DstAddr);
    LiveWords live(begin, begin + op.get(Field::Rows) * op.get(Field::Cols));
    for (size_t next = at + 1; next < program.size() && !live.empty(); ++next) {
      if (next - at > kMostFollowed)
        return false;
      const isa::Instruction &inst = program[next].second;
      if (inst.opcode == Opcode::VCopy && inst.get(Field::SrcSpace) == space) {
        uint64_t from = inst.get(Field::SrcAddr),
                 to = from + inst.get(Field::Rows) * inst.get(Field::Cols);
        if (live.covers(from, to))
          copies.push_back(next);
        else if (live.overlaps(from, to))
          return false;
      } else if (readsLive(inst, space, live)) {
        return false;
      }
      ::tpu::codegen::forEachRow(inst, arrayCols, [&](Field address, const Span &row) {
        if (row.space == space && ::tpu::codegen::writesRegion(inst, address))
          live.remove(row.begin, row.end);
      });
    }
    return true;
  }

  // Whether `inst` reads a live word of `space`, row by row (an mxu.mm that
  // accumulates reads the words it writes).
  bool readsLive(const isa::Instruction &inst, uint64_t space, const LiveWords &live) const {
    const bool accumulates = inst.opcode == Opcode::MatMul && inst.get(Field::Accumulate);
    bool reads = false;
    ::tpu::codegen::forEachRow(inst, arrayCols, [&](Field address, const Span &row) {
      reads = reads || (row.space == space &&
                        (!::tpu::codegen::writesRegion(inst, address) || accumulates) &&
                        live.overlaps(row.begin, row.end));
    });
    return reads;
  }

  std::vector<std::pair<mlir::tpu::InstOp, isa::Instruction>> program;
  uint64_t arrayCols = 0;
};

} // namespace
