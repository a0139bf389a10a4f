"""Argument checks shared by the functional ops.

Every failure raises TypeError (wrong Python type, dtype or device kind) or
ValueError (shapes, geometry) naming the op, the argument, what it got and
what was expected, before any kernel runs.
"""
import numbers

import torch


def tensor(op, name, t, ranks, layout):
    """t is a float32 CPU tensor whose rank is in `ranks`."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor {layout}, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise TypeError(f"{op}: {name} has dtype {t.dtype} but batchconv's kernels take torch.float32 "
                        f"(convert with {name}.float())")
    if t.device.type != "cpu":
        raise TypeError(f"{op}: {name} is on {t.device}, but batchconv has CPU kernels only "
                        f"(no GPU kernels yet); move it with {name}.cpu()")
    if t.layout != torch.strided:
        raise TypeError(f"{op}: {name} has layout {t.layout}; only dense (strided) tensors are supported")
    if t.dim() not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ValueError(f"{op}: {name} has rank {t.dim()} {tuple(t.shape)} but must have rank {want}: {layout}")
    if t.numel() == 0:
        raise ValueError(f"{op}: {name} has shape {tuple(t.shape)} with a zero size; every size must be >= 1")


def same_device(op, **tensors):
    devs = {k: v.device for k, v in tensors.items() if v is not None}
    if len(set(devs.values())) > 1:
        desc = ", ".join(f"{k} on {d}" for k, d in devs.items())
        raise ValueError(f"{op}: tensors are on different devices ({desc}); put them on one device")


def _int(op, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{op}: {name} must be an int or a tuple of ints, got {v!r}")
    return int(v)


def spatial_tuple(op, name, v, dims, minimum):
    """int or tuple of `dims` ints, each >= minimum."""
    if isinstance(v, (tuple, list)):
        if len(v) != dims:
            raise ValueError(f"{op}: {name}={tuple(v)} needs {dims} entries for a {dims}-D conv")
        out = [_int(op, name, e) for e in v]
    else:
        out = [_int(op, name, v)] * dims
    for e in out:
        if e < minimum:
            raise ValueError(f"{op}: {name}={v!r} must be >= {minimum}")
    return out


def padding(op, v, dims, kernel, dilation, stride):
    """F.conv conventions plus per-side padding. Returns (begin, end) lists.

    int p; a tuple of `dims` ints (symmetric); a tuple of `dims` (begin, end)
    pairs, e.g. ((top, bottom), (left, right)); "valid"; or "same" (stride 1;
    an odd total puts the extra element at the end, as PyTorch does).
    """
    if isinstance(v, str):
        if v == "valid":
            return [0] * dims, [0] * dims
        if v == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' needs stride 1, got stride={tuple(stride)}")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            begin = [t // 2 for t in total]
            return begin, [t - b for t, b in zip(total, begin)]
        raise ValueError(f"{op}: padding={v!r} is not 'valid', 'same', an int or a tuple")
    if isinstance(v, (tuple, list)) and len(v) == dims and all(isinstance(e, (tuple, list)) for e in v):
        begin, end = [], []
        for e in v:
            if len(e) != 2:
                raise ValueError(f"{op}: padding={v!r}: each per-side entry must be a (begin, end) pair")
            begin.append(_int(op, "padding", e[0]))
            end.append(_int(op, "padding", e[1]))
    else:
        begin = spatial_tuple(op, "padding", v, dims, 0)
        end = list(begin)
    if any(p < 0 for p in begin + end):
        raise ValueError(f"{op}: padding={v!r} must be >= 0")
    return begin, end


def output_size(op, x_shape, w_shape, begin, end, dilation, stride):
    dims = len(begin)
    ins, ks = x_shape[-dims:], w_shape[-dims:]
    out = []
    for i in range(dims):
        span = dilation[i] * (ks[i] - 1) + 1
        padded = ins[i] + begin[i] + end[i]
        if padded < span:
            raise ValueError(f"{op}: the kernel {tuple(ks)} with dilation {tuple(dilation)} spans {span} "
                             f"along spatial axis {i} but the padded input has only {padded} "
                             f"(x {tuple(x_shape)}, padding {tuple(begin)}/{tuple(end)})")
        out.append((padded - span) // stride[i] + 1)
    return out


def groups(op, v, cin, cout, w_cin_g, x_shape, w_shape):
    g = _int(op, "groups", v)
    if g < 1:
        raise ValueError(f"{op}: groups={g} must be >= 1")
    if cin % g:
        raise ValueError(f"{op}: groups={g} does not divide the {cin} input channels of x {tuple(x_shape)}")
    if cout % g:
        raise ValueError(f"{op}: groups={g} does not divide the {cout} output channels of w {tuple(w_shape)}")
    if w_cin_g != cin // g:
        raise ValueError(f"{op}: w has shape {tuple(w_shape)} but x {tuple(x_shape)} with groups={g} needs "
                         f"Cin/groups = {cin // g} input channels per filter (w's dim is {w_cin_g})")
    return g


def bias(op, b, expected, layout):
    if b is None:
        return
    tensor(op, "bias", b, tuple(range(9)), layout)  # type, dtype, device; the shape below
    if tuple(b.shape) != tuple(expected):
        raise ValueError(f"{op}: bias has shape {tuple(b.shape)} but w gives {layout}: expected {tuple(expected)}")
