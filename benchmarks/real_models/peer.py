#!/usr/bin/env python3
"""The peers of the real-model benchmark, one process per run.

    peer.py ort|torch <dir> <reps> <threads>

ort: ONNX Runtime's CPU provider on <dir>/model.onnx, all graph optimisations, <threads> intra-op
threads. torch: PyTorch eager on <dir>/model.pt under inference_mode, torch.set_num_threads(<threads>).
Prints "version <v>", "err <max |y - ref| / max |ref|>" against <dir>/expected.f64 and "times <ms>...".
"""
import os
import sys
import time

import numpy as np


def shapes(d):
    out = {}
    for line in open(os.path.join(d, "shapes.txt")):
        k, *dims = line.split()
        out[k] = tuple(int(v) for v in dims)
    return out


def main():
    which, d, reps, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    s = shapes(d)
    x = np.fromfile(os.path.join(d, "input.f32"), dtype="<f4").reshape(s["input"])
    ref = np.fromfile(os.path.join(d, "expected.f64"), dtype="<f8").reshape(s["output"])
    if which == "ort":
        import onnxruntime as ort
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.inter_op_num_threads = 1
        o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(os.path.join(d, "model.onnx"), o, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        run = lambda: sess.run(None, {name: x})[0]  # noqa: E731
        version = ort.__version__
    elif which == "torch":
        import torch
        torch.set_num_threads(threads)
        try:
            model = torch.load(os.path.join(d, "model.pt"), weights_only=False)
        except TypeError:  # PyTorch < 1.13 has no weights_only
            model = torch.load(os.path.join(d, "model.pt"))
        model.eval()
        xt = torch.from_numpy(x)

        def run():
            with torch.inference_mode():
                return model(xt).numpy()
        version = torch.__version__
    else:
        sys.exit(f"peer.py: unknown peer '{which}' (ort or torch)")
    y = run()
    err = np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30)
    print(f"version {version}")
    print(f"err {err:.3e}")
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    print("times " + " ".join(f"{t:.4f}" for t in times))


if __name__ == "__main__":
    main()
