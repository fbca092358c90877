"""What scripts/train and the training tests share: an MLP classifier as an
ONNX model, the sample order tpusim --train uses, and a numpy fp32 reference
of the training step tpuc --train builds (softmax cross-entropy averaged over
the batch, SGD or SGD with momentum, PyTorch's convention)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp_model(path, sizes, batch, seed=0):
    """A ReLU MLP (Gemm with transB, as PyTorch exports Linear) with sizes
    [in, hidden..., classes], input x [batch, in], output logits; weights
    uniform in +-1/sqrt(fan_in) as torch.nn.Linear starts them."""
    rng = np.random.default_rng(seed)
    nodes, initializers, previous = [], [], "x"
    for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        bound = 1.0 / np.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        b = rng.uniform(-bound, bound, fan_out).astype(np.float32)
        initializers += [numpy_helper.from_array(w, f"w{layer}"),
                         numpy_helper.from_array(b, f"b{layer}")]
        out = "logits" if layer == len(sizes) - 1 else f"h{layer}"
        nodes.append(helper.make_node("Gemm", [previous, f"w{layer}", f"b{layer}"],
                                      [out if out == "logits" else f"z{layer}"],
                                      name=f"fc{layer}", transB=1))
        if out != "logits":
            nodes.append(helper.make_node("Relu", [f"z{layer}"], [out], name=f"relu{layer}"))
        previous = out
    return save_classifier(path, "mlp", nodes, initializers, [batch, sizes[0]],
                           [batch, sizes[-1]])


def save_classifier(path, name, nodes, initializers, input_shape, logits_shape):
    """The opset-17 model of `nodes` from input x to output logits, checked
    and saved to `path`."""
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, logits_shape)],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return model


def conv_names(layer):
    """The weight and bias names of cnn_model's convolution `layer` (1, 2)."""
    suffix = "" if layer == 1 else str(layer)
    return f"cw{suffix}", f"cb{suffix}"


def cnn_model(path, batch, channels=8, classes=10, pool="max", seed=0, convs=1):
    """A small CNN for [batch, 1, 8, 8] images: `convs` times Conv 3x3
    (`channels` filters, padding 1) -> ReLU, then MaxPool or AveragePool 2x2
    (stride 2) -> Flatten -> Gemm (transB) to `classes` logits; weights
    uniform in +-1/sqrt(fan_in) as torch.nn.Conv2d and Linear start them.
    Parameters: cw, cb (cw2, cb2 for a second conv), w, b."""
    rng = np.random.default_rng(seed)
    initializers, nodes, previous, inputs = [], [], "x", 1
    for layer in range(1, convs + 1):
        weight, bias = conv_names(layer)
        bound = 1.0 / np.sqrt(9 * inputs)
        initializers += [
            numpy_helper.from_array(rng.uniform(-bound, bound, (channels, inputs, 3, 3)).astype(
                np.float32), weight),
            numpy_helper.from_array(rng.uniform(-bound, bound, channels).astype(np.float32),
                                    bias)]
        nodes += [helper.make_node("Conv", [previous, weight, bias], [f"c{layer}"],
                                   name=f"conv{layer}", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{layer}"], [f"r{layer}"], name=f"relu{layer}")]
        previous, inputs = f"r{layer}", channels
    features = channels * 4 * 4
    bound = 1.0 / np.sqrt(features)
    initializers += [
        numpy_helper.from_array(rng.uniform(-bound, bound, (classes, features)).astype(
            np.float32), "w"),
        numpy_helper.from_array(rng.uniform(-bound, bound, classes).astype(np.float32), "b")]
    pool_op = {"max": "MaxPool", "avg": "AveragePool"}[pool]
    nodes += [
        helper.make_node(pool_op, [previous], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "w", "b"], ["logits"], name="fc", transB=1),
    ]
    return save_classifier(path, "cnn", nodes, initializers, [batch, 1, 8, 8], [batch, classes])


def parameters(model):
    """{name: array} of the model's initializers."""
    return {t.name: numpy_helper.to_array(t).copy() for t in model.graph.initializer}


def write_tensor(array, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array)).SerializeToString())


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


class MT19937_64:
    """std::mt19937_64, which tpusim --train shuffles with."""
    def __init__(self, seed):
        self.mt = [0] * 312
        self.index = 312
        self.mt[0] = seed & 0xFFFFFFFFFFFFFFFF
        for i in range(1, 312):
            self.mt[i] = (6364136223846793005 * (self.mt[i - 1] ^ (self.mt[i - 1] >> 62)) + i) \
                & 0xFFFFFFFFFFFFFFFF

    def __call__(self):
        if self.index >= 312:
            for i in range(312):
                x = (self.mt[i] & 0xFFFFFFFF80000000) | (self.mt[(i + 1) % 312] & 0x7FFFFFFF)
                xa = x >> 1
                if x & 1:
                    xa ^= 0xB5026F5AA96619E9
                self.mt[i] = self.mt[(i + 156) % 312] ^ xa
            self.index = 0
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & 0xFFFFFFFFFFFFFFFF


def shuffled(count, seed):
    """The sample order of tpusim --train's epoch with seed `seed` (epoch E
    of --shuffle-seed=S uses S + E - 1): Fisher-Yates on mt19937_64."""
    order = list(range(count))
    random = MT19937_64(seed)
    for i in range(count, 1, -1):
        j = random() % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def cross_entropy(logits, labels):
    """(loss, correct, d loss / d logits) of softmax cross-entropy averaged
    over the batch."""
    batch = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(axis=1, keepdims=True)
    loss = float(np.mean(np.log(total[:, 0]) - shifted[np.arange(batch), labels]))
    correct = int(np.sum(np.argmax(logits, axis=1) == labels))
    grad = exp / total
    grad[np.arange(batch), labels] -= 1
    return loss, correct, grad / batch


def update(params, buffers, grads, lr, momentum=None):
    """SGD (with momentum: b = momentum b + g, w -= lr b), in place."""
    for name, g in grads.items():
        if momentum is not None:
            buffers[name] = momentum * buffers.get(name, np.zeros_like(g)) + g
            g = buffers[name]
        params[name] -= np.float32(lr) * g.astype(np.float32)


def step(params, buffers, x, labels, lr, momentum=None, layers=None):
    """One training step of the MLP in fp32 (in place on params/buffers):
    returns (loss, correct) of the batch before the update."""
    layers = layers or sorted({int(name[1:]) for name in params if name.startswith("w")})
    activations, pre = [x.astype(np.float32)], []
    for layer in layers:
        z = activations[-1] @ params[f"w{layer}"].T + params[f"b{layer}"]
        pre.append(z)
        activations.append(np.maximum(z, 0) if layer != layers[-1] else z)
    loss, correct, grad = cross_entropy(activations[-1], labels)
    grads = {}
    for i in reversed(range(len(layers))):
        layer = layers[i]
        grads[f"w{layer}"] = grad.T @ activations[i]
        grads[f"b{layer}"] = grad.sum(axis=0)
        if i > 0:
            grad = (grad @ params[f"w{layer}"]) * (pre[i - 1] > 0)
    update(params, buffers, grads, lr, momentum)
    return loss, correct


def bf16(array):
    """`array` rounded to bfloat16 (to nearest, ties to even), as float32:
    what the MXU multiplies."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def exact(array):
    return array


def conv3x3(x, weight, bias, operand):
    """A 3x3 convolution with padding 1 of x [N, C, H, W]: (z, taps), taps[i,
    j] the input under kernel position (i, j) of every output."""
    height, width = x.shape[2:]
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    taps = np.stack([np.stack([padded[:, :, i:i + height, j:j + width] for j in range(3)])
                     for i in range(3)])
    z = np.einsum("ijncyx,ocij->noyx", operand(taps), operand(weight)) + bias[None, :, None, None]
    return z, taps


def cnn_forward(params, x, pool, operand=exact):
    """The forward pass of cnn_model on x [N, 1, H, W] (NCHW, as ONNX):
    (logits, what cnn_step's backward pass needs). `operand` rounds each
    operand of a product (bf16: the MXU's operands, accumulating in fp32)."""
    r = x.astype(np.float32)
    layers = []  # (taps, z) per convolution
    for layer in range(1, 1 + sum(1 for name in params if name.startswith("cw"))):
        weight, bias = conv_names(layer)
        z, taps = conv3x3(r, params[weight], params[bias], operand)
        layers.append((taps, z))
        r = np.maximum(z, 0)
    batch, channels, height, width = r.shape
    # the 2x2 windows (stride 2) of each output, in row-major order
    windows = r.reshape(batch, channels, height // 2, 2, width // 2, 2).transpose(
        0, 1, 2, 4, 3, 5).reshape(batch, channels, height // 2, width // 2, 4)
    pooled = windows.max(axis=-1) if pool == "max" else windows.mean(axis=-1)
    features = pooled.reshape(batch, -1)
    logits = operand(features) @ operand(params["w"]).T + params["b"]
    return logits, (layers, windows, features)


def cnn_step(params, buffers, x, labels, lr, pool, momentum=None, operand=exact):
    """One training step of cnn_model in fp32 (in place on params/buffers):
    returns (loss, correct) of the batch before the update. The max pool's
    gradient goes to the first maximum of each window in row-major order.
    `operand` as in cnn_forward."""
    logits, (layers, windows, features) = cnn_forward(params, x, pool, operand)
    loss, correct, grad = cross_entropy(logits, labels)
    grads = {"w": operand(grad).T @ operand(features), "b": grad.sum(axis=0)}
    dpooled = (operand(grad) @ operand(params["w"])).reshape(windows.shape[:-1])
    if pool == "max":
        dwindows = np.zeros_like(windows)
        np.put_along_axis(dwindows, np.argmax(windows, axis=-1)[..., None], dpooled[..., None],
                          axis=-1)
    else:
        dwindows = np.repeat(dpooled[..., None] / 4, 4, axis=-1)
    batch, channels, height, width = layers[-1][1].shape
    dr = dwindows.reshape(batch, channels, height // 2, width // 2, 2, 2).transpose(
        0, 1, 2, 4, 3, 5).reshape(batch, channels, height, width)
    for layer in reversed(range(1, len(layers) + 1)):
        taps, z = layers[layer - 1]
        weight, bias = conv_names(layer)
        dz = dr * (z > 0)
        grads[weight] = np.einsum("ijncyx,noyx->ocij", operand(taps), operand(dz))
        grads[bias] = dz.sum(axis=(0, 2, 3))
        if layer > 1:
            # each output's dz back to the input under each kernel position
            dpadded = np.zeros((batch, taps.shape[3], height + 2, width + 2), np.float32)
            for i in range(3):
                for j in range(3):
                    dpadded[:, :, i:i + height, j:j + width] += np.einsum(
                        "noyx,oc->ncyx", operand(dz), operand(params[weight][:, :, i, j]))
            dr = dpadded[:, :, 1:-1, 1:-1]
    update(params, buffers, grads, lr, momentum)
    return loss, correct
