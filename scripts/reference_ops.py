"""numpy references of the ONNX operators the zoo and the tests use, written
from the operator definitions and independent of the ONNX graphs and the
compiler they check. scripts/gen-models.py computes the zoo's expected outputs
with them; the lit and importer tests import them from here.

Images are NCHW; pads are (top, left, bottom, right).
"""
import math

import numpy as np


def pad2d(x, pads, fill):
    top, left, bottom, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)


def windows(padded, kernel, strides, dilations=(1, 1)):
    """im2col: [N, C, OH, OW, KH, KW] views of an already padded input."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    oh = (padded.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (padded.shape[3] - (kw - 1) * dw - 1) // sw + 1
    rows = (np.arange(oh) * sh)[:, None] + np.arange(kh) * dh  # [OH, KH]
    cols = (np.arange(ow) * sw)[:, None] + np.arange(kw) * dw  # [OW, KW]
    return padded[:, :, rows[:, None, :, None], cols[None, :, None, :]]


def conv2d(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    oc, cg, kh, kw = w.shape
    cols = windows(pad2d(x, pads, 0.0), (kh, kw), strides, dilations)
    outs = []
    for g in range(group):
        wg = w[g * (oc // group):(g + 1) * (oc // group)]
        outs.append(np.einsum("nchwij,ocij->nohw", cols[:, g * cg:(g + 1) * cg], wg,
                              dtype=np.float64, optimize=True))
    y = np.concatenate(outs, axis=1)
    if b is not None:
        y = y + b[None, :, None, None]
    return y.astype(np.float32)


def ceil_overhang(shape, kernel, strides, pads):
    """Rows and columns past the end pads that ceil_mode's last windows reach."""
    extra = []
    for size, k, s, begin, end in zip(shape[2:], kernel, strides, pads[:2], pads[2:]):
        span = size + begin + end - k
        extra.append(-(-span // s) * s - span)
    return (0, 0, extra[0], extra[1])


def max_pool(x, kernel, strides, pads=(0, 0, 0, 0), ceil_mode=False):
    extra = ceil_overhang(x.shape, kernel, strides, pads) if ceil_mode else (0, 0, 0, 0)
    padded = pad2d(pad2d(x, pads, -np.inf), extra, -np.inf)
    return windows(padded, kernel, strides).max(axis=(4, 5))


def avg_pool(x, kernel, strides, pads=(0, 0, 0, 0), ceil_mode=False, count_include_pad=False):
    """The divisor counts the input, the pads when count_include_pad, never
    the ceil_mode overhang."""
    extra = ceil_overhang(x.shape, kernel, strides, pads) if ceil_mode else (0, 0, 0, 0)
    total = windows(pad2d(pad2d(x, pads, 0.0), extra, 0.0), kernel, strides).sum(axis=(4, 5))
    ones = np.ones((1, 1) + x.shape[2:])
    counted = pad2d(pad2d(ones, pads, float(count_include_pad)), extra, 0.0)
    return (total / windows(counted, kernel, strides).sum(axis=(4, 5))).astype(np.float32)


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + epsilon)
    return ((x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)).astype(np.float32)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, scale, bias, axis=-1, epsilon=1e-5):
    axes = tuple(range(axis % x.ndim, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    return centered / np.sqrt((centered ** 2).mean(axis=axes, keepdims=True) + epsilon) * scale + bias


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def global_avg_pool(x):
    return x.mean(axis=(2, 3), keepdims=True)
