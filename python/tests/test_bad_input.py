"""Bad input raises TypeError/ValueError naming the argument (never a crash)."""
import pytest
import torch

import batchconv

x5 = torch.randn(2, 3, 4, 8, 8)
w5 = torch.randn(2, 6, 4, 3, 3)


def _raises(exc, match, fn, *a, **k):
    with pytest.raises(exc, match=match):
        fn(*a, **k)


CASES = [
    # (exception, regex, function, args, kwargs)
    (ValueError, r"x has rank 4", batchconv.batched_conv2d, (torch.randn(3, 4, 8, 8), w5), {}),
    (ValueError, r"w has rank 4", batchconv.batched_conv2d, (x5, torch.randn(6, 4, 3, 3)), {}),
    (ValueError, r"B=2 filter banks: expected \(2, 6, 4, 3, 3\)", batchconv.batched_conv2d,
     (x5, torch.randn(3, 6, 4, 3, 3)), {}),
    (ValueError, r"groups=3 does not divide the 4 input channels", batchconv.batched_conv2d, (x5, w5),
     {"groups": 3}),
    (ValueError, r"Cin/groups = 2", batchconv.batched_conv2d, (x5, w5), {"groups": 2}),
    (ValueError, r"groups=0 must be >= 1", batchconv.grouped_conv2d,
     (torch.randn(1, 4, 5, 5), torch.randn(4, 4, 3, 3)), {"groups": 0}),
    (TypeError, r"x has dtype torch.float64", batchconv.batched_conv2d, (x5.double(), w5), {}),
    (TypeError, r"w has dtype torch.int64", batchconv.batched_conv2d, (x5, w5.long()), {}),
    (TypeError, r"x has dtype torch.int32", batchconv.batched_linear,
     (torch.ones(2, 3, 4, dtype=torch.int32), torch.randn(2, 4, 5)), {}),
    (TypeError, r"x must be a torch.Tensor", batchconv.grouped_conv2d, ([1.0], torch.randn(1, 1, 1, 1)), {}),
    (TypeError, r"x is on meta", batchconv.batched_conv2d, (x5.to("meta"), w5), {}),
    (ValueError, r"different devices \(x on cpu, w on cpu, bias on meta\)", batchconv.batched_conv2d,
     (x5, w5, torch.zeros(2, 6, device="meta")), {}),
    (ValueError, r"bias has shape \(6,\) but w gives \(B, Cout\): expected \(2, 6\)",
     batchconv.batched_conv2d, (x5, w5, torch.zeros(6)), {}),
    (ValueError, r"the kernel \(3, 3\)", batchconv.batched_conv2d, (torch.randn(2, 3, 4, 2, 2), w5), {}),
    (ValueError, r"stride=0 must be >= 1", batchconv.batched_conv2d, (x5, w5), {"stride": 0}),
    (ValueError, r"padding=-1 must be >= 0", batchconv.batched_conv2d, (x5, w5), {"padding": -1}),
    (ValueError, r"padding='same' needs stride 1", batchconv.batched_conv2d, (x5, w5),
     {"padding": "same", "stride": 2}),
    (ValueError, r"dilation=\(1, 1, 1\) needs 2 entries", batchconv.batched_conv2d, (x5, w5),
     {"dilation": (1, 1, 1)}),
    (TypeError, r"stride must be an int", batchconv.batched_conv2d, (x5, w5), {"stride": 1.5}),
    (ValueError, r"layout='nhwc' must be 'concat' or 'batched'", batchconv.broadcast_conv2d,
     (torch.randn(3, 4, 8, 8), w5), {"layout": "nhwc"}),
    (ValueError, r"x has rank 5", batchconv.broadcast_conv2d, (x5, w5), {}),
    (TypeError, r"relu='yes' must be True or False", batchconv.batched_conv2d, (x5, w5), {"relu": "yes"}),
    (TypeError, r"GroupedConv2d: relu=1 must be True or False", batchconv.GroupedConv2d, (4, 4, 3), {"relu": 1}),
    (ValueError, r"zero size", batchconv.grouped_conv1d, (torch.randn(0, 4, 8), torch.randn(4, 4, 3)), {}),
    (ValueError, r"needs B=3 weight matrices", batchconv.batched_linear,
     (torch.randn(3, 5, 4), torch.randn(2, 4, 6)), {}),
    (ValueError, r"has K=4 features: expected \(2, 4, 6\)", batchconv.batched_linear,
     (torch.randn(2, 5, 4), torch.randn(2, 3, 6)), {}),
    (ValueError, r"bias has shape \(2, 5\)", batchconv.batched_linear,
     (torch.randn(2, 5, 4), torch.randn(2, 4, 6), torch.randn(2, 5)), {}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[1] for c in CASES])
def test_bad_input(case):
    exc, match, fn, args, kwargs = case
    _raises(exc, match, fn, *args, **kwargs)


def test_requires_grad_on_integer_tensor():
    # PyTorch itself refuses requires_grad on an integer tensor; an integer tensor
    # reaching batchconv is a TypeError naming it.
    with pytest.raises(RuntimeError, match="floating point"):
        torch.ones(3, dtype=torch.int64).requires_grad_()
    with pytest.raises(TypeError, match="x has dtype torch.int64"):
        batchconv.grouped_conv1d(torch.ones(1, 2, 5, dtype=torch.int64), torch.randn(2, 2, 3, requires_grad=True))


def test_runtime_errors_are_value_errors():
    from batchconv import _native
    assert issubclass(batchconv.Error, ValueError)
    with pytest.raises(ValueError, match="op: 'nope'"):
        _native.conv("nope", (0, [1], [1]), (0, [1], [1]), None, (0, [1], [1]), [1], [1], [0], [0], 1, "batched")
    # The runtime's own shape check (the Python checks bypassed): names w and the expected shape.
    x = torch.randn(2, 1, 3, 5, 5)
    w = torch.randn(3, 4, 3, 3, 3)
    y = torch.empty(2, 1, 4, 3, 3)
    from batchconv.autograd import view
    with pytest.raises(ValueError, match=r"batched_weight_conv: w has shape \(3, 4, 3, 3, 3\)"):
        _native.conv("batched", view(x), view(w), None, view(y), [1, 1], [1, 1], [0, 0], [0, 0], 1, "batched")


def test_cuda_tensors_are_refused_clearly():
    if torch.cuda.is_available():  # pragma: no cover - CPU machines here
        with pytest.raises(TypeError, match="CPU kernels only"):
            batchconv.batched_conv2d(x5.cuda(), w5.cuda())
    else:
        assert not torch.cuda.is_available()
