#include "MatrixDatapath.h"

#include "tpu/isa/Numerics.h"

#include <algorithm>
#include <cstring>

namespace tpu::sim {
namespace {

// What a PE holds and how it adds, one policy per kind of array: bf16 values
// widened to float (their products are exact in fp32, so a product never
// rounds; only the add does); fp32 words as they are, for the reference run
// of docs/numerics.md; int8 values in uint32_t, whose arithmetic wraps like
// int32's.
template <float (*operand)(uint32_t)> struct FloatElement {
  using Value = float;
  static float fromWord(uint32_t word) { return operand(word); }
  static uint32_t toWord(float sum) { return floatBits(sum); }
  static uint32_t accumulate(uint32_t previous, float sum) {
    return floatBits(bitsFloat(previous) + sum);
  }
};
float bf16Operand(uint32_t word) { return roundToBF16(bitsFloat(word)); }
using BF16Element = FloatElement<bf16Operand>;
using FP32Element = FloatElement<bitsFloat>;

struct Int8Element {
  using Value = uint32_t;
  static uint32_t fromWord(uint32_t word) {
    return static_cast<uint32_t>(saturateInt8(static_cast<int32_t>(word)));
  }
  static uint32_t toWord(uint32_t sum) { return sum; }
  static uint32_t accumulate(uint32_t previous, uint32_t sum) { return previous + sum; }
};

// out (m x n) = a (m x k) * w (k x n, rows wStride apart), each output
// summed over k in ascending order from +0. Blocks of 4 rows x 32 columns
// keep their sums in registers while k runs; the rest goes row by row.
constexpr size_t kBlockRows = 4, kBlockCols = 32;

template <typename T>
[[gnu::always_inline]] inline void gemmBlock(const T *a, size_t k, const T *w, size_t wStride,
                                             size_t n, T *out) {
  T sums[kBlockRows][kBlockCols] = {};
  for (size_t i = 0; i < k; ++i) {
    const T *__restrict wi = w + i * wStride;
    for (size_t q = 0; q < kBlockRows; ++q) {
      T aq = a[q * k + i];
      for (size_t j = 0; j < kBlockCols; ++j)
        sums[q][j] = sums[q][j] + aq * wi[j];
    }
  }
  for (size_t q = 0; q < kBlockRows; ++q)
    for (size_t j = 0; j < kBlockCols; ++j)
      out[q * n + j] = sums[q][j];
}

template <typename T>
[[gnu::always_inline]] inline void gemmBody(const T *a, size_t m, size_t k, const T *w,
                                            size_t wStride, size_t n, T *out) {
  size_t blockedRows = m - m % kBlockRows, blockedCols = n - n % kBlockCols;
  for (size_t r = 0; r < blockedRows; r += kBlockRows)
    for (size_t j = 0; j < blockedCols; j += kBlockCols)
      gemmBlock(a + r * k, k, w + j, wStride, n, out + r * n + j);
  for (size_t r = 0; r < m; ++r) {
    size_t firstCol = r < blockedRows ? blockedCols : 0;
    if (firstCol == n)
      continue;
    T *__restrict o = out + r * n;
    std::fill(o + firstCol, o + n, T{});
    for (size_t i = 0; i < k; ++i) {
      const T *__restrict wi = w + i * wStride;
      T ai = a[r * k + i];
      for (size_t j = firstCol; j < n; ++j)
        o[j] = o[j] + ai * wi[j];
    }
  }
}

// One clock cycle of the PE registers, bottom row first so that each row
// reads the partial sums its upper neighbour held in the previous cycle.
// x[i * xStride + j] is the activation in PE (i, j); plane[...] picks the
// weight register set it was fed with.
template <typename T>
[[gnu::always_inline]] inline void
peCycleBody(T *psum, const T *zeroRow, const T *x, const uint8_t *plane, size_t xStride,
            const T *weights0, const T *weights1, size_t rows, size_t cols) {
  for (size_t i = rows; i-- > 0;) {
    const T *__restrict activation = x + i * xStride;
    const uint8_t *__restrict select = plane + i * xStride;
    const T *__restrict above = i > 0 ? psum + (i - 1) * cols : zeroRow;
    T *__restrict sum = psum + i * cols;
    const T *__restrict w0 = weights0 + i * cols;
    const T *__restrict w1 = weights1 + i * cols;
    for (size_t j = 0; j < cols; ++j) {
      T weight = select[j] ? w1[j] : w0[j];
      sum[j] = above[j] + activation[j] * weight;
    }
  }
}

// The hot loops, compiled for the widest vector unit the host has.
#define TPU_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

TPU_VECTOR_CLONES void gemm(const float *a, size_t m, size_t k, const float *w, size_t wStride,
                            size_t n, float *out) {
  gemmBody(a, m, k, w, wStride, n, out);
}
TPU_VECTOR_CLONES void gemm(const uint32_t *a, size_t m, size_t k, const uint32_t *w,
                            size_t wStride, size_t n, uint32_t *out) {
  gemmBody(a, m, k, w, wStride, n, out);
}
TPU_VECTOR_CLONES void peCycle(float *psum, const float *zeroRow, const float *x,
                               const uint8_t *plane, size_t xStride, const float *weights0,
                               const float *weights1, size_t rows, size_t cols) {
  peCycleBody(psum, zeroRow, x, plane, xStride, weights0, weights1, rows, cols);
}
TPU_VECTOR_CLONES void peCycle(uint32_t *psum, const uint32_t *zeroRow, const uint32_t *x,
                               const uint8_t *plane, size_t xStride, const uint32_t *weights0,
                               const uint32_t *weights1, size_t rows, size_t cols) {
  peCycleBody(psum, zeroRow, x, plane, xStride, weights0, weights1, rows, cols);
}

template <typename Element> class Datapath final : public MatrixDatapath {
  using T = typename Element::Value;

public:
  explicit Datapath(const HardwareConfig &config)
      : rows_(config.array.rows), cols_(config.array.cols),
        historyLength_(cols_ + kHistoryRoom), planes_{std::vector<T>(rows_ * cols_),
                                                      std::vector<T>(rows_ * cols_)},
        psum_(rows_ * cols_), zeroRow_(cols_), history_(rows_ * historyLength_),
        historyPlane_(rows_ * historyLength_), head_(historyLength_ - cols_) {}

  void loadPlane(unsigned plane, const Region &source, const WordMemory &scratchpad) override {
    std::vector<T> &weights = planes_[plane];
    std::fill(weights.begin(), weights.end(), T{});
    for (uint64_t i = 0; i < source.rows; ++i)
      for (uint64_t j = 0; j < source.cols; ++j)
        weights[i * cols_ + j] = Element::fromWord(scratchpad.read(source.at(i, j)));
  }

  void multiply(const MatMulOp &op, const WordMemory &scratchpad,
                WordMemory &accumulator) override {
    size_t m = op.source.rows, k = op.source.cols, n = op.destination.cols;
    activations_.resize(m * k);
    for (size_t r = 0; r < m; ++r)
      for (size_t i = 0; i < k; ++i)
        activations_[r * k + i] = Element::fromWord(scratchpad.read(op.source.at(r, i)));
    sums_.resize(m * n);
    gemm(activations_.data(), m, k, planes_[op.plane].data(), cols_, n, sums_.data());
    for (size_t r = 0; r < m; ++r)
      for (size_t j = 0; j < n; ++j)
        writeResult(op, r, j, sums_[r * n + j], accumulator);
  }

  void feed(const MatMulOp &op) override { inArray_.push_back(op); }

  std::vector<Completion> step(uint64_t from, uint64_t until, const WordMemory &scratchpad,
                               WordMemory &accumulator) override {
    std::vector<Completion> completed;
    for (uint64_t cycle = from; cycle < until && !inArray_.empty(); ++cycle) {
      shiftActivations(cycle, scratchpad);
      peCycle(psum_.data(), zeroRow_.data(), history_.data() + head_, historyPlane_.data() + head_,
              historyLength_, planes_[0].data(), planes_[1].data(), rows_, cols_);
      collectResults(cycle, accumulator, completed);
    }
    if (inArray_.empty())
      clear();
    return completed;
  }

  bool empty() const override { return inArray_.empty(); }

private:
  // Cycles of activation history kept before it is moved back (amortised).
  static constexpr size_t kHistoryRoom = 4096;

  void writeResult(const MatMulOp &op, uint64_t r, uint64_t j, T sum, WordMemory &accumulator) {
    uint64_t address = op.destination.at(r, j);
    accumulator.write(address, op.accumulate ? Element::accumulate(accumulator.read(address), sum)
                                             : Element::toWord(sum));
  }

  // Activation row r of an op enters array row i at op.start + r + i and then
  // moves right one column per cycle, so PE (i, j) holds what entered row i
  // j cycles ago. history_ keeps those values newest first: at cycle t,
  // row i's window [head_, head_ + cols) holds the inputs of cycles t .. t-C+1.
  void shiftActivations(uint64_t cycle, const WordMemory &scratchpad) {
    if (head_ == 0) {
      for (size_t i = 0; i < rows_; ++i) {
        size_t base = i * historyLength_;
        std::memmove(&history_[base + historyLength_ - cols_], &history_[base], cols_ * sizeof(T));
        std::memmove(&historyPlane_[base + historyLength_ - cols_], &historyPlane_[base], cols_);
      }
      head_ = historyLength_ - cols_;
    }
    --head_;
    for (size_t i = 0; i < rows_; ++i) {
      const MatMulOp *op = feeding(static_cast<int64_t>(cycle) - static_cast<int64_t>(i));
      T value{};
      if (op && i < op->source.cols)
        value = Element::fromWord(scratchpad.read(op->source.at(cycle - i - op->start, i)));
      history_[i * historyLength_ + head_] = value;
      historyPlane_[i * historyLength_ + head_] = static_cast<uint8_t>(op ? op->plane : 0);
    }
  }

  // The op whose activation row enters array row 0 at `entry`.
  const MatMulOp *feeding(int64_t entry) const {
    for (const MatMulOp &op : inArray_)
      if (entry >= static_cast<int64_t>(op.start) &&
          entry < static_cast<int64_t>(op.start + op.source.rows))
        return &op;
    return nullptr;
  }

  // The bottom row holds, in column j, the sum for the activation row that
  // entered row 0 at cycle - (R - 1) - j. It is written into the accumulator
  // in the next cycle.
  void collectResults(uint64_t cycle, WordMemory &accumulator, std::vector<Completion> &completed) {
    const T *bottom = psum_.data() + (rows_ - 1) * cols_;
    int64_t lastEntry = static_cast<int64_t>(cycle) - static_cast<int64_t>(rows_ - 1);
    for (auto op = inArray_.begin(); op != inArray_.end();) {
      int64_t start = static_cast<int64_t>(op->start);
      int64_t m = static_cast<int64_t>(op->source.rows);
      int64_t n = static_cast<int64_t>(op->destination.cols);
      // Columns whose row r = lastEntry - j - start lies in [0, m).
      int64_t firstColumn = std::max<int64_t>(0, lastEntry - start - m + 1);
      int64_t endColumn = std::min<int64_t>(n, lastEntry - start + 1);
      for (int64_t j = firstColumn; j < endColumn; ++j)
        writeResult(*op, static_cast<uint64_t>(lastEntry - j - start), static_cast<uint64_t>(j),
                    bottom[j], accumulator);
      if (lastEntry - (n - 1) - start == m - 1) {
        completed.push_back({op->id, cycle + 2});
        op = inArray_.erase(op);
      } else {
        ++op;
      }
    }
  }

  // Forgets what is left in the registers once no op is: the next op starts
  // from an empty array, whatever cycle it comes in.
  void clear() {
    std::fill(psum_.begin(), psum_.end(), T{});
    for (size_t i = 0; i < rows_; ++i) {
      std::fill_n(history_.begin() + i * historyLength_ + head_, cols_, T{});
      std::fill_n(historyPlane_.begin() + i * historyLength_ + head_, cols_, 0);
    }
  }

  size_t rows_, cols_, historyLength_;
  std::vector<T> planes_[2];
  std::vector<T> psum_, zeroRow_, history_;
  std::vector<uint8_t> historyPlane_;
  size_t head_;
  std::vector<MatMulOp> inArray_; // fed and not yet completed, in feeding order
  std::vector<T> activations_, sums_;
};

} // namespace

std::unique_ptr<MatrixDatapath> MatrixDatapath::create(const HardwareConfig &config,
                                                       bool roundOperands) {
  if (config.array.dtype == isa::DType::I8)
    return std::make_unique<Datapath<Int8Element>>(config);
  if (!roundOperands)
    return std::make_unique<Datapath<FP32Element>>(config);
  return std::make_unique<Datapath<BF16Element>>(config);
}

} // namespace tpu::sim
