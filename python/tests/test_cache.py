"""The output cache (batchconv.cache): large outputs come from it, are correct and
independent, go back to it when their last tensor is gone, are reused, and
the limit bounds what it keeps."""
import pytest
import torch
import torch.nn.functional as F

import batchconv
from batchconv import cache

# Output (2, 4, 8, 128, 128) float32: exactly the 4 MiB from which outputs are cached.
SHAPE_X, SHAPE_W = (2, 4, 8, 128, 128), (2, 8, 8, 3, 3)
OUT_BYTES = 2 * 4 * 8 * 128 * 128 * 4


@pytest.fixture(autouse=True)
def _fresh_cache():
    old = cache.limit()
    cache.empty()
    yield
    cache.set_limit(old)
    cache.empty()


def reference(x, w):
    return torch.stack([F.conv2d(x[b].double(), w[b].double(), padding=1) for b in range(x.shape[0])]).float()


def test_large_outputs_are_cached_correct_and_reused():
    torch.manual_seed(1)
    x, w = torch.randn(SHAPE_X), torch.randn(SHAPE_W)
    y = batchconv.batched_conv2d(x, w, padding=1)
    assert y.numel() * 4 >= batchconv._native.pool_min_bytes
    assert cache.cached() == 0
    first = y.data_ptr()
    del y
    assert cache.cached() >= OUT_BYTES  # the block came back
    x2, w2 = torch.randn(SHAPE_X), torch.randn(SHAPE_W)
    y2 = batchconv.batched_conv2d(x2, w2, padding=1)
    assert y2.data_ptr() == first and cache.cached() == 0  # and was taken again
    want = reference(x2, w2)
    assert ((y2 - want).abs().max() / want.abs().max()).item() < 1e-5


def test_live_outputs_never_share_memory():
    torch.manual_seed(2)
    x, w = torch.randn(SHAPE_X), torch.randn(SHAPE_W)
    ys = [batchconv.batched_conv2d(x * (k + 1), w, padding=1) for k in range(3)]
    assert len({y.data_ptr() for y in ys}) == 3
    for k, y in enumerate(ys):
        assert torch.allclose(y, ys[0] * (k + 1), rtol=1e-5, atol=1e-4)


def test_output_outlives_a_view_and_a_saved_graph():
    torch.manual_seed(3)
    x = torch.randn(SHAPE_X, requires_grad=True)
    w = torch.randn(SHAPE_W, requires_grad=True)
    y = batchconv.batched_conv2d(x, w, padding=1)
    v = y[1, 2]  # a view keeps the block
    want = v.detach().clone()
    del y
    assert cache.cached() == 0
    torch.randn(SHAPE_X)  # other allocations do not touch it
    assert torch.equal(v.detach(), want)
    (g,) = torch.autograd.grad(v.sum(), (x,))
    assert g.shape == x.shape


def test_limit_bounds_what_is_kept():
    torch.manual_seed(4)
    x, w = torch.randn(SHAPE_X), torch.randn(SHAPE_W)
    cache.set_limit(0)
    y = batchconv.batched_conv2d(x, w, padding=1)
    del y
    assert cache.cached() == 0
    cache.set_limit(1 << 30)
    ys = [batchconv.batched_conv2d(x, w, padding=1) for _ in range(2)]
    del ys
    assert cache.cached() >= 2 * OUT_BYTES
    cache.set_limit(OUT_BYTES + (4 << 20))  # room for one block: the rest is returned now
    assert 0 < cache.cached() <= OUT_BYTES + (4 << 20)
    cache.empty()
    assert cache.cached() == 0


def test_small_outputs_are_torch_empty():
    y = batchconv.batched_conv2d(torch.randn(2, 2, 3, 8, 8), torch.randn(2, 4, 3, 3, 3), padding=1)
    del y
    assert cache.cached() == 0


def test_cached_storage_cannot_grow():
    y = batchconv.batched_conv2d(torch.randn(SHAPE_X), torch.randn(SHAPE_W), padding=1)
    with pytest.raises(RuntimeError):
        y.resize_(y.numel() * 2)


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True, None])
def test_bad_limit_is_a_value_error(bad):
    with pytest.raises(ValueError, match="non-negative int"):
        cache.set_limit(bad)
