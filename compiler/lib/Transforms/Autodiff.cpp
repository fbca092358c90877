// tpu-autodiff: the forward function becomes a training step (loss,
// gradients by reverse-mode differentiation, optimizer update), all in TOSA.
// Gradients are built at compile time on the graph, one vector-Jacobian rule
// per op, as JAX and Enzyme do, so the step is an ordinary graph that every
// later pass and target handles like any other.
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace mlir::tpu {
#define GEN_PASS_DEF_AUTODIFF
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

using Shape = SmallVector<int64_t>;

Shape shapeOf(Value value) {
  return Shape(llvm::cast<RankedTensorType>(value.getType()).getShape());
}

// Creates TOSA ops with explicit result types at one location.
class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc, int64_t &count) : b(builder), loc(loc), count(count) {}

  RankedTensorType type(ArrayRef<int64_t> shape, Type element = {}) {
    return RankedTensorType::get(shape, element ? element : b.getF32Type());
  }

  template <typename Op, typename... Args> Value make(Type type, Args &&...args) {
    ++count;
    return b.create<Op>(loc, type, std::forward<Args>(args)...).getResult();
  }

  // A float splat with `rank` axes of size 1, which broadcasts everywhere.
  Value scalar(double value, int64_t rank) {
    auto t = type(Shape(rank, 1));
    return make<tosa::ConstOp>(t, DenseElementsAttr::get(t, static_cast<float>(value)));
  }

  // numpy broadcasting of equal-rank operands, as TOSA requires.
  Shape broadcast(Value x, Value y) {
    Shape a = shapeOf(x), c = shapeOf(y);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = std::max(a[i], c[i]);
    return a;
  }

  template <typename Op> Value binary(Value x, Value y) {
    return make<Op>(type(broadcast(x, y)), x, y);
  }
  Value mul(Value x, Value y) {
    return make<tosa::MulOp>(type(broadcast(x, y)), x, y, b.getI8IntegerAttr(0));
  }
  template <typename Op> Value unary(Value x) { return make<Op>(x.getType(), x); }

  Value reduceSum(Value x, int64_t axis) {
    Shape shape = shapeOf(x);
    shape[axis] = 1;
    auto element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
    return make<tosa::ReduceSumOp>(type(shape, element), x, b.getI32IntegerAttr(axis));
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (shapeOf(x) == Shape(shape))
      return x;
    auto element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
    return make<tosa::ReshapeOp>(type(shape, element), x, b.getDenseI64ArrayAttr(shape));
  }
  Value transpose(Value x, ArrayRef<int32_t> perm) {
    Shape in = shapeOf(x), out;
    for (int32_t p : perm)
      out.push_back(in[p]);
    auto permsType = type({static_cast<int64_t>(perm.size())}, b.getI32Type());
    Value perms = make<tosa::ConstOp>(permsType, DenseElementsAttr::get(permsType, perm));
    return make<tosa::TransposeOp>(type(out), x, perms);
  }

  // The gradient of a broadcast operand: summed over the axes it was
  // repeated along, to its own shape.
  Value unbroadcast(Value gradient, ArrayRef<int64_t> shape) {
    Shape have = shapeOf(gradient);
    for (size_t axis = 0; axis < shape.size(); ++axis)
      if (shape[axis] == 1 && have[axis] != 1)
        gradient = reduceSum(gradient, static_cast<int64_t>(axis));
    return gradient;
  }

  // 1.0 where `mask` holds, else 0.0.
  Value indicator(Value mask) {
    int64_t rank = static_cast<int64_t>(shapeOf(mask).size());
    return make<tosa::SelectOp>(type(shapeOf(mask)), mask, scalar(1.0, rank), scalar(0.0, rank));
  }

  OpBuilder &b;
  Location loc;

private:
  int64_t &count;
};

// A gradient op's location: its forward op's, named "NODE (gradient)", so
// that reports attribute it to the forward node and tell it from the forward
// pass (docs/training.md).
Location gradientLocation(Location loc) {
  auto name = llvm::dyn_cast<NameLoc>(loc);
  if (!name)
    return loc;
  return NameLoc::get(StringAttr::get(loc.getContext(), name.getName().str() + " (gradient)"),
                      name.getChildLoc());
}

class Autodiff : public tpu::impl::AutodiffBase<Autodiff> {
public:
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    if (failed(build()))
      signalPassFailure();
  }

private:
  struct Parameter {
    std::string name;
    tosa::ConstOp op;
  };

  LogicalResult build() {
    ModuleOp module = getOperation();
    if (loss != "cross-entropy" && loss != "mse")
      return module.emitError() << "loss must be cross-entropy or mse, got '" << loss << "'";
    if (optimizer != "sgd" && optimizer != "momentum")
      return module.emitError() << "optimizer must be sgd or momentum, got '" << optimizer << "'";
    if (!(lr > 0.0) || !std::isfinite(lr))
      return module.emitError() << "lr must be a positive number, got " << lr;
    if (!(momentum >= 0.0 && momentum < 1.0))
      return module.emitError() << "momentum must be in [0, 1), got " << momentum;
    if (!(weightDecay >= 0.0) || !std::isfinite(weightDecay))
      return module.emitError() << "weight-decay must be 0 or more, got " << weightDecay;

    auto forward = module.lookupSymbol<func::FuncOp>("main");
    if (!forward || forward.isExternal())
      return module.emitError() << "no function @main to train";
    if (forward.getNumResults() != 1)
      return forward.emitError() << "training needs one model output, @main has "
                                 << forward.getNumResults();
    auto output = llvm::dyn_cast<RankedTensorType>(forward.getResultTypes()[0]);
    if (!output || !output.hasStaticShape() || !output.getElementType().isF32())
      return forward.emitError() << "training needs a static f32 output, @main's is "
                                 << forward.getResultTypes()[0];
    bool crossEntropy = loss == "cross-entropy";
    if (crossEntropy && output.getRank() != 2)
      return forward.emitError() << "cross-entropy needs a [batch, classes] output, @main's is "
                                 << output;

    FailureOr<SmallVector<Parameter>> parameters = findParameters(forward);
    if (failed(parameters))
      return failure();
    numParameters = parameters->size();
    bool withMomentum = optimizer == "momentum";

    // The step's signature (see the pass description).
    OpBuilder builder(forward);
    MLIRContext *context = &getContext();
    auto named = [&](StringRef name) {
      return builder.getDictionaryAttr(
          builder.getNamedAttr("tpu.name", builder.getStringAttr(name)));
    };
    SmallVector<Type> inputs(forward.getArgumentTypes());
    SmallVector<Attribute> inputNames;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      DictionaryAttr attrs = forward.getArgAttrDict(i);
      inputNames.push_back(attrs ? attrs : builder.getDictionaryAttr({}));
    }
    Type labels = crossEntropy
                      ? RankedTensorType::get({output.getDimSize(0)}, IntegerType::get(context, 64))
                      : Type(output);
    inputs.push_back(labels);
    inputNames.push_back(named("labels"));
    SmallVector<Type> results{RankedTensorType::get({1}, builder.getF32Type())};
    SmallVector<Attribute> resultNames{named("loss")};
    if (crossEntropy) {
      results.push_back(RankedTensorType::get({1}, builder.getI32Type()));
      resultNames.push_back(named("correct"));
    }
    for (bool buffers : {false, true}) {
      if (buffers && !withMomentum)
        break;
      for (Parameter &parameter : *parameters) {
        std::string name = buffers ? parameter.name + ".momentum" : parameter.name;
        for (auto [types, names] :
             {std::pair(&inputs, &inputNames), std::pair(&results, &resultNames)}) {
          types->push_back(parameter.op.getType());
          names->push_back(named(name));
        }
      }
    }
    auto step = builder.create<func::FuncOp>(forward.getLoc(), "main",
                                             builder.getFunctionType(inputs, results));
    step.setAllArgAttrs(inputNames);
    step.setAllResultAttrs(resultNames);
    Block *body = step.addEntryBlock();

    // The forward graph, with parameters read from the arguments.
    unsigned forwardInputs = forward.getNumArguments();
    IRMapping mapping;
    for (unsigned i = 0; i < forwardInputs; ++i)
      mapping.map(forward.getArgument(i), body->getArgument(i));
    unsigned firstParameter = forwardInputs + 1;
    SmallVector<Value> parameterValues, bufferValues;
    for (auto [i, parameter] : llvm::enumerate(*parameters)) {
      parameterValues.push_back(body->getArgument(firstParameter + i));
      if (withMomentum)
        bufferValues.push_back(body->getArgument(firstParameter + parameters->size() + i));
      mapping.map(parameter.op.getResult(), parameterValues.back());
    }
    builder.setInsertionPointToStart(body);
    SmallVector<Operation *> ops;
    Value modelOutput;
    for (Operation &op : forward.getBody().front()) {
      if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
        modelOutput = mapping.lookup(ret.getOperand(0));
        continue;
      }
      if (op.getNumResults() == 1 && mapping.contains(op.getResult(0)))
        continue; // a parameter, now an argument
      ops.push_back(builder.clone(op, mapping));
    }

    // Values that depend on a parameter: only their gradients are built.
    DenseSet<Value> active(parameterValues.begin(), parameterValues.end());
    for (Operation *op : ops)
      if (llvm::any_of(op->getOperands(), [&](Value v) { return active.contains(v); }))
        for (Value result : op->getResults())
          if (isFloatTensor(result))
            active.insert(result);

    int64_t count = 0;
    Emitter lossEmitter(builder, NameLoc::get(builder.getStringAttr("loss")), count);
    Value labelsValue = body->getArgument(forwardInputs);
    SmallVector<Value> stepResults;
    Value outputGradient =
        crossEntropy ? buildCrossEntropy(lossEmitter, modelOutput, labelsValue, stepResults)
                     : buildMeanSquaredError(lossEmitter, modelOutput, labelsValue, stepResults);

    DenseMap<Value, Value> gradients;
    auto accumulate = [&](Emitter &e, Value value, Value gradient) {
      auto [it, inserted] = gradients.try_emplace(value, gradient);
      if (!inserted)
        it->second = e.binary<tosa::AddOp>(it->second, gradient);
    };
    if (active.contains(modelOutput))
      gradients[modelOutput] = outputGradient;
    for (Operation *op : llvm::reverse(ops)) {
      if (op->getNumResults() != 1 || !gradients.count(op->getResult(0)))
        continue;
      SmallVector<unsigned> wanted;
      for (auto [index, operand] : llvm::enumerate(op->getOperands()))
        if (active.contains(operand))
          wanted.push_back(index);
      if (wanted.empty())
        continue;
      Emitter e(builder, gradientLocation(op->getLoc()), count);
      FailureOr<Gradients> operandGradients =
          vectorJacobian(e, op, gradients.lookup(op->getResult(0)));
      if (failed(operandGradients))
        return failure();
      for (unsigned index : wanted)
        accumulate(e, op->getOperand(index), (*operandGradients)[index]());
    }

    // The optimizer: parameters first, then their buffers (the signature's order).
    SmallVector<Value> updatedBuffers;
    for (auto [i, parameter] : llvm::enumerate(*parameters)) {
      Value w = parameterValues[i];
      Emitter e(builder, NameLoc::get(builder.getStringAttr(parameter.name + " (update)")), count);
      int64_t rank = static_cast<int64_t>(shapeOf(w).size());
      // A parameter the loss does not depend on has a zero gradient.
      Value g = gradients.lookup(w);
      if (weightDecay != 0.0) {
        Value decay = e.mul(w, e.scalar(weightDecay, rank));
        g = g ? e.binary<tosa::AddOp>(g, decay) : decay;
      }
      if (withMomentum) {
        Value v = e.mul(bufferValues[i], e.scalar(momentum, rank));
        if (g)
          v = e.binary<tosa::AddOp>(v, g);
        updatedBuffers.push_back(v);
        g = v;
      }
      // w + g (-lr): the same bits as w - g lr, with the step's tile on the
      // left, so that it can join the matmul producing g as an epilogue.
      stepResults.push_back(g ? e.binary<tosa::AddOp>(e.mul(g, e.scalar(-lr, rank)), w) : w);
    }
    llvm::append_range(stepResults, updatedBuffers);
    builder.create<func::ReturnOp>(forward.getLoc(), stepResults);
    numGradientOps = count;
    forward.erase();
    return success();
  }

  static bool isFloatTensor(Value value) {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    return type && llvm::isa<FloatType>(type.getElementType());
  }

  FailureOr<SmallVector<Parameter>> findParameters(func::FuncOp forward) {
    SmallVector<Parameter> found;
    llvm::StringSet<> wanted;
    for (const std::string &name : trainable)
      wanted.insert(name);
    llvm::StringSet<> seen;
    for (auto op : forward.getOps<tosa::ConstOp>()) {
      auto name = op->getAttrOfType<StringAttr>("tpu.name");
      if (!name || !isFloatTensor(op.getResult()))
        continue;
      seen.insert(name.getValue());
      if (!wanted.empty() && !wanted.contains(name.getValue()))
        continue;
      auto type = llvm::cast<RankedTensorType>(op.getType());
      if (!type.hasStaticShape() || !type.getElementType().isF32())
        return op.emitError() << "parameter '" << name.getValue()
                              << "' must be a static f32 tensor to train, it is " << type;
      found.push_back({name.getValue().str(), op});
    }
    for (const std::string &name : trainable)
      if (!seen.contains(name))
        return forward.emitError() << "no float parameter named '" << name << "' to train";
    if (found.empty())
      return forward.emitError() << "nothing to train: @main has no named float constant";
    return found;
  }

  // Mean softmax cross-entropy of the logits' rows against integer labels:
  // the loss and the correct-prediction count go to `results`; returns the
  // logits' gradient (softmax - onehot) / B.
  static Value buildCrossEntropy(Emitter &e, Value logits, Value labels,
                                 SmallVectorImpl<Value> &results) {
    Shape shape = shapeOf(logits);
    int64_t batch = shape[0], classes = shape[1];
    auto i32 = e.b.getI32Type();
    Value labels32 = e.make<tosa::CastOp>(e.type({batch}, i32), labels);
    SmallVector<int32_t> iota(classes);
    std::iota(iota.begin(), iota.end(), 0);
    auto iotaType = e.type({1, classes}, i32);
    Value classIds =
        e.make<tosa::ConstOp>(iotaType, DenseElementsAttr::get(iotaType, ArrayRef(iota)));
    Value hit = e.make<tosa::EqualOp>(e.type(shape, e.b.getI1Type()),
                                      e.reshape(labels32, {batch, 1}), classIds);
    Value onehot = e.indicator(hit);
    // log(sum(exp(x))) - x[label], with the row's maximum subtracted first
    // so that exp cannot overflow.
    Value shifted = e.binary<tosa::SubOp>(
        logits, e.make<tosa::ReduceMaxOp>(e.type({batch, 1}), logits, e.b.getI32IntegerAttr(1)));
    Value exp = e.unary<tosa::ExpOp>(shifted);
    Value sum = e.reduceSum(exp, 1);
    Value rowLoss =
        e.binary<tosa::SubOp>(e.unary<tosa::LogOp>(sum), e.reduceSum(e.mul(shifted, onehot), 1));
    Value invBatch = e.scalar(1.0 / static_cast<double>(batch), 2);
    results.push_back(e.reshape(e.mul(e.reduceSum(rowLoss, 0), invBatch), {1}));
    Value predicted =
        e.make<tosa::ArgMaxOp>(e.type({batch}, i32), logits, e.b.getI32IntegerAttr(1));
    Value correct = e.make<tosa::CastOp>(
        e.type({batch}, i32),
        e.make<tosa::EqualOp>(e.type({batch}, e.b.getI1Type()), predicted, labels32));
    results.push_back(e.reduceSum(correct, 0));
    Value softmax = e.mul(exp, e.unary<tosa::ReciprocalOp>(sum));
    return e.mul(e.binary<tosa::SubOp>(softmax, onehot), invBatch);
  }

  // Mean over all elements of (output - target)^2; returns its gradient
  // 2 (output - target) / N.
  static Value buildMeanSquaredError(Emitter &e, Value output, Value target,
                                     SmallVectorImpl<Value> &results) {
    Shape shape = shapeOf(output);
    int64_t rank = static_cast<int64_t>(shape.size()), elements = 1;
    for (int64_t d : shape)
      elements *= d;
    Value difference = e.binary<tosa::SubOp>(output, target);
    Value total = e.mul(difference, difference);
    for (int64_t axis = 0; axis < rank; ++axis)
      if (shape[axis] != 1)
        total = e.reduceSum(total, axis);
    double inverse = 1.0 / static_cast<double>(elements);
    results.push_back(e.reshape(e.mul(total, e.scalar(inverse, rank)), {1}));
    return e.mul(difference, e.scalar(2.0 * inverse, rank));
  }

  // The gradient of each operand of `op` given its result's gradient `dy`,
  // each built only when called, so that operands which need none (inputs,
  // constants, transpose's perms) cost nothing.
  using Gradients = SmallVector<std::function<Value()>>;
  static FailureOr<Gradients> vectorJacobian(Emitter &e, Operation *op, Value dy) {
    Value y = op->getResult(0);
    auto operand = [op](unsigned i) { return op->getOperand(i); };
    int64_t rank = static_cast<int64_t>(shapeOf(y).size());
    auto one = [](std::function<Value()> gradient) { return Gradients{std::move(gradient)}; };
    auto both = [&](std::function<Value()> da, std::function<Value()> db) {
      return Gradients{[&e, operand, da] { return e.unbroadcast(da(), shapeOf(operand(0))); },
                       [&e, operand, db] { return e.unbroadcast(db(), shapeOf(operand(1))); }};
    };
    for (Value v : op->getOperands())
      if (auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
          !type || !type.hasStaticShape())
        return op->emitError() << "training needs static shapes, " << op->getName()
                               << " has an operand of type " << v.getType();
    if (llvm::isa<tosa::AddOp>(op))
      return both([dy] { return dy; }, [dy] { return dy; });
    if (llvm::isa<tosa::SubOp>(op))
      return both([dy] { return dy; }, [&e, dy] { return e.unary<tosa::NegateOp>(dy); });
    if (llvm::isa<tosa::MulOp>(op))
      return both([&e, dy, operand] { return e.mul(dy, operand(1)); },
                  [&e, dy, operand] { return e.mul(dy, operand(0)); });
    if (llvm::isa<tosa::NegateOp>(op))
      return one([&e, dy] { return e.unary<tosa::NegateOp>(dy); });
    if (llvm::isa<tosa::MatMulOp>(op)) {
      // [B, M, K] x [B, K, N]: dA = dY B^T, dB = A^T dY, batch by batch.
      Value a = operand(0), b = operand(1);
      if (shapeOf(a)[0] != shapeOf(b)[0])
        return op->emitError() << "training needs a matmul with equal batches";
      return Gradients{[&e, dy, a, b] {
                         return e.make<tosa::MatMulOp>(a.getType(), dy, e.transpose(b, {0, 2, 1}));
                       },
                       [&e, dy, a, b] {
                         return e.make<tosa::MatMulOp>(b.getType(), e.transpose(a, {0, 2, 1}), dy);
                       }};
    }
    if (llvm::isa<tosa::ReshapeOp>(op))
      return one([&e, dy, operand] { return e.reshape(dy, shapeOf(operand(0))); });
    if (auto transpose = llvm::dyn_cast<tosa::TransposeOp>(op)) {
      SmallVector<int64_t> perm;
      if (failed(transpose.getConstantPerms(perm)))
        return op->emitError() << "training needs a transpose with constant perms";
      SmallVector<int32_t> inverse(perm.size());
      for (auto [i, p] : llvm::enumerate(perm))
        inverse[p] = static_cast<int32_t>(i);
      return one([&e, dy, inverse] { return e.transpose(dy, inverse); });
    }
    if (auto clamp = llvm::dyn_cast<tosa::ClampOp>(op)) {
      // 1 strictly inside the bounds, as PyTorch's relu and hardtanh have
      // it; an unbounded side (ReLU's top) needs no comparison. Tested on
      // the output, which is inside exactly where the input is, so that the
      // input has no other use (a matmul's bias and ReLU stay its epilogue),
      // and applied as a multiplication by the 1/0 mask, which can join the
      // matmul that produces dy as its epilogue: the mask is built right
      // after the clamp, in the forward part, so that it is there before
      // that matmul.
      float lo = clamp.getMinFp().convertToFloat(), hi = clamp.getMaxFp().convertToFloat();
      return one([&e, dy, rank, lo, hi, y] {
        OpBuilder::InsertPoint backward = e.b.saveInsertionPoint();
        e.b.setInsertionPointAfterValue(y);
        Value inside;
        auto i1 = e.type(shapeOf(y), e.b.getI1Type());
        if (lo != std::numeric_limits<float>::lowest())
          inside = e.make<tosa::GreaterOp>(i1, y, e.scalar(lo, rank));
        if (hi != std::numeric_limits<float>::max()) {
          Value below = e.make<tosa::GreaterOp>(i1, e.scalar(hi, rank), y);
          inside = inside ? e.make<tosa::LogicalAndOp>(i1, inside, below) : below;
        }
        Value mask = inside ? e.make<tosa::CastOp>(e.type(shapeOf(y)), inside) : Value();
        e.b.restoreInsertionPoint(backward);
        return mask ? e.mul(dy, mask) : dy;
      });
    }
    if (llvm::isa<tosa::ExpOp>(op))
      return one([&e, dy, y] { return e.mul(dy, y); });
    if (llvm::isa<tosa::LogOp>(op))
      return one([&e, dy, operand] { return e.mul(dy, e.unary<tosa::ReciprocalOp>(operand(0))); });
    if (llvm::isa<tosa::ReciprocalOp>(op))
      return one([&e, dy, y] { return e.unary<tosa::NegateOp>(e.mul(dy, e.mul(y, y))); });
    if (llvm::isa<tosa::TanhOp>(op))
      return one([&e, dy, y, rank] {
        return e.mul(dy, e.binary<tosa::SubOp>(e.scalar(1.0, rank), e.mul(y, y)));
      });
    if (llvm::isa<tosa::SigmoidOp>(op))
      return one([&e, dy, y, rank] {
        return e.mul(dy, e.mul(y, e.binary<tosa::SubOp>(e.scalar(1.0, rank), y)));
      });
    if (auto sum = llvm::dyn_cast<tosa::ReduceSumOp>(op)) {
      Value x = operand(0);
      Shape multiples(rank, 1);
      multiples[sum.getAxis()] = shapeOf(x)[sum.getAxis()];
      return one([&e, dy, x, multiples] {
        return e.make<tosa::TileOp>(x.getType(), dy, e.b.getDenseI64ArrayAttr(multiples));
      });
    }
    if (auto max = llvm::dyn_cast<tosa::ReduceMaxOp>(op)) {
      // Shared equally among tied maxima, so the rule stays the gradient of
      // a symmetric function.
      int64_t axis = max.getAxis();
      return one([&e, dy, y, axis, x = operand(0)] {
        Value isMax = e.indicator(e.make<tosa::EqualOp>(e.type(shapeOf(x), e.b.getI1Type()), x, y));
        Value share = e.mul(dy, e.unary<tosa::ReciprocalOp>(e.reduceSum(isMax, axis)));
        return e.mul(isMax, share);
      });
    }
    return op->emitError() << "no gradient rule for " << op->getName()
                           << " (it lies between a trainable parameter and the loss)";
  }
};

} // namespace
