import os
import sys

import pytest
import torch

# The package is assembled in <build>/python; the ctest sets PYTHONPATH to it.
import batchconv  # noqa: F401  (fails loudly, never skips, when the package is missing)
from batchconv import _native

# BATCHCONV_TEST_VARIANT=avx2|baseline: this process runs that multi-target
# variant of the kernels (restricted before any kernel call; ctest sets it).
if os.environ.get("BATCHCONV_TEST_VARIANT"):
    _native._restrict_variant(os.environ["BATCHCONV_TEST_VARIANT"])


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    yield
