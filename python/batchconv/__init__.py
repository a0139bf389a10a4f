"""batchconv for PyTorch: batched-weight, broadcast-input and grouped convolutions and
batched linear layers on batchconv's Halide kernels, differentiable to any order.

    import batchconv
    y = batchconv.batched_conv2d(x, w, bias, padding=1)   # x (B, N, C, H, W), w (B, Cout, C, 3, 3)

See batchconv.functional for the ops and batchconv.modules for nn.Module wrappers;
batchconv.cache holds the large CPU outputs between calls.
"""
from . import _native, cache
from .functional import (batched_conv1d, batched_conv2d, batched_linear, broadcast_conv1d, broadcast_conv2d,
                         grouped_conv1d, grouped_conv2d)
from .modules import (BatchedConv1d, BatchedConv2d, BatchedLinear, BroadcastConv1d, BroadcastConv2d,
                      GroupedConv1d, GroupedConv2d)

Error = _native.Error  # a ValueError: the runtime's own validation


def selected_target():
    """The instruction set the kernels run with on this machine."""
    return _native.selected_target()


__all__ = ["batched_conv1d", "batched_conv2d", "batched_linear", "broadcast_conv1d", "broadcast_conv2d",
           "grouped_conv1d", "grouped_conv2d", "BatchedConv1d", "BatchedConv2d", "BatchedLinear",
           "BroadcastConv1d", "BroadcastConv2d", "GroupedConv1d", "GroupedConv2d", "Error", "selected_target", "cache"]
