// Per-element CUDA code for the graph's values: what a kernel computes for
// one element of a value at given coordinates, as C++ statements. The GEMM
// epilogue, the row kernels and the elementwise kernels of the CUDA target
// all use it (docs/gpu.md).
#pragma once

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::tpu::cuda {

// One index expression per axis, outermost first.
using Coords = std::vector<std::string>;

std::vector<int64_t> shapeOf(Value value);
int64_t elementsOf(llvm::ArrayRef<int64_t> shape);
// The row-major offset of `at` in `shape`, as an expression.
std::string linearIndex(const Coords &at, llvm::ArrayRef<int64_t> shape);
// The coordinates of flat index `index` in `shape`.
Coords delinearize(const std::string &index, llvm::ArrayRef<int64_t> shape);
// A float literal that reads back exactly: 0.5f, 3.40282347e+38f, INFINITY.
std::string floatLiteral(double value);
// The elements of a constant (tosa.const or arith.constant), or null.
DenseElementsAttr constantData(Value value);
// The value of a splat constant, as a literal.
std::optional<std::string> splatLiteral(Value value);

class ElementCode {
public:
  // Reads a value from its buffer: the expression for the element at a
  // row-major offset.
  using Load = std::function<std::string(Value, const std::string &offset)>;
  // `members` are the operations computed in this kernel; any other value is
  // read from its buffer by `load`.
  ElementCode(const llvm::DenseSet<Operation *> &members, Load load, int indent);

  // An expression (usually a variable defined by the statements emitted so
  // far) for `value` at `at`. Fails on an operation without a rule.
  FailureOr<std::string> valueAt(Value value, const Coords &at);

  // Values the kernel already holds (the accumulator, a row's reduction):
  // they stand for themselves at any coordinates.
  void give(Value value, std::string expression) { given[value] = std::move(expression); }
  // Appends a statement at the current indentation.
  void line(const std::string &text);
  // Statements for a nested scope: the caller wraps them in a loop.
  std::string nested(const std::function<void()> &body);
  // The statements emitted so far, which are then cleared.
  std::string take();
  std::string fresh(const char *prefix);
  // The coordinates of flat index `index` in `shape`, each computed once
  // into a variable of its own.
  Coords coordinates(const std::string &index, llvm::ArrayRef<int64_t> shape);
  int indentation() const { return indent; }

private:
  FailureOr<std::string> compute(Operation *op, Value value, const Coords &at);
  FailureOr<std::string> operandAt(Value operand, Value result, const Coords &at);
  std::string define(const std::string &expression);
  std::string defineIndex(const std::string &expression);
  FailureOr<std::string> reduce(Value input, int64_t axis, const char *initial, const char *combine,
                                const Coords &at);
  FailureOr<std::string> concat(tosa::ConcatOp op, const Coords &at);
  FailureOr<std::string> pad(tosa::PadOp op, const Coords &at);
  FailureOr<std::string> window(Operation *op, const Coords &at);

  const llvm::DenseSet<Operation *> &members;
  Load load;
  llvm::DenseMap<Value, std::string> given;
  std::map<std::pair<void *, std::string>, std::string> cache;
  std::string statements;
  int indent;
  int counter = 0;
};

} // namespace mlir::tpu::cuda
