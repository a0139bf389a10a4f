"""Helper of npy_roundtrip_test.sh: writes random inputs for an op, and checks
batchconv-bench's y.npy against a float64 numpy computation of the same op."""
import sys

import numpy as np

CASES = {  # op: x shape, w shape, bias shape, (stride, pad, groups)
    "gconv": ((2, 4, 9, 7), (6, 2, 3, 3), (6,), (2, 1, 2)),
    "bwconv": ((3, 2, 3, 8, 8), (3, 5, 3, 3, 3), (3, 5), (1, 0, 1)),
    "biconv": ((2, 4, 6, 5), (3, 5, 4, 3, 3), (3, 5), (1, 1, 1)),
}


def conv2d(x, w, b, stride, pad, groups):
    n, c, h, wd = x.shape
    co, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, co, oh, ow))
    og = co // groups
    for o in range(co):
        g = o // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, i, j])
        y[:, o] += b[o]
    return y


def main():
    mode, op, d = sys.argv[1:4]
    xs, ws, bs, (stride, pad, groups) = CASES[op]
    if mode == "write":
        rng = np.random.default_rng(5)
        for name, shape in (("x", xs), ("w", ws), ("b", bs)):
            np.save(f"{d}/{name}.npy", rng.uniform(-1, 1, shape).astype(np.float32))
        with open(f"{d}/args", "w") as f:
            f.write(f"--stride={stride} --pad={pad} --groups={groups}")
        return
    x, w, b = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("x", "w", "b"))
    y = np.load(f"{d}/y.npy")
    assert y.dtype == np.float32, y.dtype
    if op == "gconv":
        ref = conv2d(x, w, b, stride, pad, groups)
    elif op == "bwconv":
        ref = np.stack([conv2d(x[i], w[i], b[i], stride, pad, groups) for i in range(x.shape[0])])
    else:  # biconv, concatenated layout (N, B*Cout, H', W')
        ref = np.concatenate([conv2d(x, w[i], b[i], stride, pad, groups) for i in range(w.shape[0])], axis=1)
    assert y.shape == ref.shape, (y.shape, ref.shape)
    err = np.abs(y - ref).max() / max(1.0, np.abs(ref).max())
    print(f"{op}: y.npy {y.shape} max rel err vs numpy float64 {err:.2e}")
    assert err < 1e-5, err


if __name__ == "__main__":
    main()
