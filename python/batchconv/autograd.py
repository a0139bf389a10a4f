"""The ops as torch.autograd.Functions over batchconv's kernels.

Each conv op is three Functions that differentiate into one another, so
gradients of any order come out of batchconv kernels (second-order MAML):

    y  = Conv(x, w, bias)        dx = ConvGradInput(dy, w)   dw = ConvGradWeight(x, dy)
    Conv'           : dx = ConvGradInput(dy, w),  dw = ConvGradWeight(x, dy),  dbias = sum(dy)
    ConvGradInput'  : d(dy) = Conv(g, w),          dw = ConvGradWeight(g, dy)
    ConvGradWeight' : dx = ConvGradInput(dy, h),   d(dy) = Conv(x, h)

(all three are bilinear, so <g, ConvGradInput(dy, w)> = <dy, Conv(g, w)>).
Batched linear is its own adjoint the same way, through Linear.

Arguments arrive validated (functional.py). Tensors go to the kernels as
data pointers with their strides: nothing is copied that the kernels can
read in place. Channels-last operands (channel stride 1: torch's
channels_last, or its 1-D and batched counterparts) go straight to the
channels-family kernels, and the conv's output and input gradient are then
channels-last too, as F.conv2d's are (dx takes x's memory format); the weight gradient's kernel packs a
channels-last x and dy into reused scratch (as it does any operand whose
last dimension is not unit-stride).
"""
import collections
import math

import torch

from . import _native

# op: "grouped" | "batched" | "broadcast"; spatial lists are (H, W) or (W).
Geometry = collections.namedtuple("Geometry", "op stride dilation pad_begin pad_end groups layout")

_threads = [None]


def _sync_threads():
    n = torch.get_num_threads()
    if n != _threads[0]:
        _native.set_num_threads(n)
        _threads[0] = n


def view(t):
    return (t.data_ptr(), list(t.shape), list(t.stride()))


def _geo_args(g):
    return (g.stride, g.dilation, g.pad_begin, g.pad_end, g.groups, g.layout)


def conv_output_shape(g, x_shape, w_shape):
    dims = len(g.stride)
    out = []
    for i in range(dims):
        k, n = w_shape[-dims + i], x_shape[-dims + i]
        out.append((n + g.pad_begin[i] + g.pad_end[i] - g.dilation[i] * (k - 1) - 1) // g.stride[i] + 1)
    if g.op == "grouped":
        lead = [x_shape[0], w_shape[0]]
    elif g.op == "batched":
        lead = [x_shape[0], x_shape[1], w_shape[1]]
    elif g.layout == "concat":
        lead = [x_shape[0], w_shape[0] * w_shape[1]]
    else:
        lead = [w_shape[0], x_shape[0], w_shape[1]]
    return lead + out


def x_channel_dim(g):
    """The channel axis of x (and dx): (B, N, C, ...) for the batched op, (N, C, ...) otherwise."""
    return 2 if g.op == "batched" else 1


def y_channel_dim(g):
    """The channel axis of y (and dy): (B, N, Cout, ...) or (N, [B*]Cout, ...)."""
    return 2 if g.op == "batched" or (g.op == "broadcast" and g.layout == "batched") else 1


def channels_last(t, dim):
    """Whether t's channel axis `dim` is innermost in memory (stride 1, more than one channel)."""
    return t.shape[dim] > 1 and t.stride(dim) == 1


def _empty(shape, like, channel_dim=None):
    """A new output, channels-last (channel axis `channel_dim` innermost in memory) when one is
    given; a large one on the CPU comes from the output cache (cache.py). Never a view (of the
    cache block or of a permuted tensor): users may modify outputs in place, which autograd
    forbids on views made inside a custom Function."""
    order = list(range(len(shape)))
    if channel_dim is not None:
        order = order[:channel_dim] + order[channel_dim + 1:] + [channel_dim]
    strides = [0] * len(shape)
    step = 1
    for i in reversed(order):
        strides[i] = step
        step *= shape[i]
    if like.device.type == "cpu":
        n = math.prod(shape)
        if n * 4 >= _native.pool_min_bytes:
            block = torch.frombuffer(_native.PooledBlock(n), dtype=torch.float32)
            return torch.empty(0, dtype=torch.float32).set_(block.storage(), 0, tuple(shape), tuple(strides))
    return torch.empty_strided(tuple(shape), tuple(strides), dtype=torch.float32, device=like.device)


def conv_forward(g, x, w, bias, relu=False):
    _sync_threads()
    last = channels_last(x, x_channel_dim(g))
    y = _empty(conv_output_shape(g, x.shape, w.shape), x, y_channel_dim(g) if last else None)
    _native.conv(g.op, view(x), view(w), None if bias is None else view(bias), view(y), *_geo_args(g), relu)
    return y


def _bias_grad(g, dy, bias_shape):
    dims = len(g.stride)
    spatial = list(range(dy.dim() - dims, dy.dim()))
    planes = dy.sum(spatial)  # the innermost dims first: torch's fastest reduction (2.1 against 3.3 ms at B=1)
    if g.op == "grouped" or (g.op == "broadcast" and g.layout == "concat"):
        return planes.sum(0).reshape(bias_shape)
    return planes.sum(1)


class Conv(torch.autograd.Function):
    """y = conv(x, w) + bias, then max(y, 0) inside the kernel when relu."""

    @staticmethod
    def forward(ctx, x, w, bias, g, relu=False):
        ctx.g = g
        ctx.has_bias = bias is not None
        ctx.bias_shape = None if bias is None else bias.shape
        ctx.relu = relu
        y = conv_forward(g, x, w, bias, relu)
        ctx.save_for_backward(x, w, y if relu else None)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, y = ctx.saved_tensors
        g = ctx.g
        if ctx.relu:
            # ReLU's own gradient (differentiable in dy; its derivative in y is zero almost
            # everywhere, as torch.relu's), then the conv's gradients of the masked dy.
            dy = torch.ops.aten.threshold_backward(dy, y, 0.0)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = ConvGradInput.apply(dy, w, g, tuple(x.shape), channels_last(x, x_channel_dim(g)))
        if ctx.needs_input_grad[1]:
            dw = ConvGradWeight.apply(x, dy, g, tuple(w.shape))
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = _bias_grad(g, dy, ctx.bias_shape)
        return dx, dw, db, None, None


class ConvGradInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, dy, w, g, x_shape, x_last):
        ctx.g, ctx.x_shape, ctx.w_shape = g, x_shape, tuple(w.shape)
        ctx.save_for_backward(dy, w)
        _sync_threads()
        dx = _empty(x_shape, dy, x_channel_dim(g) if x_last else None)
        _native.conv_backward_input(g.op, view(dy), view(w), view(dx), *_geo_args(g))
        return dx

    @staticmethod
    def backward(ctx, gx):
        dy, w = ctx.saved_tensors
        d_dy = d_w = None
        if ctx.needs_input_grad[0]:
            d_dy = Conv.apply(gx, w, None, ctx.g, False)
        if ctx.needs_input_grad[1]:
            d_w = ConvGradWeight.apply(gx, dy, ctx.g, ctx.w_shape)
        return d_dy, d_w, None, None, None


class ConvGradWeight(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dy, g, w_shape):
        ctx.g, ctx.x_shape = g, tuple(x.shape)
        ctx.x_last = channels_last(x, x_channel_dim(g))
        ctx.save_for_backward(x, dy)
        _sync_threads()
        dw = _empty(w_shape, x)
        _native.conv_backward_weight(g.op, view(x), view(dy), view(dw), *_geo_args(g))
        return dw

    @staticmethod
    def backward(ctx, gw):
        x, dy = ctx.saved_tensors
        d_x = d_dy = None
        if ctx.needs_input_grad[0]:
            d_x = ConvGradInput.apply(dy, gw, ctx.g, ctx.x_shape, ctx.x_last)
        if ctx.needs_input_grad[1]:
            d_dy = Conv.apply(x, gw, None, ctx.g, False)
        return d_x, d_dy, None, None


def linear_forward(x, w, bias):
    _sync_threads()
    y = _empty((w.shape[0], x.shape[-2], w.shape[2]), x)
    _native.linear(view(x), view(w), None if bias is None else view(bias), view(y))
    return y


class Linear(torch.autograd.Function):
    """y (B, N, M) = x (B, N, K) or shared (N, K) @ w (B, K, M) + bias (B, M)."""

    @staticmethod
    def forward(ctx, x, w, bias):
        ctx.has_bias = bias is not None
        ctx.save_for_backward(x, w)
        return linear_forward(x, w, bias)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx = dw = db = None
        shared = x.dim() == 2
        B, K, M = w.shape
        if ctx.needs_input_grad[0]:
            if shared:  # sum_b dy_b @ w_b^T as one product over (b, m)
                N = x.shape[0]
                dy2 = dy.permute(1, 0, 2).reshape(1, N, B * M)
                wt = w.permute(0, 2, 1).reshape(1, B * M, K)
                dx = Linear.apply(dy2, wt, None)[0]
            else:
                dx = Linear.apply(dy, w.transpose(1, 2), None)
        if ctx.needs_input_grad[1]:
            xt = x.t() if shared else x.transpose(1, 2)
            dw = Linear.apply(xt, dy, None)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = dy.sum(1)
        return dx, dw, db
