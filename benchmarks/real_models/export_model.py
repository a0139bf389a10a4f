#!/usr/bin/python3
"""Exports one torchvision classification network for the real-model benchmark.

    export_model.py <model> <batch> <dir> [--opset=13] [--dynamic-batch] [--seed=0]

Writes into <dir>:
  model.onnx     torch.onnx.export of the network in eval mode, 224 x 224 input
  model.pt       the same network (torch.save), for the PyTorch peer
  input.f32      the input, raw float32, (batch, 3, 224, 224)
  expected.f64   the network's output computed in float64 by PyTorch, raw float64
  shapes.txt     "input <dims>" and "output <dims>" lines

<model> is a torchvision network, or convs<C>x<H> (e.g. convs512x7): three 3x3 convs of C -> C
channels with ReLU on an H x H map, a ResNet stage's layers alone (input (batch, C, H, H)).

Weights are torchvision's random initialisation; BatchNorm statistics are calibrated by a
few training-mode passes over random inputs (cumulative averages), so that activations keep
their scale through the network and a relative error means something.
"""
import argparse
import os
import re
import sys

import torch
import torchvision


def conv_stack(name):
    """convs<C>x<H>: the three-conv stack, and its input's (C, H, W); None for other names."""
    m = re.fullmatch(r"convs(\d+)x(\d+)", name)
    if not m:
        return None
    c, h = int(m.group(1)), int(m.group(2))
    torch.manual_seed(0)
    layers = []
    for _ in range(3):
        layers += [torch.nn.Conv2d(c, c, 3, padding=1), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).eval(), (c, h, h)


def build(name):
    ctor = getattr(torchvision.models, name, None)
    if ctor is None:
        sys.exit(f"export_model.py: no torchvision model '{name}' in torchvision {torchvision.__version__}")
    torch.manual_seed(0)
    model = ctor(weights=None) if "weights" in ctor.__code__.co_varnames else ctor()
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative averages over the calibration passes
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, 3, 224, 224))
    return model.eval()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("batch", type=int)
    p.add_argument("dir")
    p.add_argument("--opset", type=int, default=13)
    p.add_argument("--dynamic-batch", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    stack = conv_stack(a.model)
    model, chw = stack if stack else (build(a.model), (3, 224, 224))
    torch.manual_seed(a.seed + 1)
    x = torch.randn(a.batch, *chw)
    dyn = {"input": {0: "batch"}, "output": {0: "batch"}} if a.dynamic_batch else None
    torch.onnx.export(model, x, os.path.join(a.dir, "model.onnx"), opset_version=a.opset,
                      input_names=["input"], output_names=["output"], dynamic_axes=dyn)
    torch.save(model, os.path.join(a.dir, "model.pt"))
    with torch.no_grad():
        ref = model.double()(x.double())
    x.numpy().astype("<f4").tofile(os.path.join(a.dir, "input.f32"))
    ref.numpy().astype("<f8").tofile(os.path.join(a.dir, "expected.f64"))
    with open(os.path.join(a.dir, "shapes.txt"), "w") as f:
        f.write("input " + " ".join(map(str, x.shape)) + "\n")
        f.write("output " + " ".join(map(str, ref.shape)) + "\n")


if __name__ == "__main__":
    main()
