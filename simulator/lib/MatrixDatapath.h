// The data path of the matrix unit, free of SystemC: two weight planes (the
// active and the shadow register set of every PE) and two ways to push an
// mxu.mm through them that give bit-identical results:
//  - multiply(): the whole instruction at once (fast mode);
//  - feed() + step(): the weight-stationary R x C array of PE registers,
//    stepped one clock cycle at a time (cycle mode). Activations enter row i
//    of the array skewed by i cycles and move one column right per cycle;
//    partial sums start at +0 on top, move one row down per cycle and leave
//    the bottom into the accumulators.
// Both sum the products of one output in the same order (k ascending, from
// +0, an fp32 multiply then an fp32 add per PE; wrapping int32 for i8).
#pragma once

#include "Memory.h"

#include "tpu/isa/HardwareConfig.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tpu::sim {

struct MatMulOp {
  uint64_t id = 0;
  Region source;      // m x k activations in the scratchpad
  Region destination; // m x n results in the accumulator
  bool accumulate = false;
  unsigned plane = 0; // the weight plane the instruction multiplies with
  uint64_t start = 0; // the cycle activation row 0 enters array row 0
};

struct Completion {
  uint64_t id;
  uint64_t cycle; // the instruction's last result has been written when this cycle begins
};

class MatrixDatapath {
public:
  // A bf16 array rounds its operands to bf16 unless `roundOperands` is false
  // (the reference run of docs/numerics.md).
  static std::unique_ptr<MatrixDatapath> create(const HardwareConfig &config, bool roundOperands);
  virtual ~MatrixDatapath() = default;

  // mxu.ldw: the rows x cols tile at `source` into plane `plane`, the rest of
  // the plane zero.
  virtual void loadPlane(unsigned plane, const Region &source, const WordMemory &scratchpad) = 0;
  // Fast mode: computes `op` and writes its results now.
  virtual void multiply(const MatMulOp &op, const WordMemory &scratchpad,
                        WordMemory &accumulator) = 0;
  // Cycle mode: `op` starts entering the array at op.start, after every op
  // fed before it. Needs op.source.rows and op.destination.cols above zero.
  virtual void feed(const MatMulOp &op) = 0;
  // Steps the array through cycles [from, until), reading activations as they
  // enter and writing results as they leave; stops early once no fed op is
  // left in the array. Returns the ops that completed.
  virtual std::vector<Completion> step(uint64_t from, uint64_t until, const WordMemory &scratchpad,
                                       WordMemory &accumulator) = 0;
  // No fed op still has results to deliver.
  virtual bool empty() const = 0;
};

} // namespace tpu::sim
