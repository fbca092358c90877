// Convolutions, pools and BatchNormalization. TOSA's versions are NHWC: the
// input is transposed to NHWC unless it already is, and the result stays NHWC
// (see Layout in Importer.h).
#include "Importer.h"

#include <array>
#include <cmath>

namespace tpu::frontend::detail {
namespace {

// The sliding window of a 2-D convolution or pool, in TOSA's terms.
struct Window {
  std::array<int64_t, 2> kernel, stride, dilation, output;
  // The ONNX pads, in TOSA's order: top, bottom, left, right.
  std::array<int64_t, 4> pad;
  // Rows and columns beyond the bottom and right pads that ceil_mode needs
  // for its last, partial windows; they count in no average.
  std::array<int64_t, 2> ceilExtra{0, 0};
  // Input rows and columns after the last window, cut off: TOSA wants the
  // windows to tile the padded input exactly (its avg_pool2d divisors
  // count from both ends), so unused end padding is dropped first and
  // unused input after it.
  std::array<int64_t, 2> crop{0, 0};

  std::array<int64_t, 4> tosaPad() const {
    return {pad[0], pad[1] + ceilExtra[0], pad[2], pad[3] + ceilExtra[1]};
  }
};

// 1-D windows are 2-D ones over an image of height 1: their attributes get
// a leading 1 (pads a leading 0 at each end).
std::array<int64_t, 2> pairAttr(const Node &node, const char *name, int64_t fallback,
                                bool oneD = false) {
  std::optional<std::vector<int64_t>> values = node.intsAttr(name);
  if (!values)
    return {oneD ? 1 : fallback, fallback};
  if (oneD && values->size() == 1 && (*values)[0] >= 1)
    return {1, (*values)[0]};
  if (values->size() != 2 || (*values)[0] < 1 || (*values)[1] < 1)
    node.fail("{} [{}] must be {} positive values", name, fmt::join(*values, ","),
              oneD ? "one" : "two");
  return {(*values)[0], (*values)[1]};
}

std::optional<std::vector<int64_t>> padsAttr(const Node &node, bool oneD) {
  std::optional<std::vector<int64_t>> pads = node.intsAttr("pads");
  if (oneD && pads && pads->size() == 2)
    return std::vector<int64_t>{0, (*pads)[0], 0, (*pads)[1]};
  return pads;
}

// Output size and padding along H and W from kernel_shape, strides,
// dilations, pads, auto_pad and (pools) ceil_mode, as the ONNX operator
// documentation defines them.
Window slidingWindow(const Node &node, const Shape &nchw, std::array<int64_t, 2> kernel,
                     bool ceilMode, bool oneD) {
  Window window{
      kernel, pairAttr(node, "strides", 1, oneD), pairAttr(node, "dilations", 1, oneD), {}, {}};
  std::string autoPad = node.stringAttr("auto_pad", "NOTSET");
  std::optional<std::vector<int64_t>> pads = padsAttr(node, oneD);
  if (autoPad != "NOTSET" && pads)
    node.fail("pads cannot be combined with auto_pad '{}'", autoPad);
  if (pads && (pads->size() != 4 || *std::min_element(pads->begin(), pads->end()) < 0))
    node.fail("pads [{}] must be four non-negative values", fmt::join(*pads, ","));
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    node.fail("auto_pad '{}' is not supported", autoPad);

  for (int d = 0; d < 2; ++d) {
    int64_t size = nchw[2 + d], stride = window.stride[d];
    int64_t extent = (kernel[d] - 1) * window.dilation[d] + 1;
    // ONNX pads are [begin H, begin W, end H, end W].
    int64_t begin = pads ? (*pads)[d] : 0, end = pads ? (*pads)[2 + d] : 0;
    int64_t output;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      output = (size + stride - 1) / stride;
      int64_t total = std::max<int64_t>(0, (output - 1) * stride + extent - size);
      begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else {
      int64_t span = size + begin + end - extent;
      if (span < 0)
        node.fail("the window ({}) is larger than the padded input ({})", extent,
                  size + begin + end);
      output = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
      // A last window starting in the end padding holds no input element;
      // ONNX versions disagree on whether it exists.
      if (ceilMode && (output - 1) * stride >= size + begin)
        node.fail("ceil_mode would start the last window in the padding");
    }
    int64_t excess = size + begin + end - ((output - 1) * stride + extent);
    if (excess < 0) {
      window.ceilExtra[d] = -excess;
    } else {
      int64_t unusedPad = std::min(excess, end);
      end -= unusedPad;
      window.crop[d] = excess - unusedPad;
    }
    window.pad[2 * d] = begin;
    window.pad[2 * d + 1] = end;
    window.output[d] = output;
  }
  return window;
}

std::array<int64_t, 2> kernelShape(const Node &node, bool oneD) {
  if (!node.intsAttr("kernel_shape"))
    node.fail("kernel_shape is required");
  return pairAttr(node, "kernel_shape", 1, oneD);
}

// 1-D (NCL) or 2-D (NCHW) images; true for 1-D.
bool imageRank(const Node &node, const Shape &shape) {
  if (shape.size() != 3 && shape.size() != 4)
    node.fail("only 1-D and 2-D images (3-D NCL or 4-D NCHW input) are supported, got rank {}",
              shape.size());
  return shape.size() == 3;
}

} // namespace

Value Importer::windowInput(const Tensor &x, const std::array<int64_t, 2> &crop,
                            mlir::Location loc) {
  Value image = toNHWC(x, loc);
  Shape shape = shapeOf(image);
  return slice(image, {0, 0, 0, 0}, {shape[0], shape[1] - crop[0], shape[2] - crop[1], shape[3]},
               loc);
}

namespace {

// A 1-D image [N, C, L] as [N, C, 1, L], and a result back.
Shape asImageShape(Shape shape) {
  if (shape.size() == 3)
    shape.insert(shape.begin() + 2, 1);
  return shape;
}

} // namespace

Importer::Image Importer::imageInput(const Node &node) {
  Tensor x = input(node, 0);
  Shape shape = onnxShape(x);
  bool oneD = imageRank(node, shape);
  if (oneD)
    x = {reshape(x.value, asImageShape(shape), node.loc)};
  return {x, onnxShape(x), oneD};
}

Tensor Importer::fromImage(const Tensor &result, bool oneD, mlir::Location loc) {
  if (!oneD)
    return result;
  Value nchw = toOnnxLayout(result, loc);
  Shape shape = shapeOf(nchw);
  return {reshape(nchw, {shape[0], shape[1], shape[3]}, loc)};
}

Value Importer::blockDiagonalWeights(const Node &node, int64_t group, int64_t channels) {
  if (!constants.count(node.proto.input(1)))
    return nullptr;
  const onnx::TensorProto *tensor = constantInput(node, 1);
  Shape ws = asImageShape({tensor->dims().begin(), tensor->dims().end()});
  std::vector<float> grouped = constantFloats(node, 1);
  int64_t outChannels = ws[0], groupIn = ws[1], taps = ws[2] * ws[3];
  int64_t groupOut = outChannels / group;
  std::vector<float> dense(outChannels * channels * taps, 0.0f);
  for (int64_t o = 0; o < outChannels; ++o)
    for (int64_t c = 0; c < groupIn; ++c)
      for (int64_t t = 0; t < taps; ++t)
        dense[(o * channels + (o / groupOut) * groupIn + c) * taps + t] =
            grouped[(o * groupIn + c) * taps + t];
  return constant({outChannels, channels, ws[2], ws[3]}, dense, node.loc);
}

Tensor Importer::importConv(const Node &node) {
  node.expectInputs(2, 3);
  auto [x, xs, oneD] = imageInput(node);
  Value weight = onnxInput(node, 1);
  if (oneD)
    weight = reshape(weight, asImageShape(shapeOf(weight)), node.loc);
  Shape ws = shapeOf(weight);
  int64_t channels = xs[1], group = node.intAttr("group", 1);
  if (ws.size() != 4 || group < 1 || channels % group || ws[0] % group || ws[1] != channels / group)
    node.fail("weights [{}] do not fit {} input channels in {} groups", fmt::join(ws, ","),
              channels, group);
  int64_t outChannels = ws[0];
  std::array<int64_t, 2> kernel{ws[2], ws[3]};
  if (node.intsAttr("kernel_shape") && kernelShape(node, oneD) != kernel)
    node.fail("kernel_shape does not match the weights [{}]", fmt::join(ws, ","));
  Window window = slidingWindow(node, xs, kernel, /*ceilMode=*/false, oneD);
  Value bias = node.hasInput(2)
                   ? onnxInput(node, 2)
                   : constant({outChannels}, std::vector<float>(outChannels, 0.0f), node.loc);
  if (shapeOf(bias) != Shape{outChannels})
    node.fail("bias must have shape [{}]", outChannels);

  Value image = windowInput(x, window.crop, node.loc);
  auto pad = builder.getDenseI64ArrayAttr(window.tosaPad());
  auto stride = builder.getDenseI64ArrayAttr(window.stride);
  auto dilation = builder.getDenseI64ArrayAttr(window.dilation);
  int64_t batch = xs[0]; // a structured binding cannot be captured in C++17
  auto resultType = [&](int64_t c) {
    return tensorType({batch, window.output[0], window.output[1], c});
  };
  // tosa.conv2d takes OHWI weights.
  auto conv = [&](Value in, Value oihw, Value b) {
    return builder.create<mlir::tosa::Conv2DOp>(node.loc, resultType(shapeOf(oihw)[0]), in,
                                                transpose(oihw, kToNHWC, node.loc), b, pad, stride,
                                                dilation);
  };
  if (group == 1)
    return fromImage({conv(image, weight, bias), Layout::NHWC}, oneD, node.loc);
  // A channel multiplier M > 1 as depthwise only for training: inference
  // takes the block-diagonal convolution below, which the matrix unit runs.
  if (group == channels && (outChannels == channels || options.training)) {
    // Depthwise: output channel c * M + m reads input channel c, and
    // tosa.depthwise_conv2d takes [KH, KW, C, M] weights.
    int64_t multiplier = outChannels / channels;
    Value hwcm = transpose(reshape(weight, {channels, multiplier, kernel[0], kernel[1]}, node.loc),
                           {2, 3, 0, 1}, node.loc);
    return fromImage(
        {builder.create<mlir::tosa::DepthwiseConv2DOp>(node.loc, resultType(outChannels), image,
                                                       hwcm, bias, pad, stride, dilation),
         Layout::NHWC},
        oneD, node.loc);
  }
  // Constant weights of other groups (a depthwise channel multiplier
  // included): one convolution whose weights are zero between the groups,
  // which the matrix unit runs as one matmul. Not for training, where the
  // weights are values to train.
  if (!options.training)
    if (Value dense = blockDiagonalWeights(node, group, channels))
      return fromImage({conv(image, dense, bias), Layout::NHWC}, oneD, node.loc);
  // Other groups: one convolution per group on its slice of the channels.
  int64_t groupIn = channels / group, groupOut = outChannels / group;
  Shape imageShape = shapeOf(image);
  std::vector<Value> parts;
  for (int64_t g = 0; g < group; ++g) {
    Value in = slice(image, {0, 0, 0, g * groupIn},
                     {imageShape[0], imageShape[1], imageShape[2], groupIn}, node.loc);
    Value w = slice(weight, {g * groupOut, 0, 0, 0}, {groupOut, ws[1], ws[2], ws[3]}, node.loc);
    Value b = slice(bias, {g * groupOut}, {groupOut}, node.loc);
    parts.push_back(conv(in, w, b));
  }
  return fromImage({builder.create<mlir::tosa::ConcatOp>(node.loc, resultType(outChannels), parts,
                                                         builder.getI32IntegerAttr(3)),
                    Layout::NHWC},
                   oneD, node.loc);
}

Tensor Importer::importMaxPool(const Node &node) {
  node.expectInputs(1, 1);
  node.rejectOutputsFrom(1, "Indices");
  auto [x, xs, oneD] = imageInput(node);
  Window window =
      slidingWindow(node, xs, kernelShape(node, oneD), node.intAttr("ceil_mode", 0), oneD);
  if (window.dilation != std::array<int64_t, 2>{1, 1})
    return fromImage(
        {dilatedMaxPool(windowInput(x, window.crop, node.loc), window.kernel, window.stride,
                        window.dilation, window.tosaPad(), window.output, node.loc),
         Layout::NHWC},
        oneD, node.loc);
  // TOSA pads a max pool with the lowest value, so padding never wins.
  return fromImage(
      {builder.create<mlir::tosa::MaxPool2dOp>(
           node.loc, tensorType({xs[0], window.output[0], window.output[1], xs[1]}),
           windowInput(x, window.crop, node.loc), builder.getDenseI64ArrayAttr(window.kernel),
           builder.getDenseI64ArrayAttr(window.stride),
           builder.getDenseI64ArrayAttr(window.tosaPad())),
       Layout::NHWC},
      oneD, node.loc);
}

// tosa.max_pool2d has no dilation: the maximum over the taps, each tap the
// strided slice of the input padded with the lowest value that it reads.
Value Importer::dilatedMaxPool(Value image, llvm::ArrayRef<int64_t> kernel,
                               llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> dilation,
                               llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> output,
                               mlir::Location loc) {
  Value padded = pad(image, {0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0}, loc,
                     std::numeric_limits<float>::lowest());
  Value result;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j) {
      Value tap = stridedSlice(padded, 1, i * dilation[0], stride[0], output[0], loc);
      tap = stridedSlice(tap, 2, j * dilation[1], stride[1], output[1], loc);
      result = result ? binary<mlir::tosa::MaximumOp>(result, tap, loc) : tap;
    }
  return result;
}

Tensor Importer::importAveragePool(const Node &node) {
  node.expectInputs(1, 1);
  auto [x, xs, oneD] = imageInput(node);
  Window window =
      slidingWindow(node, xs, kernelShape(node, oneD), node.intAttr("ceil_mode", 0), oneD);
  Value image = windowInput(x, window.crop, node.loc);
  // tosa.avg_pool2d divides by the number of input elements in the window,
  // as count_include_pad=0 does. With count_include_pad=1 the ONNX pads are
  // made real zeros first; the ceil_mode overhang still does not count.
  std::array<int64_t, 4> poolPad = window.tosaPad();
  if (node.intAttr("count_include_pad", 0)) {
    image = pad(image, {0, 0, window.pad[0], window.pad[1], window.pad[2], window.pad[3], 0, 0},
                node.loc);
    poolPad = {0, window.ceilExtra[0], 0, window.ceilExtra[1]};
  }
  return fromImage(
      {averagePool(image, window.kernel, window.stride, poolPad, node.loc), Layout::NHWC}, oneD,
      node.loc);
}

Tensor Importer::importGlobalAveragePool(const Node &node) {
  node.expectInputs(1, 1);
  auto [x, xs, oneD] = imageInput(node);
  return fromImage(
      {averagePool(toNHWC(x, node.loc), {xs[2], xs[3]}, {1, 1}, {0, 0, 0, 0}, node.loc),
       Layout::NHWC},
      oneD, node.loc);
}

Tensor Importer::importGlobalMaxPool(const Node &node) {
  node.expectInputs(1, 1);
  auto [x, xs, oneD] = imageInput(node);
  auto attr = [&](llvm::ArrayRef<int64_t> values) { return builder.getDenseI64ArrayAttr(values); };
  return fromImage({builder.create<mlir::tosa::MaxPool2dOp>(
                        node.loc, tensorType({xs[0], 1, 1, xs[1]}), toNHWC(x, node.loc),
                        attr({xs[2], xs[3]}), attr({1, 1}), attr({0, 0, 0, 0})),
                    Layout::NHWC},
                   oneD, node.loc);
}

// ConvTranspose as a convolution: the input with stride - 1 zeros between
// its elements (a reshape, pad and reshape), padded by dilation * (k - 1)
// less ONNX's pads (output_padding at the end), convolved with the weights
// flipped and their channel axes swapped. Weights must be constant.
Tensor Importer::importConvTranspose(const Node &node) {
  node.expectInputs(2, 3);
  auto [x, xs, oneD] = imageInput(node);
  const onnx::TensorProto *weightTensor = constantInput(node, 1);
  if (options.training)
    node.fail("training is not supported: the importer folds ConvTranspose's weights into "
              "flipped constants, which tpu-autodiff cannot train");
  Shape ws = asImageShape({weightTensor->dims().begin(), weightTensor->dims().end()});
  std::vector<float> w = constantFloats(node, 1);
  int64_t group = node.intAttr("group", 1), channels = xs[1];
  if (ws.size() != 4 || group < 1 || ws[0] != channels || channels % group)
    node.fail("weights [{}] do not fit {} input channels in {} groups", fmt::join(ws, ","),
              channels, group);
  int64_t groupIn = channels / group, groupOut = ws[1], outChannels = groupOut * group;
  std::array<int64_t, 2> kernel{ws[2], ws[3]}, stride = pairAttr(node, "strides", 1, oneD),
                                               dilation = pairAttr(node, "dilations", 1, oneD),
                                               outputPadding = {0, 0};
  if (std::optional<std::vector<int64_t>> op = node.intsAttr("output_padding")) {
    if (op->size() != (oneD ? 1u : 2u) || *std::min_element(op->begin(), op->end()) < 0)
      node.fail("output_padding [{}] must be {} non-negative values", fmt::join(*op, ","),
                oneD ? 1 : 2);
    outputPadding =
        oneD ? std::array<int64_t, 2>{0, (*op)[0]} : std::array<int64_t, 2>{(*op)[0], (*op)[1]};
  }
  std::string autoPad = node.stringAttr("auto_pad", "NOTSET");
  std::vector<int64_t> pads = padsAttr(node, oneD).value_or(std::vector<int64_t>(4, 0));
  if (pads.size() != 4)
    node.fail("pads [{}] must be {} values", fmt::join(pads, ","), oneD ? 2 : 4);
  std::optional<std::vector<int64_t>> outputShape = node.intsAttr("output_shape");
  if (outputShape && oneD && outputShape->size() == 1)
    outputShape = std::vector<int64_t>{1, (*outputShape)[0]};
  for (int d = 0; d < 2; ++d) {
    int64_t extent = (kernel[d] - 1) * dilation[d] + 1;
    int64_t full = stride[d] * (xs[2 + d] - 1) + outputPadding[d] + extent;
    std::optional<int64_t> out;
    if (outputShape)
      out = (*outputShape)[outputShape->size() - 2 + d];
    else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
      out = xs[2 + d] * stride[d];
    if (out) {
      int64_t total = full - *out;
      bool upper = autoPad == "SAME_UPPER";
      pads[d] = upper ? total / 2 : total - total / 2;
      pads[2 + d] = total - pads[d];
    } else if (autoPad == "VALID") {
      pads[d] = pads[2 + d] = 0;
    }
  }
  // Zeros between the elements: [N, H, 1, W, 1, C] padded to stride.
  Value image = toNHWC(x, node.loc);
  image = reshape(image, {xs[0], xs[2], 1, xs[3], 1, channels}, node.loc);
  if (stride[0] > 1 || stride[1] > 1)
    image = pad(image, {0, 0, 0, 0, 0, stride[0] - 1, 0, 0, 0, stride[1] - 1, 0, 0}, node.loc);
  image = reshape(image, {xs[0], xs[2] * stride[0], xs[3] * stride[1], channels}, node.loc);
  image =
      slice(image, {0, 0, 0, 0},
            {xs[0], (xs[2] - 1) * stride[0] + 1, (xs[3] - 1) * stride[1] + 1, channels}, node.loc);
  // Convolution padding, cropping where ONNX's pads exceed it.
  std::array<int64_t, 4> convPad;
  Shape begin(4, 0), size = shapeOf(image);
  for (int d = 0; d < 2; ++d) {
    int64_t reach = dilation[d] * (kernel[d] - 1);
    int64_t low = reach - pads[d], high = reach - pads[2 + d] + outputPadding[d];
    begin[1 + d] = std::max<int64_t>(0, -low);
    size[1 + d] -= begin[1 + d] + std::max<int64_t>(0, -high);
    convPad[2 * d] = std::max<int64_t>(0, low);
    convPad[2 * d + 1] = std::max<int64_t>(0, high);
  }
  image = slice(image, begin, size, node.loc);
  // Weights [C, O/g, KH, KW] -> OIHW [O, C, KH, KW], flipped, zero between groups.
  std::vector<float> oihw(outChannels * channels * kernel[0] * kernel[1], 0.0f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t o = 0; o < groupOut; ++o)
      for (int64_t i = 0; i < kernel[0]; ++i)
        for (int64_t j = 0; j < kernel[1]; ++j) {
          int64_t out = (c / groupIn) * groupOut + o;
          oihw[((out * channels + c) * kernel[0] + kernel[0] - 1 - i) * kernel[1] + kernel[1] - 1 -
               j] = w[((c * groupOut + o) * kernel[0] + i) * kernel[1] + j];
        }
  Value weight = constant({outChannels, channels, kernel[0], kernel[1]}, oihw, node.loc);
  Value bias = node.hasInput(2)
                   ? onnxInput(node, 2)
                   : constant({outChannels}, std::vector<float>(outChannels, 0.0f), node.loc);
  Shape is = shapeOf(image);
  Shape result{xs[0], 0, 0, outChannels};
  for (int d = 0; d < 2; ++d)
    result[1 + d] = is[1 + d] + convPad[2 * d] + convPad[2 * d + 1] - dilation[d] * (kernel[d] - 1);
  Value conv = builder.create<mlir::tosa::Conv2DOp>(
      node.loc, tensorType(result), image, transpose(weight, kToNHWC, node.loc), bias,
      builder.getDenseI64ArrayAttr(convPad), builder.getDenseI64ArrayAttr({1, 1}),
      builder.getDenseI64ArrayAttr(dilation));
  return fromImage({conv, Layout::NHWC}, oneD, node.loc);
}

Value Importer::averagePool(Value image, llvm::ArrayRef<int64_t> kernel,
                            llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> pad,
                            mlir::Location loc) {
  Shape shape = shapeOf(image);
  for (int d = 0; d < 2; ++d)
    shape[1 + d] = (shape[1 + d] + pad[2 * d] + pad[2 * d + 1] - kernel[d]) / stride[d] + 1;
  return builder.create<mlir::tosa::AvgPool2dOp>(
      loc, tensorType(shape), image, builder.getDenseI64ArrayAttr(kernel),
      builder.getDenseI64ArrayAttr(stride), builder.getDenseI64ArrayAttr(pad),
      mlir::TypeAttr::get(builder.getF32Type()));
}

// Inference form only: y = x * s + t with s = scale / sqrt(var + epsilon)
// and t = B - mean * s computed here, so that constant folding can later
// fold them into a preceding convolution's weights.
Tensor Importer::importBatchNormalization(const Node &node) {
  node.expectInputs(5, 5);
  if (node.intAttr("training_mode", 0)) // opset 14 and later
    node.fail("training_mode=1 is not supported");
  node.rejectOutputsFrom(1, "running mean/variance (training)");
  Tensor x = input(node, 0);
  Shape xs = onnxShape(x);
  if (xs.size() < 2)
    node.fail("X must have rank 2 or more");
  int64_t channels = xs[1];
  std::vector<float> gamma = constantFloats(node, 1), beta = constantFloats(node, 2),
                     mean = constantFloats(node, 3), var = constantFloats(node, 4);
  for (const std::vector<float> *values : {&gamma, &beta, &mean, &var})
    if (values->size() != static_cast<size_t>(channels))
      node.fail("scale, B, mean and var must have {} values", channels);
  double epsilon = node.floatAttr("epsilon", 1e-5f);
  std::vector<float> scale(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    double s = gamma[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(beta[c] - mean[c] * s);
  }
  Shape perChannel(xs.size(), 1);
  perChannel[1] = channels;
  Tensor scaled = broadcast<mlir::tosa::MulOp>(x, {constant(perChannel, scale, node.loc)}, node);
  return broadcast<mlir::tosa::AddOp>(scaled, {constant(perChannel, shift, node.loc)}, node);
}

} // namespace tpu::frontend::detail
