"""The ops in torch.nn.functional's conventions, differentiable to any order.

    batched_conv1d/2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, relu=False)
        x (B, N, Cin, [H,] W), w (B, Cout, Cin/groups, [KH,] KW), bias (B, Cout)
        -> (B, N, Cout, [H',] W'): slice b of x meets only filter bank b.
    broadcast_conv1d/2d(x, w, bias=None, ..., layout="concat")
        one x (N, Cin, [H,] W) shared by B banks w (B, Cout, Cin/groups, ...),
        bias (B, Cout) -> (N, B*Cout, ...) ["concat", what x.repeat + grouped
        conv gives] or (B, N, Cout, ...) ["batched"]; the repeat never exists.
    grouped_conv1d/2d(x, w, bias=None, ...)     same numbers as F.conv1d/2d.
    batched_linear(x, w, bias=None)
        x (B, N, K) or shared (N, K), w (B, K, M), bias (B, M) -> (B, N, M).

padding: an int, a tuple of one int per spatial dim, a tuple of per-side
(begin, end) pairs per spatial dim (asymmetric, e.g. ((0, 1), (2, 0))),
"valid" or "same". relu=True applies max(., 0) to the output inside the
kernel (conv + bias + ReLU in one pass; the gradient masks dy by the saved
output, as torch.relu's does, to any order). Tensors are read where they are (any strides, views,
channels_last); outputs are new tensors, channels-last when x is (channel
stride 1, as torch.channels_last: then the input gradient is too) and
contiguous otherwise. CPU float32 only; the kernels use
torch.get_num_threads() threads.
"""
from . import autograd as _ag
from . import checks as _checks


def _conv(op, name, x, w, bias, stride, padding, dilation, groups, layout, dims, relu):
    lead = 1 if op == "batched" else 0
    x_layout = {"grouped": "(N, Cin, {})", "batched": "(B, N, Cin, {})", "broadcast": "(N, Cin, {})"}[op]
    sp = "H, W" if dims == 2 else "W"
    ksp = "KH, KW" if dims == 2 else "KW"
    _checks.tensor(name, "x", x, (lead + 2 + dims,), x_layout.format(sp))
    w_lead = 0 if op == "grouped" else 1
    w_layout = ("(Cout, Cin/groups, {})" if w_lead == 0 else "(B, Cout, Cin/groups, {})").format(ksp)
    _checks.tensor(name, "w", w, (w_lead + 2 + dims,), w_layout)
    _checks.same_device(name, x=x, w=w, bias=bias)
    if op == "batched" and x.shape[0] != w.shape[0]:
        raise ValueError(f"{name}: w has shape {tuple(w.shape)} but x {tuple(x.shape)} has B={x.shape[0]} "
                         f"and needs B={x.shape[0]} filter banks: expected ({x.shape[0]}, {', '.join(str(s) for s in w.shape[1:])})")
    if layout not in ("concat", "batched"):
        raise ValueError(f"{name}: layout={layout!r} must be 'concat' or 'batched'")
    cin = x.shape[lead + 1]
    cout = w.shape[w_lead]
    g = _checks.groups(name, groups, cin, cout, w.shape[w_lead + 1], x.shape, w.shape)
    stride = _checks.spatial_tuple(name, "stride", stride, dims, 1)
    dilation = _checks.spatial_tuple(name, "dilation", dilation, dims, 1)
    begin, end = _checks.padding(name, padding, dims, list(w.shape[-dims:]), dilation, stride)
    _checks.output_size(name, x.shape, w.shape, begin, end, dilation, stride)
    if op == "grouped":
        _checks.bias(name, bias, (cout,), "(Cout)")
    else:
        _checks.bias(name, bias, (w.shape[0], cout), "(B, Cout)")
    if not isinstance(relu, bool):
        raise TypeError(f"{name}: relu={relu!r} must be True or False")
    geo = _ag.Geometry(op, stride, dilation, begin, end, g, layout)
    return _ag.Conv.apply(x, w, bias, geo, relu)


def batched_conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, relu=False):
    """x (B, N, Cin, H, W), w (B, Cout, Cin/groups, KH, KW), bias (B, Cout) -> (B, N, Cout, H', W')."""
    return _conv("batched", "batched_conv2d", x, w, bias, stride, padding, dilation, groups, "batched", 2, relu)


def batched_conv1d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, relu=False):
    """x (B, N, Cin, W), w (B, Cout, Cin/groups, KW), bias (B, Cout) -> (B, N, Cout, W')."""
    return _conv("batched", "batched_conv1d", x, w, bias, stride, padding, dilation, groups, "batched", 1, relu)


def broadcast_conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, layout="concat", relu=False):
    """Shared x (N, Cin, H, W), w (B, Cout, Cin/groups, KH, KW) -> (N, B*Cout, H', W') or (B, N, Cout, H', W')."""
    return _conv("broadcast", "broadcast_conv2d", x, w, bias, stride, padding, dilation, groups, layout, 2, relu)


def broadcast_conv1d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, layout="concat", relu=False):
    """Shared x (N, Cin, W), w (B, Cout, Cin/groups, KW) -> (N, B*Cout, W') or (B, N, Cout, W')."""
    return _conv("broadcast", "broadcast_conv1d", x, w, bias, stride, padding, dilation, groups, layout, 1, relu)


def grouped_conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, relu=False):
    """x (N, Cin, H, W), w (Cout, Cin/groups, KH, KW), bias (Cout): F.conv2d's numbers."""
    return _conv("grouped", "grouped_conv2d", x, w, bias, stride, padding, dilation, groups, "batched", 2, relu)


def grouped_conv1d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, relu=False):
    """x (N, Cin, W), w (Cout, Cin/groups, KW), bias (Cout): F.conv1d's numbers."""
    return _conv("grouped", "grouped_conv1d", x, w, bias, stride, padding, dilation, groups, "batched", 1, relu)


def batched_linear(x, w, bias=None):
    """x (B, N, K) or shared (N, K), w (B, K, M), bias (B, M) -> (B, N, M)."""
    name = "batched_linear"
    _checks.tensor(name, "x", x, (2, 3), "(B, N, K) or a shared (N, K)")
    _checks.tensor(name, "w", w, (3,), "(B, K, M)")
    _checks.same_device(name, x=x, w=w, bias=bias)
    B, K, M = w.shape
    if x.dim() == 3 and x.shape[0] != B:
        raise ValueError(f"{name}: w has shape {tuple(w.shape)} but x {tuple(x.shape)} has B={x.shape[0]} "
                         f"and needs B={x.shape[0]} weight matrices: expected ({x.shape[0]}, {x.shape[2]}, M)")
    if x.shape[-1] != K:
        raise ValueError(f"{name}: w has shape {tuple(w.shape)} but x {tuple(x.shape)} has K={x.shape[-1]} "
                         f"features: expected ({B}, {x.shape[-1]}, {M})")
    _checks.bias(name, bias, (B, M), "(B, M)")
    return _ag.Linear.apply(x, w, bias)
