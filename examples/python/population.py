"""Evolution strategies' population forward pass: 256 individuals, each with its own weights of a
3-layer conv policy, evaluated on the same observations (broadcast-input conv for the first layer,
batched-weight convs after it), beside the grouped-conv trick, a loop and functorch.vmap.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/population.py [--population 256]
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


def policy_batchconv(obs, ws):
    h = torch.relu(batchconv.broadcast_conv2d(obs, ws[0], stride=2, padding=1, layout="batched"))
    h = torch.relu(batchconv.batched_conv2d(h, ws[1], stride=2, padding=1))
    return batchconv.batched_conv2d(h, ws[2]).mean((3, 4))


def policy_trick(obs, ws):
    P = ws[0].shape[0]
    N = obs.shape[0]
    h = torch.relu(F.conv2d(obs.repeat(1, P, 1, 1), ws[0].flatten(0, 1), stride=2, padding=1, groups=P))
    h = torch.relu(F.conv2d(h, ws[1].flatten(0, 1), stride=2, padding=1, groups=P))
    y = F.conv2d(h, ws[2].flatten(0, 1), groups=P).mean((2, 3))
    return y.reshape(N, P, -1).transpose(0, 1)


def policy_loop(obs, ws):
    outs = []
    for p in range(ws[0].shape[0]):
        h = torch.relu(F.conv2d(obs, ws[0][p], stride=2, padding=1))
        h = torch.relu(F.conv2d(h, ws[1][p], stride=2, padding=1))
        outs.append(F.conv2d(h, ws[2][p]).mean((2, 3)))
    return torch.stack(outs)


def policy_vmap(obs, ws):
    def one(w0, w1, w2):
        h = torch.relu(F.conv2d(obs, w0, stride=2, padding=1))
        h = torch.relu(F.conv2d(h, w1, stride=2, padding=1))
        return F.conv2d(h, w2).mean((2, 3))
    return vmap(one)(*ws)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--population", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16, help="observations evaluated by every individual")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    P = args.population
    obs = torch.randn(args.batch, 4, 32, 32)
    base = [torch.randn(16, 4, 3, 3) * 0.3, torch.randn(32, 16, 3, 3) * 0.1, torch.randn(8, 32, 1, 1) * 0.2]
    ws = [b + 0.02 * torch.randn(P, *b.shape) for b in base]  # ES perturbations
    print(header())
    print(f"population forward: {P} individuals x {args.batch} observations 4x32x32, "
          "conv 4->16 s2, 16->32 s2, 32->8 1x1")
    forms = [("batchconv broadcast+batched", policy_batchconv), ("grouped-conv trick", policy_trick),
             ("loop over individuals", policy_loop)]
    if vmap is not None:
        forms.append(("functorch.vmap", policy_vmap))
    rows, outs = [], []
    with torch.no_grad():
        for name, fn in forms:
            t, m, out = measure(lambda: fn(obs, ws), reps=args.reps)
            rows.append((name, t, m))
            outs.append(out)
    table(rows)
    for (name, _), o in zip(forms[1:], outs[1:]):
        err = ((o - outs[0]).abs().max() / outs[0].abs().max()).item()
        print(f"  {name}: max rel diff vs batchconv {err:.1e}")
        assert err < 1e-4


if __name__ == "__main__":
    main()
