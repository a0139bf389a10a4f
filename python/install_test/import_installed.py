"""Imports the installed PyTorch package from a scratch prefix (on PYTHONPATH)
and checks that it is that copy, that its native module loaded the installed
libbatchconv (not the build folder's), and that a conv and its gradients match
PyTorch's autograd of the naive formulation in float64."""
import os
import sys

import torch
import torch.nn.functional as F

prefix = os.path.realpath(sys.argv[1])
import batchconv  # noqa: E402

where = os.path.realpath(batchconv.__file__)
if not where.startswith(prefix + os.sep):
    sys.exit(f"batchconv was imported from {where}, not from the prefix {prefix}")
libs = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        if os.path.basename(path).startswith("libbatchconv.so"):
            libs.add(os.path.realpath(path))
if not libs or any(not lib.startswith(prefix + os.sep) for lib in libs):
    sys.exit(f"the native module loaded libbatchconv from {sorted(libs)}, expected it under {prefix}")

torch.manual_seed(1)
x = torch.randn(3, 2, 5, 9, 11, requires_grad=True)
w = torch.randn(3, 6, 5, 3, 3, requires_grad=True)
b = torch.randn(3, 6, requires_grad=True)
y = batchconv.batched_conv2d(x, w, b, padding=(1, 2), stride=(1, 2))
dy = torch.randn_like(y)
gx, gw, gb = torch.autograd.grad(y, (x, w, b), dy)
x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
ref = torch.stack([F.conv2d(x64[i], w64[i], b64[i], padding=(1, 2), stride=(1, 2)) for i in range(3)])
rx, rw, rb = torch.autograd.grad(ref, (x64, w64, b64), dy.double())
for name, got, want in (("y", y, ref), ("dx", gx, rx), ("dw", gw, rw), ("dbias", gb, rb)):
    err = ((got.double() - want).abs().max() / want.abs().max()).item()
    if not err < 1e-4:
        sys.exit(f"{name}: relative error {err:.3g} against the float64 reference")
print(f"installed package {where} with {sorted(libs)}: y, dx, dw, dbias within 1e-4")
