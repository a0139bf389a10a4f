"""batched_linear's forward and gradients (first and second order) against float64 autograd of
a loop of matmuls: B = 1, shared x, odd sizes, bias or not, non-contiguous inputs."""
import random

import pytest
import torch

import batchconv
import reference as ref

TOL = 1e-4


def _cases(count, seed):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        out.append(dict(B=rng.choice([1, 1, 2, 3, 7]), N=rng.choice([1, 2, 5, 17, 33]), K=rng.choice([1, 3, 8, 19]),
                        M=rng.choice([1, 2, 16, 17, 40]), shared=i % 3 == 0, bias=rng.random() < 0.6,
                        layout=["contiguous", "transposed", "step"][i % 3 if i % 2 else 0]))
    return out


CASES = _cases(110, 11)


def _arrange(t, layout):
    if layout == "transposed":
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "step":
        big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
        big[..., ::2] = t
        return big[..., ::2]
    return t.contiguous()


@pytest.mark.parametrize("c", CASES, ids=[f"B{c['B']}N{c['N']}K{c['K']}M{c['M']}{'s' if c['shared'] else ''}"
                                         f"{'b' if c['bias'] else ''}-{c['layout']}" for c in CASES])
def test_batched_linear(c):
    gen = torch.Generator().manual_seed(CASES.index(c))
    xs = (c["N"], c["K"]) if c["shared"] else (c["B"], c["N"], c["K"])
    x = torch.randn(xs, generator=gen, dtype=torch.float64)
    w = torch.randn(c["B"], c["K"], c["M"], generator=gen, dtype=torch.float64)
    b = torch.randn(c["B"], c["M"], generator=gen, dtype=torch.float64) if c["bias"] else None
    leaves = [t.clone().requires_grad_() for t in (x, w, b) if t is not None]
    y_ref = ref.linear(*leaves, *([None] if b is None else []))
    dy = torch.randn(y_ref.shape, generator=gen, dtype=torch.float64)
    g_ref = torch.autograd.grad(y_ref, leaves, dy)
    ins = [_arrange(x.float(), c["layout"]).detach().requires_grad_(),
           _arrange(w.float(), c["layout"]).detach().requires_grad_()]
    if b is not None:
        ins.append(b.float().requires_grad_())
    y = batchconv.batched_linear(*ins, *([None] if b is None else []))
    assert ref.rel_err(y, y_ref) < TOL
    for name, g, gr in zip(["x", "w", "bias"], torch.autograd.grad(y, ins, dy.float()), g_ref):
        assert g.shape == gr.shape and ref.rel_err(g, gr) < TOL, name


@pytest.mark.parametrize("shared", [False, True])
def test_batched_linear_second_order(shared):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn((6, 5) if shared else (3, 6, 5), generator=gen, dtype=torch.float64)
    w = torch.randn(3, 5, 4, generator=gen, dtype=torch.float64)

    def meta(xx, ww, lin):
        l1 = torch.tanh(lin(xx, ww)).sum()
        gx, gw = torch.autograd.grad(l1, (xx, ww), create_graph=True)
        return torch.autograd.grad((gx ** 2).sum() + (gw ** 3).sum(), (xx, ww))

    g_ref = meta(x.clone().requires_grad_(), w.clone().requires_grad_(), lambda a, b: ref.linear(a, b, None))
    g = meta(x.float().requires_grad_(), w.float().requires_grad_(), batchconv.batched_linear)
    for gg, gr in zip(g, g_ref):
        assert ref.rel_err(gg, gr) < TOL
