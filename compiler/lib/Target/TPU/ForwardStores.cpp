// tpu-forward-stores: a load of what the program stored, from words still on
// chip, becomes v.copy from those words: the value skips its DRAM round trip.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FORWARDSTORES
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
namespace isa = ::tpu::isa;
using isa::Field;
using isa::Opcode;
using ::tpu::codegen::DramBlock;
using ::tpu::codegen::Span;
using ::tpu::codegen::writesRegion;

namespace {

// How far back a load looks for the stores of its bytes: a group's
// results are stored by the group just before it.
constexpr size_t kStoresSearched = 64;
// The most copies one forwarded load becomes.
constexpr size_t kMostCopies = 64;

// Words `len` of `srcSpace` from `src` are words of `dstSpace` from `dst`,
// as the store program[store] read them.
struct Piece {
  uint64_t srcSpace, src, dstSpace, dst, len;
  size_t store;
  // Stored from where the load puts it: no copy.
  bool inPlace() const { return srcSpace == dstSpace && src == dst; }
};

bool isPlainTransfer(const isa::Instruction &inst, Opcode opcode) {
  if (inst.opcode != opcode || inst.get(Field::Transpose))
    return false;
  auto dtype = isa::DType(inst.get(Field::DType));
  return dtype == isa::DType::F32 || dtype == isa::DType::I32 || dtype == isa::DType::BF16;
}

// The spans `inst` writes, and the ones it reads.
void spansOf(const isa::Instruction &inst, uint64_t arrayCols, SmallVectorImpl<Span> &written,
             SmallVectorImpl<Span> &read) {
  ::tpu::codegen::forEachSpan(inst, arrayCols, [&](Field address, const Span &span) {
    (writesRegion(inst, address) ? written : read).push_back(span);
  });
}

// Whether `inst` writes a word of `runs` (contiguous words each), row by
// row: a strided region's span also covers the words between its rows.
bool writesAny(const isa::Instruction &inst, uint64_t arrayCols, ArrayRef<Span> runs) {
  bool writes = false;
  ::tpu::codegen::forEachRow(inst, arrayCols, [&](Field address, const Span &row) {
    writes = writes || (writesRegion(inst, address) &&
                        llvm::any_of(runs, [&](const Span &run) { return run.overlaps(row); }));
  });
  return writes;
}

bool overlapsAny(ArrayRef<Span> spans, const Span &span) {
  return llvm::any_of(spans, [&](const Span &other) { return other.overlaps(span); });
}

class ForwardStores : public mlir::tpu::impl::ForwardStoresBase<ForwardStores> {
public:
  void runOnOperation() override {
    mlir::tpu::TargetAttr target = mlir::tpu::targetOf(getOperation());
    if (!target)
      return;
    config = mlir::tpu::hardwareConfig(target);
    Block &block = getOperation().getBody().front();
    program = mlir::tpu::decodeInstructions(block);
    forwarded.clear();
    forwardedAfter.clear();
    forwardedBytes.clear();
    std::vector<size_t> stores; // indices into program
    for (size_t i = 0; i < program.size(); ++i) {
      const isa::Instruction &inst = program[i].second;
      if (inst.opcode == Opcode::DmaStore)
        stores.push_back(i);
      else if (isPlainTransfer(inst, Opcode::DmaLoad) && forward(i, stores))
        ++numForwarded;
    }
    ::tpu::codegen::unchargeDramBytes(getOperation(), forwardedBytes);
  }

private:
  // Replaces the load program[at] by copies where every byte it reads was
  // stored, from words no instruction since has overwritten.
  bool forward(size_t at, ArrayRef<size_t> stores) {
    const isa::Instruction &load = program[at].second;
    SmallVector<Piece> pieces;
    SmallVector<size_t> sources; // the stores it reads, latest first
    if (!piecesOf(load, stores, pieces, sources))
      return false;
    // Only a load the next group waits for right after the store, and one
    // per store: a load after compute, or after the store's first load,
    // has that compute to hide its transfer behind.
    if (forwardedAfter.contains(sources.front()) || copiedAhead(sources.front()) ||
        llvm::any_of(llvm::seq(sources.front() + 1, at),
                     [&](size_t i) { return program[i].second.queue() == isa::Queue::Compute; }))
      return false;
    if (!sourcesKept(at, sources) || !readersAccept(at))
      return false;
    const uint64_t lanes = config.vector.lanes;
    uint64_t copyCycles = 0;
    for (const Piece &piece : pieces)
      if (!piece.inPlace())
        copyCycles += config.vector.pipeline_latency + (piece.len + lanes - 1) / lanes;
    // The copies run on the compute queue, which the load did not hold:
    // they must save at least half the load's latency on top of its bus
    // time (a pool's band of 20 small copies saving 16 cycles cost lenet5
    // 80).
    const DramBlock block(load);
    const uint64_t busCycles =
        uint64_t(std::ceil(double(block.bytes()) / config.dram.bytes_per_cycle));
    if (copyCycles >= config.dram.latency_cycles / 2 + busCycles)
      return false;
    rewrite(at, pieces, sources.front());
    forwardedAfter.insert(sources.front());
    return true;
  }

  // The copies of `load`'s words from the words the latest of the last
  // kStoresSearched `stores` to write each byte stored it from, merged
  // where both sides run on, and those stores (`sources`, latest first);
  // false where a byte is no such store's, a store is transposed or moves
  // another dtype, or there would be more than kMostCopies.
  bool piecesOf(const isa::Instruction &load, ArrayRef<size_t> stores,
                SmallVectorImpl<Piece> &pieces, SmallVectorImpl<size_t> &sources) const {
    const DramBlock block(load);
    const auto dtype = load.get(Field::DType);
    const uint64_t bytes = isa::dtypeBytes(isa::DType(dtype));
    const uint64_t rowElements = block.width / bytes;
    // Per element of the load, whether a later store already gave it.
    std::vector<bool> given(block.rows * rowElements, false);
    uint64_t left = given.size();
    for (size_t n = 0; n < std::min(stores.size(), kStoresSearched) && left > 0; ++n) {
      const size_t source = stores[stores.size() - 1 - n];
      const isa::Instruction &store = program[source].second;
      const DramBlock stored(store);
      if (!stored.overlaps(block))
        continue;
      // A transposed store's on-chip words are not in its DRAM order.
      if (!isPlainTransfer(store, Opcode::DmaStore) || store.get(Field::DType) != dtype ||
          (stored.rows > 1 && stored.stride == 0))
        return false;
      bool used = false;
      for (uint64_t row = 0; row < block.rows; ++row) {
        const uint64_t begin = block.begin + row * block.stride, end = begin + block.width;
        for (uint64_t k = 0; k < stored.rows; ++k) {
          const uint64_t rowBegin = stored.begin + k * stored.stride;
          const uint64_t from = std::max(begin, rowBegin),
                         to = std::min(end, rowBegin + stored.width);
          if (from >= to)
            continue;
          if ((from - begin) % bytes || (from - rowBegin) % bytes)
            return false;
          // Each run of elements no later store gave.
          for (uint64_t e = (from - begin) / bytes, last = (to - begin) / bytes; e < last;) {
            if (given[row * rowElements + e]) {
              ++e;
              continue;
            }
            uint64_t runEnd = e;
            while (runEnd < last && !given[row * rowElements + runEnd])
              given[row * rowElements + runEnd++] = true;
            left -= runEnd - e;
            used = true;
            const uint64_t offset = (begin + e * bytes - rowBegin) / bytes;
            if (!addPiece(pieces,
                          {store.get(Field::Space),
                           store.get(Field::SramAddr) + k * store.get(Field::SramStride) + offset,
                           load.get(Field::Space),
                           load.get(Field::SramAddr) + row * load.get(Field::SramStride) + e,
                           runEnd - e, source}))
              return false;
            e = runEnd;
          }
        }
      }
      if (used)
        sources.push_back(source);
    }
    if (left > 0)
      return false;
    // A copy onto words a copy reads would change what that one reads.
    for (const Piece &writer : pieces)
      for (const Piece &reader : pieces)
        if (!writer.inPlace() && writer.dstSpace == reader.srcSpace &&
            writer.dst < reader.src + reader.len && reader.src < writer.dst + writer.len)
          return false;
    return true;
  }

  // Appends `piece`, merged into the last where both sides run on; false
  // past kMostCopies.
  static bool addPiece(SmallVectorImpl<Piece> &pieces, const Piece &piece) {
    Piece *last = pieces.empty() ? nullptr : &pieces.back();
    if (last && last->store == piece.store && last->srcSpace == piece.srcSpace &&
        last->dstSpace == piece.dstSpace && last->src + last->len == piece.src &&
        last->dst + last->len == piece.dst &&
        last->len + piece.len <= uint64_t(::tpu::codegen::kMaxCols)) {
      last->len += piece.len;
      return true;
    }
    if (pieces.size() == kMostCopies)
      return false;
    pieces.push_back(piece);
    return true;
  }

  // Whether every store of `sources` reads words that nothing between it
  // and the load program[at] writes.
  bool sourcesKept(size_t at, ArrayRef<size_t> sources) const {
    for (size_t source : sources) {
      SmallVector<Span, 3> written, read;
      spansOf(program[source].second, config.array.cols, written, read);
      const Span stored = read.front();
      for (size_t i = source + 1; i < at; ++i) {
        SmallVector<Span, 3> writes, reads;
        spansOf(program[i].second, config.array.cols, writes, reads);
        if (overlapsAny(writes, stored))
          return false;
      }
    }
    return true;
  }

  // Whether what reads the load program[at]'s words, until all of them
  // are written again, takes them from a copy as well: compute
  // instructions only (a store or a gather would wait for the load queue,
  // not the copy), and for bf16 the matrix unit only, which rounds its
  // operands to bf16 as the store did. Word by word: a later transfer
  // often overwrites part of the buffer.
  bool readersAccept(size_t at) const {
    const isa::Instruction &load = program[at].second;
    const bool bf16 = isa::DType(load.get(Field::DType)) == isa::DType::BF16;
    const uint64_t space = load.get(Field::Space), first = load.get(Field::SramAddr);
    const uint64_t rows = load.get(Field::Rows), cols = load.get(Field::Cols),
                   stride = load.get(Field::SramStride);
    const uint64_t end = first + (rows - 1) * stride + cols;
    std::vector<bool> live(end - first, false);
    size_t liveWords = 0;
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        if (!live[r * stride + c])
          live[r * stride + c] = true, ++liveWords;
    for (size_t i = at + 1; i < program.size() && liveWords > 0; ++i) {
      const isa::Instruction &inst = program[i].second;
      // Reads first: an op may read the words it writes.
      bool reads = false;
      for (bool writes : {false, true})
        ::tpu::codegen::forEachRow(inst, config.array.cols, [&](Field address, const Span &row) {
          // A product's accumulator rows may add to what is there.
          const bool written = writesRegion(inst, address) && inst.opcode != Opcode::MatMul;
          if (row.space != space || written != writes)
            return;
          for (uint64_t w = std::max(row.begin, first); w < std::min(row.end, end); ++w) {
            if (!live[w - first])
              continue;
            if (writes)
              live[w - first] = false, --liveWords;
            else
              reads = true;
          }
        });
      const bool matrix = inst.opcode == Opcode::MatMul || inst.opcode == Opcode::LoadWeights;
      if (reads && (inst.queue() != isa::Queue::Compute || (bf16 && !matrix)))
        return false;
    }
    return true;
  }

  // Whether copies of words the store program[store] reads run just before
  // it (after the compute that wrote them): a load forwarded ahead of it,
  // in a program this pass ran on before (its tokens scheduled or not).
  bool copiedAhead(size_t store) const {
    SmallVector<Span, 3> written, read;
    spansOf(program[store].second, config.array.cols, written, read);
    for (size_t i = store; i-- > 0;) {
      const isa::Instruction &earlier = program[i].second;
      if (earlier.queue() != isa::Queue::Compute || earlier.opcode == Opcode::SyncPush ||
          earlier.opcode == Opcode::SyncPop)
        continue;
      if (earlier.opcode != Opcode::VCopy)
        return false;
      SmallVector<Span, 3> copyWrites, copyReads;
      spansOf(earlier, config.array.cols, copyWrites, copyReads);
      if (overlapsAny(read, copyReads.front()))
        return true;
    }
    return false;
  }

  // Where the copies from the load program[at]'s latest store,
  // program[lastStore], can go ahead of it: before its compute -> store
  // token, where nothing from there to the load touches the words they
  // write (null where not). Their words are final there, and the store,
  // which holds the banks it reads from its start to its completion, then
  // waits for these copies (their vector cycles) instead of the copies for
  // it (its DRAM latency and bus time). Copies from earlier stores stay at
  // the load: they would hold the last store back, and wait for their own.
  Operation *aheadOfStore(size_t at, size_t lastStore, ArrayRef<Span> written) const {
    auto await =
        llvm::dyn_cast_or_null<mlir::tpu::AwaitOp>(program[lastStore].first->getPrevNode());
    auto signal = await ? await.getToken().getDefiningOp<mlir::tpu::SignalOp>() : nullptr;
    if (!signal || signal->getNextNode() != await ||
        signal.getFrom() != mlir::tpu::Queue::compute || signal.getTo() != mlir::tpu::Queue::store)
      return nullptr;
    for (size_t i = lastStore; i < at; ++i) {
      bool touches = false;
      ::tpu::codegen::forEachSpan(
          program[i].second, config.array.cols,
          [&](Field, const Span &span) { touches |= overlapsAny(written, span); });
      if (touches)
        return nullptr;
    }
    // The copies wait for the last store before them that reads words they
    // write; ahead of the store, they would hold it back too. Only where
    // that store is likely done: the compute since it took longer than its
    // latency and bus time.
    for (size_t i = lastStore; i-- > 0;) {
      const isa::Instruction &earlier = program[i].second;
      if (earlier.opcode != Opcode::DmaStore)
        continue;
      SmallVector<Span, 3> writes, reads;
      spansOf(earlier, config.array.cols, writes, reads);
      if (!llvm::any_of(reads, [&](const Span &read) { return overlapsAny(written, read); }))
        continue;
      const DramBlock block(earlier);
      double compute = 0;
      for (size_t j = i + 1; j < lastStore; ++j)
        compute += computeCycles(program[j].second);
      if (compute <
          double(config.dram.latency_cycles) + double(block.bytes()) / config.dram.bytes_per_cycle)
        return nullptr;
      break;
    }
    return signal;
  }

  // The cycles a compute instruction keeps its unit busy, roughly: the rows
  // a product streams, the lane groups of a vector op; 0 for the others.
  double computeCycles(const isa::Instruction &inst) const {
    if (inst.queue() != isa::Queue::Compute || inst.opcode == Opcode::SyncPush ||
        inst.opcode == Opcode::SyncPop)
      return 0;
    const double rows = double(inst.get(Field::Rows)), cols = double(inst.get(Field::Cols));
    if (inst.opcode == Opcode::MatMul || inst.opcode == Opcode::LoadWeights)
      return rows;
    return rows * std::ceil(cols / double(config.vector.lanes));
  }

  // The copies `pieces` (none for words stored from where the load puts
  // them), located at `loc`, before `place`, after a token from the last load before
  // program[before] that writes words they touch (a tpu.depend is left out
  // where the queue pushed one since it last issued, awaited or not).
  void emitCopies(Operation *place, size_t before, ArrayRef<Piece> pieces, Location loc) {
    OpBuilder builder(place);
    SmallVector<Span> touched;
    for (const Piece &piece : pieces) {
      touched.push_back({piece.srcSpace, piece.src, piece.src + piece.len});
      touched.push_back({piece.dstSpace, piece.dst, piece.dst + piece.len});
    }
    for (size_t i = before; i-- > 0;) {
      const isa::Instruction &earlier = program[i].second;
      if (earlier.queue() != isa::Queue::Load || forwarded.contains(i))
        continue;
      if (writesAny(earlier, config.array.cols, touched)) {
        // The load's own token where it has one (another forwarded load
        // may have put it there).
        auto next = llvm::dyn_cast_or_null<mlir::tpu::SignalOp>(program[i].first->getNextNode());
        Value loaded =
            next && next.getFrom() == mlir::tpu::Queue::load &&
                    next.getTo() == mlir::tpu::Queue::compute && !next.getWeights()
                ? next.getToken()
                : OpBuilder(program[i].first->getBlock(), ++Block::iterator(program[i].first))
                      .create<mlir::tpu::SignalOp>(loc, mlir::tpu::Queue::load,
                                                   mlir::tpu::Queue::compute, false)
                      .getToken();
        builder.create<mlir::tpu::AwaitOp>(loc, loaded);
        break;
      }
    }
    for (const Piece &piece : pieces) {
      if (piece.inPlace())
        continue;
      auto [rows, cols] = ::tpu::codegen::denseShape(1, int64_t(piece.len), config.vector.lanes);
      mlir::tpu::createInstruction(
          builder, loc,
          isa::makeInstruction(Opcode::VCopy, {{Field::DstSpace, piece.dstSpace},
                                               {Field::DstAddr, piece.dst},
                                               {Field::SrcSpace, piece.srcSpace},
                                               {Field::SrcAddr, piece.src},
                                               {Field::Rows, uint64_t(rows)},
                                               {Field::Cols, uint64_t(cols)}}));
    }
  }

  // The copies in place of the load program[at]: those from its latest
  // store `lastStore` ahead of it where aheadOfStore finds a place, the
  // rest where the load was; any later load of the group that writes words
  // they touch waits for them.
  void rewrite(size_t at, ArrayRef<Piece> pieces, size_t lastStore) {
    mlir::tpu::InstOp load = program[at].first;
    const Location loc = load.getLoc();
    SmallVector<Span> touched, written;
    SmallVector<Piece> ahead, atLoad;
    for (const Piece &piece : pieces) {
      touched.push_back({piece.srcSpace, piece.src, piece.src + piece.len});
      touched.push_back({piece.dstSpace, piece.dst, piece.dst + piece.len});
      if (piece.store == lastStore && !piece.inPlace())
        written.push_back(touched.back());
      (piece.store == lastStore ? ahead : atLoad).push_back(piece);
    }
    Operation *place = aheadOfStore(at, lastStore, written);
    if (place)
      emitCopies(place, lastStore, ahead, loc);
    else
      atLoad.assign(pieces.begin(), pieces.end());
    if (!atLoad.empty())
      emitCopies(load, at, atLoad, loc);
    OpBuilder builder(atLoad.empty() ? place : load.getOperation());
    for (Operation *op = load->getNextNode(); op; op = op->getNextNode()) {
      if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op);
          depend && depend.getFrom() == mlir::tpu::Queue::compute &&
          depend.getTo() == mlir::tpu::Queue::load)
        break;
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
      if (!inst)
        continue;
      const isa::Instruction later = mlir::tpu::instructionOf(inst);
      if (later.queue() != isa::Queue::Load)
        continue;
      if (writesAny(later, config.array.cols, touched)) {
        Value copied = builder.create<mlir::tpu::SignalOp>(loc, mlir::tpu::Queue::compute,
                                                           mlir::tpu::Queue::load, false);
        builder.setInsertionPoint(op);
        builder.create<mlir::tpu::AwaitOp>(loc, copied);
        break;
      }
    }
    if (auto name = llvm::dyn_cast<NameLoc>(loc)) {
      const DramBlock block(program[at].second);
      forwardedBytes[name.getName()] += block.bytes();
    }
    load->erase();
    forwarded.insert(at);
  }

  std::vector<std::pair<mlir::tpu::InstOp, isa::Instruction>> program;
  // The loads of `program` this pass replaced (their copies run in order
  // with the compute queue).
  llvm::DenseSet<size_t> forwarded;
  // The last stores before a forwarded load.
  llvm::DenseSet<size_t> forwardedAfter;
  // Per source op (the instructions' NameLoc), the bytes of its forwarded
  // loads.
  llvm::DenseMap<StringAttr, uint64_t> forwardedBytes;
  ::tpu::HardwareConfig config;
};

} // namespace
