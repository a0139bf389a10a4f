"""Naive float64 formulations the tests compare against (PyTorch autograd differentiates them)."""
import torch
import torch.nn.functional as F


def conv_nd(x, w, bias, stride, begin, end, dilation, groups):
    dims = w.dim() - 2
    pad = []
    for i in reversed(range(dims)):
        pad += [begin[i], end[i]]
    x = F.pad(x, pad)
    f = F.conv2d if dims == 2 else F.conv1d
    return f(x, w, bias, stride=stride, dilation=dilation, groups=groups)


def batched(x, w, bias, stride, begin, end, dilation, groups):
    ys = [conv_nd(x[b], w[b], None if bias is None else bias[b], stride, begin, end, dilation, groups)
          for b in range(x.shape[0])]
    return torch.stack(ys)


def broadcast(x, w, bias, stride, begin, end, dilation, groups, layout):
    ys = [conv_nd(x, w[b], None if bias is None else bias[b], stride, begin, end, dilation, groups)
          for b in range(w.shape[0])]
    return torch.cat(ys, 1) if layout == "concat" else torch.stack(ys)


def linear(x, w, bias):
    if x.dim() == 2:
        y = torch.stack([x @ w[b] for b in range(w.shape[0])])
    else:
        y = torch.stack([x[b] @ w[b] for b in range(w.shape[0])])
    return y if bias is None else y + bias[:, None, :]


def rel_err(a, b):
    a, b = a.double(), b.double()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
