#!/usr/bin/python3
"""Regenerates the PyTorch-exported test models in this folder.

Run with Debian's interpreter (torch 1.13 + onnx 1.12):
    /usr/bin/python3 tests/models/export_models.py [out_dir]

For every pattern and opset (13 and 17) it writes
    <name>_opset<NN>.onnx           the model as torch.onnx.export writes it
    <name>_opset<NN>.input_<i>.pb   onnx.TensorProto of each input (random, fixed seed)
    <name>_opset<NN>.output_<i>.pb  onnx.TensorProto of each output computed by PyTorch
The files are test data for tests/passes (and the compile issue): keep them small.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OPSETS = (13, 17)


class Seed1Program(nn.Module):
    """Seed 1 as posted: x (N, 16) -> x.t().repeat(4, 1) -> Conv1d(64, 64, 1, groups=4), unbatched."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Conv1d(64, 64, kernel_size=1, groups=4, bias=True)

    def forward(self, x):
        return self.layer(x.t().repeat(4, 1))


class RepeatTile(nn.Module):
    """x (n, 16, L) -> x.repeat(1, R, 1) -> Conv1d(16R, cout, k, groups=G)."""

    def __init__(self, repeat=4, groups=4, cout=64, k=1):
        super().__init__()
        self.repeat = repeat
        self.layer = nn.Conv1d(16 * repeat, cout, kernel_size=k, groups=groups, bias=True)

    def forward(self, x):
        return self.layer(x.repeat(1, self.repeat, 1))


class RepeatExpand(nn.Module):
    """x (n, 16, L) -> unsqueeze(1).expand(-1, 4, -1, -1).reshape(n, 64, L) -> Conv1d groups=4."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Conv1d(64, 64, kernel_size=1, groups=4, bias=True)

    def forward(self, x):
        n, c, length = x.shape
        r = x.unsqueeze(1).expand(-1, 4, -1, -1).reshape(n, 4 * c, length)
        return self.layer(r)


class RepeatInterleaveExpand(nn.Module):
    """x (n, 16, L) -> unsqueeze(2).expand(-1, -1, 4, -1).reshape(n, 64, L) (repeat_interleave) -> Conv1d groups=4."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Conv1d(64, 32, kernel_size=1, groups=4, bias=True)

    def forward(self, x):
        n, c, length = x.shape
        r = x.unsqueeze(2).expand(-1, -1, 4, -1).reshape(n, 4 * c, length)
        return self.layer(r)


class Seed2Program(nn.Module):
    """Seed 2's desired computation: the batch cut into G groups, each with its own filters, cat back."""

    def __init__(self, groups=2, cin=3, cout=4, k=3):
        super().__init__()
        self.groups = groups
        self.w = nn.Parameter(torch.randn(groups, cout, cin, k, k) * 0.2)
        self.b = nn.Parameter(torch.randn(groups, cout) * 0.1)

    def forward(self, x):
        sub = x.shape[0] // self.groups
        out = []
        for i in range(self.groups):
            out.append(F.conv2d(x[i * sub:(i + 1) * sub], self.w[i], self.b[i], padding=1))
        return torch.cat(out)


class Seed2ReluProgram(Seed2Program):
    """Seed 2 with a ReLU after every group's conv, as a network layer would have it."""

    def forward(self, x):
        sub = x.shape[0] // self.groups
        return torch.cat([F.relu(F.conv2d(x[i * sub:(i + 1) * sub], self.w[i], self.b[i], padding=1))
                          for i in range(self.groups)])


class Seed3Program(nn.Module):
    """Seed 3's BatchConv2DLayer: x (b_i, b_j, c, h, w), per-task weights, permute/view grouped conv."""

    def __init__(self, tasks=3, cin=3, cout=4, k=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(tasks, cout, cin, k, k) * 0.2)
        self.bias = nn.Parameter(torch.randn(tasks, cout) * 0.1)

    def forward(self, x):
        b_i, b_j, c, h, w = x.shape
        _, out_channels, in_channels, kh, kw = self.weight.shape
        out = x.permute([1, 0, 2, 3, 4]).contiguous().view(b_j, b_i * c, h, w)
        weight = self.weight.view(b_i * out_channels, in_channels, kh, kw)
        out = F.conv2d(out, weight=weight, bias=None, stride=1, dilation=1, groups=b_i, padding=0)
        out = out.view(b_j, b_i, out_channels, out.shape[-2], out.shape[-1])
        out = out.permute([1, 0, 2, 3, 4])
        return out + self.bias.unsqueeze(1).unsqueeze(3).unsqueeze(3)


class ParallelConcat(nn.Module):
    """Three convs with one geometry read x and are concatenated along channels."""

    def __init__(self, groups=1):
        super().__init__()
        self.a = nn.Conv2d(8, 4, 3, padding=1, groups=groups)
        self.b = nn.Conv2d(8, 6, 3, padding=1, groups=groups)
        self.c = nn.Conv2d(8, 2, 3, padding=1, groups=groups)

    def forward(self, x):
        return torch.cat([self.a(x), self.b(x), self.c(x)], dim=1)


class ParallelSeparate(nn.Module):
    """Three convs with one geometry read x and are used separately."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 4, 1, stride=2)
        self.b = nn.Conv2d(8, 6, 1, stride=2)
        self.c = nn.Conv2d(8, 4, 1, stride=2)

    def forward(self, x):
        return torch.relu(self.a(x)), self.b(x) * 2.0, self.a(x) + self.c(x)


class ConvStack(nn.Module):
    """Channels-family convs in a chain (a fused ReLU, a residual Add, a strided conv): the layout plan
    stores the first two results channels innermost."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(8, 32, 3, padding=1)
        self.b = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.c = nn.Conv2d(32, 16, 3, padding=1, stride=2)

    def forward(self, x):
        r = torch.relu(self.a(x))
        return self.c(torch.relu(self.b(r) + r))


class ResNeXtBlock(nn.Module):
    """1x1, grouped 3x3 (8 groups of 4), 1x1, residual, ReLU."""

    def __init__(self, c=64, m=32, groups=8):
        super().__init__()
        self.reduce = nn.Conv2d(c, m, 1)
        self.grouped = nn.Conv2d(m, m, 3, padding=1, groups=groups)
        self.expand = nn.Conv2d(m, c, 1)

    def forward(self, x):
        h = torch.relu(self.reduce(x))
        h = torch.relu(self.grouped(h))
        return torch.relu(self.expand(h) + x)


class DepthwiseSeparable(nn.Module):
    """Depthwise 3x3 + ReLU, pointwise 1x1 + ReLU (MobileNet's block)."""

    def __init__(self, c=32, m=64):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c)
        self.pw = nn.Conv2d(c, m, 1)

    def forward(self, x):
        return torch.relu(self.pw(torch.relu(self.dw(x))))


class CnnFeatures(nn.Module):
    """A small classifier returning its features beside its logits: conv, BN (which the exporter folds
    into the conv in eval mode), ReLU, pool, Linear + ReLU (the features, an output the last Linear
    reads), Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 5)
        with torch.no_grad():  # statistics as after training, not the initial 0 / 1
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        features = torch.relu(self.fc1(torch.flatten(h, 1)))
        return features, self.fc2(features)


class VggPools(nn.Module):
    """3x3 convs with pools between them (max 2 x 2; average 3 x 3 with padding, which the exporter
    writes with count_include_pad = 0), so the layout plan keeps the convs and pools channels innermost."""

    def __init__(self):
        super().__init__()
        self.c0 = nn.Conv2d(16, 32, 3, padding=1)
        self.c1 = nn.Conv2d(32, 32, 3, padding=1)
        self.c2 = nn.Conv2d(32, 16, 3, padding=1)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.c0(x)), 2)
        h = F.avg_pool2d(torch.relu(self.c1(h)), 3, stride=1, padding=1, count_include_pad=False)
        return self.c2(h)


class MobileBlocks(nn.Module):
    """The blocks of torchvision's mobile networks, small: a stem with HardSwish (MobileNetV3), an
    inverted residual with a depthwise conv, SiLU and squeeze-excite (EfficientNet: the mean over
    the map, two 1x1 convs, a HardSigmoid gate, the channel-wise Mul), a channel split and shuffle
    (ShuffleNetV2: chunk, then view / transpose / view on the input's own sizes) and the head,
    x.mean([2, 3]) and a Linear (MnasNet)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.expand = nn.Conv2d(16, 32, 1)
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.se_reduce = nn.Conv2d(32, 8, 1)
        self.se_expand = nn.Conv2d(8, 32, 1)
        self.project = nn.Conv2d(32, 16, 1)
        self.branch = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        h = F.hardswish(self.stem(x))
        e = F.silu(self.dw(F.silu(self.expand(h))))
        s = e.mean([2, 3], keepdim=True)
        s = F.hardsigmoid(self.se_expand(torch.relu(self.se_reduce(s))))
        h = h + self.project(e * s)
        a, b = h.chunk(2, dim=1)
        h = torch.cat((a, torch.relu(self.branch(b))), dim=1)
        n, c, hh, ww = h.size()
        h = h.view(n, 2, c // 2, hh, ww).transpose(1, 2).contiguous().view(n, -1, hh, ww)
        return self.fc(h.mean([2, 3]))


def cases():
    """(name, module, example inputs[, dynamic batch])."""
    return [
        ("seed1", Seed1Program(), (torch.randn(20, 16),)),
        ("repeat_tile", RepeatTile(), (torch.randn(2, 16, 10),)),
        ("repeat_expand", RepeatExpand(), (torch.randn(2, 16, 10),)),
        ("repeat_tile_g8", RepeatTile(repeat=2, groups=8, cout=32, k=3), (torch.randn(2, 16, 10),)),
        ("seed2", Seed2Program(groups=2), (torch.randn(6, 3, 8, 8),)),
        ("seed2_g4", Seed2Program(groups=4, cin=2, cout=3), (torch.randn(8, 2, 6, 6),)),
        ("seed3", Seed3Program(), (torch.randn(3, 2, 3, 8, 8),)),
        ("parallel_concat", ParallelConcat(), (torch.randn(2, 8, 6, 6),)),
        ("parallel_concat_g2", ParallelConcat(groups=2), (torch.randn(2, 8, 6, 6),)),
        ("parallel_separate", ParallelSeparate(), (torch.randn(2, 8, 7, 7),)),
        # Exported with a symbolic batch, as deployed models often are: the Tile stays foldable,
        # the batch slices are computed from Shape at run time (not provably equal parts: kept).
        ("repeat_tile_dynbatch", RepeatTile(), (torch.randn(3, 16, 10),), True),
        ("seed2_dynbatch", Seed2Program(groups=2), (torch.randn(4, 3, 8, 8),), True),
        ("repeat_interleave_expand", RepeatInterleaveExpand(), (torch.randn(2, 16, 10),)),
        ("seed2_relu", Seed2ReluProgram(groups=3), (torch.randn(6, 3, 5, 5),)),
        ("conv_stack", ConvStack(), (torch.randn(2, 8, 10, 12),)),
        ("resnext_block", ResNeXtBlock(), (torch.randn(2, 64, 7, 9),)),
        ("dw_separable", DepthwiseSeparable(), (torch.randn(2, 32, 9, 8),)),
        ("cnn_features", CnnFeatures(), (torch.randn(2, 3, 8, 8),)),
        ("vgg_pools", VggPools(), (torch.randn(2, 16, 12, 10),)),
        ("mobile_blocks", MobileBlocks(), (torch.randn(2, 3, 14, 12),)),
        # With a symbolic batch for batchconv-compile --dynamic-batch: every block of torchvision's
        # mobile networks, and a Flatten -> Linear head with two outputs.
        ("mobile_blocks_dynbatch", MobileBlocks(), (torch.randn(3, 3, 14, 12),), True),
        ("cnn_features_dynbatch", CnnFeatures(), (torch.randn(3, 3, 8, 8),), True),
        # Append new cases here: all cases draw from one random stream, so inserting one earlier
        # would change the data of every model after it.
    ]


def write_tensor(path, name, array):
    t = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(2022)
    for name, module, inputs, *dynamic in cases():
        module.eval()
        with torch.no_grad():
            outputs = module(*inputs)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        in_names = [f"x{i}" if len(inputs) > 1 else "x" for i in range(len(inputs))]
        out_names = [f"y{i}" if len(outputs) > 1 else "y" for i in range(len(outputs))]
        for opset in OPSETS:
            stem = os.path.join(out_dir, f"{name}_opset{opset}")
            dynamic_axes = {n: {0: "N"} for n in in_names + out_names} if dynamic and dynamic[0] else None
            torch.onnx.export(module, inputs, stem + ".onnx", opset_version=opset,
                              input_names=in_names, output_names=out_names, dynamic_axes=dynamic_axes)
            model = onnx.load(stem + ".onnx")
            onnx.checker.check_model(model)
            for i, (n, t) in enumerate(zip(in_names, inputs)):
                write_tensor(f"{stem}.input_{i}.pb", n, t.numpy())
            for i, (n, t) in enumerate(zip(out_names, outputs)):
                write_tensor(f"{stem}.output_{i}.pb", n, t.numpy())
            size = os.path.getsize(stem + ".onnx")
            ops = sorted({node.op_type for node in model.graph.node})
            print(f"{stem}.onnx: {size} bytes, {len(model.graph.node)} nodes, ops {ops}")
            assert size < 100_000, f"{stem}.onnx is {size} bytes; keep test models under 100 KB"


if __name__ == "__main__":
    main()
