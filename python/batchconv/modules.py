"""nn.Module wrappers holding their own weights (functional.py for weights passed in)."""
import math

import torch
from torch import nn

from . import functional as F


def _tuple(v, dims):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * dims


class _ConvBase(nn.Module):
    def __init__(self, dims, in_channels, out_channels, kernel_size, batch, stride, padding, dilation,
                 groups, bias, lead, relu=False):
        super().__init__()
        if not isinstance(relu, bool):
            raise TypeError(f"{type(self).__name__}: relu={relu!r} must be True or False")
        self.relu = relu
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{type(self).__name__}: groups={groups} must divide in_channels={in_channels} "
                             f"and out_channels={out_channels}")
        self.in_channels, self.out_channels, self.batch = in_channels, out_channels, batch
        self.kernel_size = _tuple(kernel_size, dims)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        shape = (out_channels, in_channels // groups) + self.kernel_size
        if lead:
            shape = (batch,) + shape
        self.weight = nn.Parameter(torch.empty(shape))
        bshape = (batch, out_channels) if lead else (out_channels,)
        self.bias = nn.Parameter(torch.empty(bshape)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        # nn.Conv's initialisation, per filter bank.
        fan_in = self.weight.shape[-len(self.kernel_size) - 1] * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in)
        nn.init.uniform_(self.weight, -bound, bound)  # kaiming_uniform_(a=sqrt(5)) of nn.Conv
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, batch={self.batch}, "
                f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
                f"bias={self.bias is not None}, relu={self.relu}")


class BatchedConv2d(_ConvBase):
    """B filter banks, one per slice: x (B, N, Cin, H, W) -> (B, N, Cout, H', W')."""

    def __init__(self, in_channels, out_channels, kernel_size, batch, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, relu=False):
        super().__init__(2, in_channels, out_channels, kernel_size, batch, stride, padding, dilation, groups,
                         bias, True, relu)

    def forward(self, x):
        return F.batched_conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups,
                                relu=self.relu)


class BatchedConv1d(_ConvBase):
    """x (B, N, Cin, W) -> (B, N, Cout, W')."""

    def __init__(self, in_channels, out_channels, kernel_size, batch, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, relu=False):
        super().__init__(1, in_channels, out_channels, kernel_size, batch, stride, padding, dilation, groups,
                         bias, True, relu)

    def forward(self, x):
        return F.batched_conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups,
                                relu=self.relu)


class BroadcastConv2d(_ConvBase):
    """B filter banks over one shared x (N, Cin, H, W) -> (N, B*Cout, ...) or (B, N, Cout, ...)."""

    def __init__(self, in_channels, out_channels, kernel_size, batch, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, layout="concat", relu=False):
        super().__init__(2, in_channels, out_channels, kernel_size, batch, stride, padding, dilation, groups,
                         bias, True, relu)
        self.layout = layout

    def forward(self, x):
        return F.broadcast_conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                  self.groups, self.layout, relu=self.relu)


class BroadcastConv1d(_ConvBase):
    """Shared x (N, Cin, W) -> (N, B*Cout, W') or (B, N, Cout, W')."""

    def __init__(self, in_channels, out_channels, kernel_size, batch, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, layout="concat", relu=False):
        super().__init__(1, in_channels, out_channels, kernel_size, batch, stride, padding, dilation, groups,
                         bias, True, relu)
        self.layout = layout

    def forward(self, x):
        return F.broadcast_conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                  self.groups, self.layout, relu=self.relu)


class GroupedConv2d(_ConvBase):
    """nn.Conv2d's function on batchconv's kernels: x (N, Cin, H, W) -> (N, Cout, H', W')."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, relu=False):
        super().__init__(2, in_channels, out_channels, kernel_size, 1, stride, padding, dilation, groups, bias,
                         False, relu)

    def forward(self, x):
        return F.grouped_conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups,
                                relu=self.relu)


class GroupedConv1d(_ConvBase):
    """nn.Conv1d's function: x (N, Cin, W) -> (N, Cout, W')."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, relu=False):
        super().__init__(1, in_channels, out_channels, kernel_size, 1, stride, padding, dilation, groups, bias,
                         False, relu)

    def forward(self, x):
        return F.grouped_conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups,
                                relu=self.relu)


class BatchedLinear(nn.Module):
    """B linear layers: x (B, N, in_features) or shared (N, in_features) -> (B, N, out_features).

    weight is (B, in_features, out_features) (bmm's orientation, not nn.Linear's).
    """

    def __init__(self, in_features, out_features, batch, bias=True):
        super().__init__()
        self.in_features, self.out_features, self.batch = in_features, out_features, batch
        self.weight = nn.Parameter(torch.empty(batch, in_features, out_features))
        self.bias = nn.Parameter(torch.empty(batch, out_features)) if bias else None
        bound = 1 / math.sqrt(in_features)
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.batched_linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, batch={self.batch}, bias={self.bias is not None}"
