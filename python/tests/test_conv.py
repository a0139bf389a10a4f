"""Every conv op's forward and its gradients wrt x, w and bias against PyTorch autograd of the naive
formulation in float64 (relative error < 1e-4), over swept cases (cases.py), and second-order
gradients of the batched-weight conv (MAML's meta-gradient)."""
import os

import pytest
import torch

import batchconv
import batchconv.functional as BF
from batchconv import _native
from batchconv import autograd as _ag
from cases import arrange, case_id, make_cases
import reference as ref

TOL = 1e-4


def _padding(c):
    if c["sym"]:
        return list(c["begin"])
    return [(b, e) for b, e in zip(c["begin"], c["end"])]


def _tensors(c, op, gen):
    sp = c["size"]
    if op == "batched":
        xs = (c["B"], c["N"], c["cin"], *sp)
        ws = (c["B"], c["cout"], c["cin"] // c["groups"], *c["k"])
        bs = (c["B"], c["cout"])
    elif op == "broadcast":
        xs = (c["N"], c["cin"], *sp)
        ws = (c["B"], c["cout"], c["cin"] // c["groups"], *c["k"])
        bs = (c["B"], c["cout"])
    else:
        xs = (c["N"], c["cin"], *sp)
        ws = (c["cout"], c["cin"] // c["groups"], *c["k"])
        bs = (c["cout"],)
    x = torch.randn(xs, generator=gen, dtype=torch.float64)
    w = torch.randn(ws, generator=gen, dtype=torch.float64)
    b = torch.randn(bs, generator=gen, dtype=torch.float64) if c["bias"] else None
    return x, w, b


def _run(op, c, x, w, b):
    fn = {("batched", 1): BF.batched_conv1d, ("batched", 2): BF.batched_conv2d,
          ("broadcast", 1): BF.broadcast_conv1d, ("broadcast", 2): BF.broadcast_conv2d,
          ("grouped", 1): BF.grouped_conv1d, ("grouped", 2): BF.grouped_conv2d}[(op, c["dims"])]
    kw = dict(stride=c["stride"], padding=_padding(c), dilation=c["dilation"], groups=c["groups"])
    if op == "broadcast":
        kw["layout"] = "concat" if c["concat"] else "batched"
    if c.get("relu"):
        kw["relu"] = True
    return fn(x, w, b, **kw)


def _reference(op, c, x, w, b):
    args = (c["stride"], c["begin"], c["end"], c["dilation"], c["groups"])
    if op == "batched":
        return ref.batched(x, w, b, *args)
    if op == "broadcast":
        return ref.broadcast(x, w, b, *args, "concat" if c["concat"] else "batched")
    return ref.conv_nd(x, w, b, *args)


def _relu_reference(c, y_ref, y):
    """With a fused ReLU: the float64 conv masked where batchconv's own output is positive, so that
    outputs within rounding of 0 take the same side in both (the forward is checked against
    torch.relu of the float64 conv, so the mask is itself checked)."""
    if not c.get("relu"):
        return y_ref
    assert ref.rel_err(y, torch.relu(y_ref)) < TOL, "forward (fused ReLU)"
    return y_ref * (y.detach() > 0).double()


def check_case(op, c, seed):
    gen = torch.Generator().manual_seed(seed)
    x, w, b = _tensors(c, op, gen)
    leaves = [t.clone().requires_grad_() for t in (x, w, b) if t is not None]
    y_ref = _reference(op, c, *leaves, *([None] if b is None else []))
    dy = torch.randn(y_ref.shape, generator=gen, dtype=torch.float64)

    lead = 1 if op == "batched" else 0
    xs = arrange(x, c["layout"], lead).detach().requires_grad_()
    ws = arrange(w, "contiguous" if c["layout"] == "channels_last" else c["layout"], 1 if op != "grouped" else 0)
    ws = ws.detach().requires_grad_()
    bs = None if b is None else b.float().requires_grad_()
    y = _run(op, c, xs, ws, bs)
    assert y.shape == y_ref.shape
    assert y.dtype == torch.float32
    y_ref = _relu_reference(c, y_ref, y)
    g_ref = torch.autograd.grad(y_ref, leaves, dy)
    assert ref.rel_err(y, y_ref) < TOL, "forward"
    _check_memory_format(op, c, xs, y)
    ins = [t for t in (xs, ws, bs) if t is not None]
    grads = torch.autograd.grad(y, ins, dy.float())
    for name, g, gr in zip(["x", "w", "bias"], grads, g_ref):
        assert g.shape == gr.shape, name
        assert ref.rel_err(g, gr) < TOL, f"grad {name}: {ref.rel_err(g, gr)}"
    _check_memory_format(op, c, xs, grads[0], "dx")


def _check_memory_format(op, c, xs, out, what="y"):
    """A channels-last x gives a channels-last y and dx (F.conv2d's convention); others contiguous."""
    geo = _ag.Geometry(op, None, None, None, None, 1, "concat" if c.get("concat") else "batched")
    dim = _ag.x_channel_dim(geo) if what == "dx" else _ag.y_channel_dim(geo)
    if _ag.channels_last(xs, _ag.x_channel_dim(geo)):
        assert out.shape[dim] == 1 or out.stride(dim) == 1, f"{what} not channels-last: strides {out.stride()}"
        dense = out.permute(*[i for i in range(out.dim()) if i != dim], dim)
        assert dense.is_contiguous(), f"{what} not dense channels-last: strides {out.stride()}"
    else:
        assert out.is_contiguous(), f"{what} not contiguous: strides {out.stride()}"


BATCHED = make_cases("batched", 120, 1)
BROADCAST = make_cases("broadcast", 110, 2)
GROUPED = make_cases("grouped", 110, 3)


@pytest.mark.parametrize("c", BATCHED, ids=[case_id(c) for c in BATCHED])
def test_batched_conv(c):
    check_case("batched", c, 100 + BATCHED.index(c))


@pytest.mark.parametrize("c", BROADCAST, ids=[case_id(c) for c in BROADCAST])
def test_broadcast_conv(c):
    check_case("broadcast", c, 200 + BROADCAST.index(c))


@pytest.mark.parametrize("c", GROUPED, ids=[case_id(c) for c in GROUPED])
def test_grouped_conv(c):
    check_case("grouped", c, 300 + GROUPED.index(c))


def _path_case(op, B, N, cin, cout, size, k, stride=1, dilation=1, pad=0, groups=1, layout="contiguous"):
    dims = len(size)
    return dict(dims=dims, groups=groups, cin=cin, cout=cout, k=[k] * dims, stride=[stride] * dims,
                dilation=[dilation] * dims, begin=[pad] * dims, end=[pad] * dims, size=list(size), B=B, N=N,
                bias=True, layout=layout, sym=True, concat=True)


# Shapes that reach each path of the backward kernels, which the small random sweep above
# rarely does: per-channel-block tasks with a remainder block (Cout_g > 32, few slices),
# one task per slice (>= 16 slices), the RGB tile (Cin_g = 3, 3x3), the 1x1 and loop tiles,
# strided (rows form) and unit-stride (flat form) sums, rows wider than several vectors,
# rows narrower than one, few input channels in the input gradient, and planes of more
# than one chunk of the flat weight-gradient sweep (over 1024 floats), with the last chunk
# running past the plane, per channel block and per slice, and slices whose sums are too
# large for one task.
PATHS = [
    ("batched", _path_case("batched", 2, 2, 5, 9, (45, 47), 3)),
    ("grouped", _path_case("grouped", 1, 3, 4, 36, (37, 41), 3, pad=1)),
    ("batched", _path_case("batched", 16, 1, 3, 8, (33, 40), 3, pad=1)),
    ("batched", _path_case("batched", 16, 1, 64, 72, (8, 9), 3, pad=1)),
    ("batched", _path_case("batched", 2, 2, 3, 40, (9, 21), 3)),
    ("batched", _path_case("batched", 2, 2, 3, 40, (9, 21), 3, stride=2, pad=1)),
    ("batched", _path_case("batched", 17, 2, 3, 8, (7, 18), 3)),
    ("batched", _path_case("batched", 1, 3, 6, 70, (6, 35), 3, pad=1)),
    ("batched", _path_case("batched", 3, 2, 12, 33, (5, 40), 1)),
    ("batched", _path_case("batched", 2, 2, 5, 37, (9, 11), 5, dilation=2, pad=3)),
    ("batched", _path_case("batched", 2, 2, 8, 36, (10, 23), 3, stride=3, pad=2)),
    ("batched", _path_case("batched", 2, 1, 4, 9, (3, 5), 3, pad=1)),
    ("batched", _path_case("batched", 2, 2, 2, 5, (12, 19), 3, pad=1, layout="channels_last")),
    ("batched", _path_case("batched", 20, 1, 1, 1, (8, 33), 3, pad=1)),
    ("batched", _path_case("batched", 2, 3, 3, 34, (50,), 3, pad=2)),
    ("broadcast", _path_case("broadcast", 3, 2, 3, 35, (11, 17), 3, pad=1)),
    ("broadcast", _path_case("broadcast", 18, 2, 4, 6, (6, 20), 3, stride=2)),
    ("grouped", _path_case("grouped", 1, 2, 6, 66, (13, 27), 3, pad=1, groups=2)),
    ("grouped", _path_case("grouped", 1, 2, 17, 17, (9, 35), 3, pad=1, groups=17)),
    ("grouped", _path_case("grouped", 1, 1, 3, 64, (16, 16), 3)),
]


@pytest.mark.parametrize("op,c", PATHS, ids=[f"{op}-{case_id(c)}" for op, c in PATHS])
def test_backward_kernel_paths(op, c):
    check_case(op, c, 400 + PATHS.index((op, c)))


def _dx_case(B, N, cin, cout, size, k, begin, end, dilation=1, groups=1, layout="contiguous"):
    c = _path_case("batched", B, N, cin, cout, size, k, dilation=dilation, groups=groups, layout=layout)
    c.update(begin=list(begin), end=list(end), sym=False)
    return c


# Unit-stride input gradients with at least 16 channels per group run as a forward conv of dy
# with transposed, flipped weights (runtime/src/conv_backward.cpp); these reach it (asymmetric
# and zero padding, padding as wide as the dilated kernel, 1x1, 1-D, groups, channels_last)
# and its fallbacks (padding wider than the kernel, 15 channels).
FORWARD_DX = [
    ("batched", _dx_case(2, 2, 16, 24, (9, 13), 3, (1, 1), (1, 1))),
    ("batched", _dx_case(2, 2, 32, 8, (7, 20), 3, (0, 2), (2, 1))),
    ("batched", _dx_case(2, 3, 20, 12, (37,), 5, (3,), (8,), dilation=2)),
    ("batched", _dx_case(3, 2, 16, 5, (6, 9), 1, (0, 0), (0, 0))),
    ("batched", _dx_case(2, 2, 32, 16, (8, 10), 3, (1, 0), (0, 1), groups=2, layout="channels_last")),
    ("batched", _dx_case(2, 2, 16, 8, (5, 7), 3, (3, 1), (1, 3))),
    ("batched", _dx_case(2, 2, 15, 8, (6, 11), 3, (1, 1), (1, 1))),
    ("grouped", _dx_case(1, 2, 32, 16, (11, 15), 3, (1, 1), (1, 1), groups=2)),
    ("grouped", _dx_case(1, 1, 16, 16, (6, 6), 3, (0, 0), (0, 0), layout="channels_last")),
    ("grouped", _dx_case(1, 3, 48, 36, (21,), 3, (2,), (0,), groups=3)),
]


@pytest.mark.parametrize("op,c", FORWARD_DX, ids=[f"{op}-{case_id(c)}" for op, c in FORWARD_DX])
def test_input_gradient_as_forward_conv(op, c):
    check_case(op, c, 450 + FORWARD_DX.index((op, c)))


@pytest.mark.skipif(not os.environ.get("BATCHCONV_TEST_VARIANT"),
                    reason="runs under BATCHCONV_TEST_VARIANT=avx2|baseline (ctest python_tests_<variant>)")
def test_forced_variant_dispatched():
    """The kernels that ran in this process are the forced variant's, never a better one."""
    c = PATHS[0][1]
    check_case("batched", c, 399)
    assert _native._dispatched_variant() == os.environ["BATCHCONV_TEST_VARIANT"]


SECOND = make_cases("batched", 24, 4)


@pytest.mark.parametrize("c", SECOND, ids=[case_id(c) for c in SECOND])
def test_batched_conv_second_order(c):
    """MAML's meta-gradient: grad of (<grad_w L1, s> + <grad_x L1, t>) with L1 = <tanh(y), r>."""
    gen = torch.Generator().manual_seed(500 + SECOND.index(c))
    x, w, b = _tensors(c, "batched", gen)

    def meta(xx, ww, bb, conv):
        y = conv(xx, ww, bb)
        if xx.dtype == torch.float64 and c.get("relu"):
            y = _relu_reference(c, y, mask_from)
        r = torch.randn(y.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64).to(y.dtype)
        l1 = (torch.tanh(y) * r).sum()
        gx, gw = torch.autograd.grad(l1, (xx, ww), create_graph=True)
        s = torch.randn(gw.shape, generator=torch.Generator().manual_seed(8), dtype=torch.float64).to(y.dtype)
        t = torch.randn(gx.shape, generator=torch.Generator().manual_seed(9), dtype=torch.float64).to(y.dtype)
        l2 = (gw * s).sum() + (gx * t).sum()
        ins = [v for v in (xx, ww, bb) if v is not None]
        return torch.autograd.grad(l2, ins)

    leaves = [v.clone().requires_grad_() if v is not None else None for v in (x, w, b)]
    xs = arrange(x, c["layout"], 1).detach().requires_grad_()
    ws = w.float().requires_grad_()
    bs = None if b is None else b.float().requires_grad_()
    mask_from = _run("batched", c, xs, ws, bs).detach()
    g_ref = meta(*leaves, lambda a, bw, bb: _reference("batched", c, a, bw, bb))
    g = meta(xs, ws, bs, lambda a, bw, bb: _run("batched", c, a, bw, bb))
    for name, gg, gr in zip(["x", "w", "bias"], g, g_ref):
        assert ref.rel_err(gg, gr) < TOL, f"second-order grad {name}: {ref.rel_err(gg, gr)}"


def test_seed2_view_is_not_copied():
    """Seed 2: x (G*n, C, H, W) viewed as (G, n, C, H, W); the kernels read the view in place."""
    x = torch.randn(8, 3, 9, 9)
    w = torch.randn(2, 4, 3, 3, 3)
    y = batchconv.batched_conv2d(x.view(2, 4, 3, 9, 9), w, padding=1)
    y_ref = ref.batched(x.view(2, 4, 3, 9, 9).double(), w.double(), None, [1, 1], [1, 1], [1, 1], [1, 1], 1)
    assert ref.rel_err(y, y_ref) < TOL


def test_modules_match_functional():
    torch.manual_seed(0)
    m = batchconv.BatchedConv2d(4, 6, 3, batch=3, padding=1)
    x = torch.randn(3, 2, 4, 7, 7)
    assert torch.equal(m(x), BF.batched_conv2d(x, m.weight, m.bias, padding=1))
    g = batchconv.GroupedConv2d(4, 6, 3, groups=2, padding=1)
    xg = torch.randn(2, 4, 7, 7)
    assert ref.rel_err(g(xg), ref.conv_nd(xg.double(), g.weight.double(), g.bias.double(), [1, 1], [1, 1],
                                          [1, 1], [1, 1], 2)) < TOL
    bc = batchconv.BroadcastConv1d(4, 3, 1, batch=5, layout="batched")
    assert bc(torch.randn(2, 4, 10)).shape == (5, 2, 3, 10)
    lin = batchconv.BatchedLinear(4, 3, batch=2)
    assert lin(torch.randn(2, 5, 4)).shape == (2, 5, 3)
    (m(x).sum() + g(xg).sum()).backward()
    assert m.weight.grad.shape == m.weight.shape and g.bias.grad.shape == g.bias.shape


def test_fused_relu_modules_and_inplace_guard():
    """Modules pass relu on; the fused output equals torch.relu of the unfused one; modifying the
    saved output in place before backward is an error, not a wrong gradient."""
    torch.manual_seed(3)
    m = batchconv.BatchedConv2d(4, 6, 3, batch=3, padding=1, relu=True)
    x = torch.randn(3, 2, 4, 7, 7, requires_grad=True)
    y = m(x)
    assert "relu=True" in repr(m)
    assert torch.equal(y, BF.batched_conv2d(x, m.weight, m.bias, padding=1, relu=True))
    plain = BF.batched_conv2d(x, m.weight, m.bias, padding=1)
    assert (y >= 0).all() and ref.rel_err(y, torch.relu(plain)) < TOL
    dy = torch.randn_like(y)
    assert ref.rel_err(torch.autograd.grad(y, x, dy)[0], torch.autograd.grad(torch.relu(plain), x, dy)[0]) < TOL
    y2 = m(x)
    y2.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y2.sum().backward()


@pytest.mark.parametrize("shape", [(2, 3, 4, 9, 9), (4, 8, 16, 40, 40)], ids=["small", "cached"])
def test_outputs_can_be_modified_in_place(shape):
    """Outputs (torch.empty's and the output cache's blocks, NCHW and channels-last) are not views:
    y += r, y.relu_() work, and the gradient is that of the out-of-place formulation."""
    B, N, C, H, W = shape
    torch.manual_seed(4)
    for last in (False, True):
        x = torch.randn(shape)
        if last:
            x = x.reshape(B * N, C, H, W).contiguous(memory_format=torch.channels_last).view(shape)
        x.requires_grad_()
        w = torch.randn(B, C, C, 3, 3, requires_grad=True)
        r = torch.randn(B, N, C, H, W)
        y = BF.batched_conv2d(x, w, padding=1)
        assert y._base is None
        y += r
        y.relu_()
        dy = torch.randn_like(y)
        g = torch.autograd.grad(y, (x, w), dy)
        y_ref = torch.relu(BF.batched_conv2d(x, w, padding=1) + r)
        g_ref = torch.autograd.grad(y_ref, (x, w), dy)
        assert ref.rel_err(y, y_ref) < TOL
        for a, b in zip(g, g_ref):
            assert ref.rel_err(a, b) < TOL


def test_uses_torch_thread_count():
    from batchconv import _native
    torch.set_num_threads(1)
    batchconv.grouped_conv2d(torch.randn(1, 2, 5, 5), torch.randn(2, 2, 3, 3))
    assert _native.num_threads() == 1
    torch.set_num_threads(2)
    batchconv.grouped_conv2d(torch.randn(1, 2, 5, 5), torch.randn(2, 2, 3, 3))
    assert _native.num_threads() == 2


def test_kernels_run_on_torch_openmp_threads():
    """Halide's parallel loops are OpenMP loops on PyTorch's pool, with its thread count."""
    from batchconv import _native
    x, w = torch.randn(8, 16, 20, 20), torch.randn(16, 16, 3, 3)
    torch.set_num_threads(1)
    batchconv.grouped_conv2d(x, w)
    assert _native._last_parallel_team() == 1
    n = min(2, os.cpu_count() or 1)
    torch.set_num_threads(n)
    batchconv.grouped_conv2d(x, w)
    assert _native._last_parallel_team() == n
