"""The README's PyTorch speed table: forward + backward (grads wrt x, w and bias) of the seed 3 and
MAML workloads, batchconv against each PyTorch formulation (grouped-conv trick, loop, functorch.vmap),
and B = 1 against F.conv2d (NCHW and channels_last tensors), all in one run; median ms and peak
extra memory.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/benchmark.py [--reps 3] [--quick]
        [--only seed3,maml,b1] [--rounds 1] [--keep-freed]

--keep-freed reruns the benchmark with glibc told to keep freed memory (no mmap for large blocks, no
trimming): PyTorch's CPU allocator then reuses its pages instead of faulting fresh ones in on every
call, which is PyTorch at its best; --rounds repeats each workload (formulations alternate).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import batchconv  # noqa: E402
from bench_util import header, measure, mib  # noqa: E402

try:
    from functorch import vmap
except ImportError:  # pragma: no cover
    vmap = None


# glibc tunables for --keep-freed: never mmap a block (so free() keeps it in the heap) and never trim.
KEEP_FREED = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776"


def trick(x, w, b, pad):
    B, N, C, H, W = x.shape
    y = F.conv2d(x.transpose(0, 1).reshape(N, B * C, H, W), w.flatten(0, 1), b.flatten(), padding=pad, groups=B)
    return y.reshape(N, B, -1, *y.shape[-2:]).transpose(0, 1)


def loop(x, w, b, pad):
    return torch.stack([F.conv2d(x[i], w[i], b[i], padding=pad) for i in range(x.shape[0])])


def vmapped(x, w, b, pad):
    return vmap(lambda xx, ww, bb: F.conv2d(xx, ww, bb, padding=pad))(x, w, b)


def ours(x, w, b, pad):
    return batchconv.batched_conv2d(x, w, b, padding=pad)


def fwd_bwd(fn, x, w, b, pad, dy):
    y = fn(x, w, b, pad)
    return torch.autograd.grad(y, (x, w, b), dy)


def _channels_last(t):
    """t ([B,] N, C, H, W) with each (N, C, H, W) slice in torch.channels_last."""
    return t.reshape(-1, *t.shape[-3:]).contiguous(memory_format=torch.channels_last).view(t.shape)


def workload(name, B, N, C, M, H, pad, reps, forms, channels_last=False, plain=False):
    """plain: B = 1 as one conv's tensors, x (N, C, H, W), w (M, C, 3, 3), b (M), so that no
    formulation's gradient goes through a view of a larger leaf (whose backward allocates it)."""
    torch.manual_seed(0)
    lead = () if plain else (B,)
    x = torch.randn(*lead, N, C, H, H)
    w = (torch.randn(*lead, M, C, 3, 3) * 0.1).requires_grad_()
    b = torch.randn(*lead, M).requires_grad_()
    Ho = H + 2 * pad - 2
    dy = torch.randn(*lead, N, M, Ho, Ho)
    if channels_last:
        x, dy = _channels_last(x), _channels_last(dy)
    x.requires_grad_()
    rows = []
    ref = None
    for fname, fn in forms:
        t, m, g = measure(lambda: fwd_bwd(fn, x, w, b, pad, dy), reps=reps)
        err = 0.0 if ref is None else max(((a - r).abs().max() / r.abs().max()).item() for a, r in zip(g, ref))
        ref = ref or g
        rows.append((fname, t, m, err))
    return name, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller MAML layer (N=16) for a fast look")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--only", default="seed3,maml,b1", help="comma-separated workloads: seed3, maml, b1")
    ap.add_argument("--rounds", type=int, default=1, help="times each workload is run")
    ap.add_argument("--keep-freed", action="store_true", help="rerun with glibc keeping freed memory")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if not only <= {"seed3", "maml", "b1"}:
        ap.error(f"--only: {args.only!r} names a workload other than seed3, maml, b1")
    if args.keep_freed and KEEP_FREED not in os.environ.get("GLIBC_TUNABLES", ""):
        os.environ["GLIBC_TUNABLES"] = KEEP_FREED
        os.execv(sys.executable, [sys.executable] + sys.argv)
    torch.set_num_threads(args.threads)
    print(header())
    print(f"allocator: GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '(unset)')}")
    forms = [("batchconv", ours), ("grouped-conv trick", trick), ("loop over B", loop)]
    if vmap is not None:
        forms.append(("functorch.vmap", vmapped))
    print("\n| workload (fwd + bwd) | formulation | median ms | peak extra | batchconv speed-up | max rel diff |")
    print("|---|---|---:|---:|---:|---:|", flush=True)

    def report(result):  # each workload's rows as soon as it is done (a full run takes long)
        name, rows = result
        base = rows[0][1]
        for i, (fname, t, m, err) in enumerate(rows):
            print(f"| {name if i == 0 else ''} | {fname} | {t * 1e3:.1f} | {mib(m)} | "
                  f"{'' if i == 0 else f'{t / base:.2f}x'} | {'' if i == 0 else f'{err:.1e}'} |", flush=True)

    b1 = [("batchconv.batched_conv2d (B=1)",
           lambda x, w, b, p: batchconv.batched_conv2d(x[None], w[None], b[None], padding=p)[0]),
          ("batchconv.grouped_conv2d", lambda x, w, b, p: batchconv.grouped_conv2d(x, w, b, padding=p)),
          ("F.conv2d", lambda x, w, b, p: F.conv2d(x, w, b, padding=p))]
    for _ in range(args.rounds):
        if "seed3" in only:
            report(workload("seed 3: x (100,50,3,32,32), w (100,64,3,3,3)", 100, 50, 3, 64, 32, 0, args.reps, forms))
        if "maml" in only:
            report(workload(f"MAML layer: B=32, N={16 if args.quick else 80}, 64->64, 42x42, pad 1", 32,
                            16 if args.quick else 80, 64, 64, 42, 1, args.reps, forms))
        if "b1" in only:
            report(workload("B=1: N=128, 64->64, 56x56, pad 1", 1, 128, 64, 64, 56, 1, args.reps, b1,
                            plain=True))
            report(workload("B=1, channels_last x and dy", 1, 128, 64, 64, 56, 1, args.reps, b1,
                            channels_last=True, plain=True))


if __name__ == "__main__":
    main()
