"""The output cache: where the package's large CPU outputs come from.

Conv outputs and input gradients of 4 MiB and more are not torch.empty's but
blocks of this cache (the CPU counterpart of PyTorch's CUDA caching
allocator). Memory a kernel writes for the first time costs a page fault per
page inside the kernel, and PyTorch's CPU allocator returns large blocks to
the system, so a training loop would pay for fresh pages on every step (a
fifth of a MAML layer's forward + backward here). A block whose last tensor
is gone stays mapped in the cache, and the next output of about its size
reuses it.

The cache keeps at most `limit()` bytes unused (default a quarter of
physical memory, or the BATCHCONV_OUTPUT_CACHE_BYTES environment variable);
`set_limit(0)` turns caching off, `empty()` returns every unused block to
the system now. Tensors from the cache are ordinary CPU tensors, except that
their storage cannot be resized (`resize_` to a larger size raises).
"""
from . import _native


def limit():
    """Bytes of unused blocks the cache keeps at most."""
    return _native.pool_limit()


def set_limit(nbytes):
    """Sets the limit (0: no caching); unused blocks above it are returned now."""
    if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
        raise ValueError(f"set_limit: nbytes must be a non-negative int, got {nbytes!r}")
    _native.pool_set_limit(nbytes)


def cached():
    """Bytes held unused by the cache now."""
    return _native.pool_cached()


def empty():
    """Returns every unused block to the system."""
    _native.pool_empty()
