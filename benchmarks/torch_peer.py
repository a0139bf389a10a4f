#!/usr/bin/python3
"""PyTorch peer for benchmarks/seed-workloads (optional column).

Reads workload lines "id|op|x|w|pad|groups|layout|reps" (shapes as AxBxC) from
the file named on the command line, times PyTorch's own formulations with
torch.set_num_threads(2) and prints one line per result:
    RESULT|id|method|median_ms|min_ms|note
or  SKIP|reason   when torch is not importable (exit status 0).
Memory is not measured here (PyTorch allocates every output anew).
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

    def timed(fn, reps):
        t0 = time.perf_counter()
        out = fn()  # warm-up
        first = (time.perf_counter() - t0) * 1e3
        if first > 2000:  # very slow: the warm-up is the one timing (keeps the run bounded)
            return first, first, "1 run", out
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            out = fn()
            ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts), min(ts), "", out


    for line in open(sys.argv[1]):
        wid, op, xs, ws, pad, groups, layout, reps = line.strip().split("|")
        xs = [int(v) for v in xs.split("x")]
        ws = [int(v) for v in ws.split("x")]
        pad, groups, reps = int(pad), int(groups), int(reps)
        x = torch.rand(*xs) * 2 - 1
        w = torch.rand(*ws) * 2 - 1
        one_d = len(ws) == (3 if op == "grouped_conv" else 4)
        conv = F.conv1d if one_d else F.conv2d
        methods = {}
        if op == "grouped_conv":
            methods["torch:conv"] = lambda: conv(x, w, padding=pad, groups=groups)
        elif op == "batched_weight_conv":
            b, n = xs[0], xs[1]
            spatial = xs[3:]

            def trick():  # the correct transpose (seed 2's answer)
                xt = x.transpose(0, 1).reshape(n, b * xs[2], *spatial)
                y = conv(xt, w.reshape(b * ws[1], *ws[2:]), padding=pad, groups=b * groups)
                return y.view(n, b, ws[1], *y.shape[2:]).transpose(0, 1).contiguous()

            def loop():
                return torch.stack([conv(x[i], w[i], padding=pad, groups=groups) for i in range(b)])

            methods["torch:grouped-trick"] = trick
            methods["torch:loop"] = loop
        elif op == "broadcast_input_conv":
            b = ws[0]
            wf = w.reshape(b * ws[1], *ws[2:])
            if layout == "concat":
                reps_shape = [1, b] + [1] * (len(xs) - 2)
                methods["torch:repeat+grouped"] = lambda: conv(x.repeat(*reps_shape), wf, padding=pad,
                                                               groups=b * groups)
                if groups == 1:
                    methods["torch:dense"] = lambda: conv(x, wf, padding=pad)
        results = {}
        with torch.no_grad():
            for name, fn in methods.items():
                try:
                    med, mn, note, results[name] = timed(fn, reps)
                    print(f"RESULT|{wid}|{name}|{med:.4f}|{mn:.4f}|{note}", flush=True)
                except Exception as e:  # noqa: BLE001 - report, go on with the next
                    print(f"RESULT|{wid}|{name}|-1|-1|error: {e}", flush=True)
        if len(results) == 2:  # the two formulations must agree
            a, c = results.values()
            err = float((a - c).abs().max() / max(1.0, float(c.abs().max())))
            print(f"AGREE|{wid}|{' and '.join(results)}|{err:.2e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
