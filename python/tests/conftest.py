import os
import sys

import pytest
import torch

# The package is assembled in <build>/python; the ctest sets PYTHONPATH to it.
import batchconv  # noqa: F401  (fails loudly, never skips, when the package is missing)


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    yield
