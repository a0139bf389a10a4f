"""Seed 1: G linear layers reading the same input x (N, 16), forward and backward. batchconv's
batched_linear takes the shared x as it is (no repeat); PyTorch's ways: x.t().repeat(G, 1) +
grouped Conv1d (the seed's formulation), a loop of matmuls, and functorch.vmap.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/seed1_linear.py [--n 1000000]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import batchconv  # noqa: E402
from bench_util import header, measure, table  # noqa: E402

try:
    from functorch import vmap
except ImportError:  # pragma: no cover
    vmap = None


def fwd_bwd(fn, x, w, b):
    y = fn(x, w, b)  # (G, N, M)
    gx, gw, gb = torch.autograd.grad((y * y).sum(), (x, w, b))
    return y.detach(), gx, gw, gb


def lin_batchconv(x, w, b):
    return batchconv.batched_linear(x, w, b)


def lin_repeat_grouped(x, w, b):
    G, K, M = w.shape
    xr = x.t().repeat(G, 1).unsqueeze(0)  # (1, G*K, N): the seed's repeat
    y = F.conv1d(xr, w.transpose(1, 2).reshape(G * M, K, 1), b.reshape(-1), groups=G)
    return y.reshape(G, M, -1).transpose(1, 2)


def lin_loop(x, w, b):
    return torch.stack([torch.addmm(b[g], x, w[g]) for g in range(w.shape[0])])


def lin_vmap(x, w, b):
    return vmap(lambda ww, bb: torch.addmm(bb, x, ww))(w, b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--groups", type=int, default=4)
    ap.add_argument("--features", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    G, K = args.groups, args.features
    x = torch.randn(args.n, K, requires_grad=True)
    w = (torch.randn(G, K, K) * K ** -0.5).requires_grad_()
    b = torch.randn(G, K).requires_grad_()
    print(header())
    print(f"seed 1: {G} linear layers {K}->{K} over one shared x ({args.n}, {K}), forward + backward")
    forms = [("batchconv.batched_linear (shared x)", lin_batchconv), ("repeat + grouped conv1d", lin_repeat_grouped),
             ("loop of addmm", lin_loop)]
    if vmap is not None:
        forms.append(("functorch.vmap", lin_vmap))
    rows, outs = [], []
    for name, fn in forms:
        t, m, out = measure(lambda: fwd_bwd(fn, x, w, b), reps=args.reps)
        rows.append((name, t, m))
        outs.append(out)
    table(rows)
    for (name, _), o in zip(forms[1:], outs[1:]):
        err = max(((a - r).abs().max() / r.abs().max()).item() for a, r in zip(o, outs[0]))
        print(f"  {name}: max rel diff (y, dx, dw, dbias) vs batchconv {err:.1e}")
        assert err < 1e-4


if __name__ == "__main__":
    main()
