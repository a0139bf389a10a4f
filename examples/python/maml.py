"""A MAML training step with batchconv: 4 conv layers, 32 tasks, 5 inner steps, first and second
order, timed beside PyTorch's own ways to batch tasks (the grouped-conv trick, a loop over tasks,
functorch.vmap) in the same run; the meta-losses and meta-gradients must agree.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/maml.py [--tasks 32] [--reps 3]
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


# Each layer takes x (T, N, C, H, W) and per-task w (T, Cout, C, 3, 3), b (T, Cout) and returns
# relu(conv(x, w) + b): batchconv's kernel applies the ReLU itself (relu=True), PyTorch's ways
# call torch.relu after the conv.
def conv_batchconv(x, w, b):
    return batchconv.batched_conv2d(x, w, b, padding=1, relu=True)


def conv_trick(x, w, b):
    T, N, C, H, W = x.shape
    xt = x.transpose(0, 1).reshape(N, T * C, H, W)
    y = F.conv2d(xt, w.reshape(-1, *w.shape[2:]), b.reshape(-1), padding=1, groups=T)
    return torch.relu(y.reshape(N, T, -1, H, W).transpose(0, 1))


def conv_loop(x, w, b):
    return torch.relu(torch.stack([F.conv2d(x[t], w[t], b[t], padding=1) for t in range(x.shape[0])]))


def conv_vmap(x, w, b):
    return torch.relu(vmap(lambda xx, ww, bb: F.conv2d(xx, ww, bb, padding=1))(x, w, b))


def network(conv, params, x):
    # 4 x (conv 3x3 -> ReLU -> 2x2 average pool), global average, a per-task linear head.
    for i in range(4):
        y = conv(x, params[2 * i], params[2 * i + 1])
        T, N, C, H, W = y.shape
        x = F.avg_pool2d(y.reshape(T * N, C, H, W), 2).reshape(T, N, C, H // 2, W // 2)
    feats = x.mean((3, 4))  # (T, N, C)
    return torch.bmm(feats, params[8]) + params[9][:, None, :]


def meta_step(conv, meta, xs, ys, xq, yq, steps, lr, second_order):
    T = xs.shape[0]
    params = [p.unsqueeze(0).expand(T, *p.shape) for p in meta]
    for _ in range(steps):
        logits = network(conv, params, xs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ys.reshape(-1))
        grads = torch.autograd.grad(loss, params, create_graph=second_order)
        params = [p - lr * g for p, g in zip(params, grads)]
    logits = network(conv, params, xq)
    meta_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), yq.reshape(-1))
    meta_grads = torch.autograd.grad(meta_loss, meta)
    return meta_loss.detach(), [g.detach() for g in meta_grads]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=32)
    ap.add_argument("--shots", type=int, default=5, help="support and query images per task")
    ap.add_argument("--channels", type=int, default=32)
    ap.add_argument("--size", type=int, default=28)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    T, N, C, S, ways = args.tasks, args.shots, args.channels, args.size, 5
    meta = []
    cin = 3
    for _ in range(4):
        meta += [torch.randn(C, cin, 3, 3) * (2 / (9 * cin)) ** 0.5, torch.zeros(C)]
        cin = C
    meta += [torch.randn(C, ways) * C ** -0.5, torch.zeros(ways)]
    meta = [p.requires_grad_() for p in meta]
    xs, xq = torch.randn(T, N, 3, S, S), torch.randn(T, N, 3, S, S)
    ys, yq = torch.randint(0, ways, (T, N)), torch.randint(0, ways, (T, N))
    print(header())
    print(f"MAML step: {T} tasks, {N} support + {N} query images of 3x{S}x{S}, 4 conv layers of {C} channels, "
          f"{args.steps} inner steps")
    forms = [("batchconv.batched_conv2d", conv_batchconv), ("grouped-conv trick", conv_trick),
             ("loop over tasks", conv_loop)]
    if vmap is not None:
        forms.append(("functorch.vmap", conv_vmap))
    for second in (False, True):
        print(f"\n{'second' if second else 'first'}-order meta-step (forward + backward of all inner steps):")
        rows, results = [], []
        for name, conv in forms:
            t, m, out = measure(lambda: meta_step(conv, meta, xs, ys, xq, yq, args.steps, 0.1, second),
                                reps=args.reps)
            rows.append((name, t, m))
            results.append(out)
        table(rows)
        loss0, g0 = results[0]
        for (name, _), (loss, g) in zip(forms[1:], results[1:]):
            dl = abs(loss - loss0).item() / abs(loss0).item()
            dg = max(((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item() for a, b in zip(g0, g))
            print(f"  {name}: meta-loss {loss.item():.6f} vs batchconv {loss0.item():.6f} "
                  f"(rel diff {dl:.1e}), meta-gradients max rel diff {dg:.1e}")
            assert dl < 1e-4 and dg < 1e-3, f"{name} disagrees with batchconv"


if __name__ == "__main__":
    main()
