#!/usr/bin/python3
"""PyTorch peer for benchmarks/model-layouts: each model layer by layer in PyTorch (NCHW, no_grad).

Reads lines "model|tasks|reps|layer;layer;..." where a layer is
"n,cin,h,w,cout,kh,kw,groups,sh,sw,pt,pl,pb,pr,one_d,in,add,relu,pool" (in: 0 = the model input, k =
layer k-1's result; add: -1 or the tensor added before the ReLU; pool: 0 or a max pool's window and
stride after it), builds the layers with random weights (the
same shapes as the compiled model, not the same values), times torch.set_num_threads(2) inference and
prints "RESULT|model|median_ms|min_ms|note", or "SKIP|reason" when torch is not importable (exit 0).
Batched-weight models (tasks > 1) run as one grouped conv over all tasks (the grouped trick, with its
transposes), PyTorch's fastest form for them in seed-workloads.
"""
import statistics
import sys
import time


def main():
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001 - any import failure means: no torch column
        print(f"SKIP|torch not importable by {sys.executable}: {e}")
        return 0
    torch.set_num_threads(2)
    torch.manual_seed(0)
    for line in open(sys.argv[1]):
        name, tasks, reps, layers = line.strip().split("|")
        tasks, reps = int(tasks), int(reps)
        spec = [[int(v) for v in l.split(",")] for l in layers.split(";")]
        params = []
        for (n, cin, h, w, cout, kh, kw, groups, sh, sw, pt, pl, pb, pr, one_d, src, add, relu, pool) in spec:
            wt = torch.randn(tasks * cout, cin // groups, *((kw,) if one_d else (kh, kw))) * (cin // groups * kh * kw) ** -0.5
            params.append((wt, torch.randn(tasks * cout) * 0.1))
        first = spec[0]
        n0, c0, h0, w0, one_d0 = first[0], first[1], first[2], first[3], first[14]
        x = torch.randn(tasks, n0, c0, *((w0,) if one_d0 else (h0, w0)))

        def run():
            # All tasks side by side in the channels (the grouped trick), NCHW.
            t = [x.transpose(0, 1).reshape(n0, tasks * c0, *x.shape[3:])]
            for (n, cin, h, w, cout, kh, kw, groups, sh, sw, pt, pl, pb, pr, one_d, src, add, relu, pool), (wt, b) in zip(spec, params):
                inp = t[src]
                symmetric = pl == pr and (one_d or pt == pb)
                if not symmetric:
                    inp = F.pad(inp, (pl, pr) if one_d else (pl, pr, pt, pb))
                    pt = pl = 0
                if one_d:
                    y = F.conv1d(inp, wt, b, stride=sw, padding=pl, groups=groups * tasks)
                else:
                    y = F.conv2d(inp, wt, b, stride=(sh, sw), padding=(pt, pl), groups=groups * tasks)
                if add >= 0:
                    y = y + t[add]
                if relu:
                    y = torch.relu(y)
                if pool:
                    y = F.max_pool2d(y, pool)
                t.append(y)
            y = t[-1]
            return y.view(n0, tasks, -1, *y.shape[2:]).transpose(0, 1).contiguous() if tasks > 1 else y

        with torch.no_grad():
            run()
            run()
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                run()
                ts.append((time.perf_counter() - t0) * 1e3)
        note = "grouped trick over the tasks" if tasks > 1 else ""
        print(f"RESULT|{name}|{statistics.median(ts):.3f}|{min(ts):.3f}|{note}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
