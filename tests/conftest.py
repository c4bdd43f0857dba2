import pathlib

import pytest

from harnesskit.models import block_real_models

block_real_models()

SHARED = pathlib.Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture
def shared_datasets() -> pathlib.Path:
    """The read-only public datasets beside the checkout; skip when absent (a plain clone)."""
    path = SHARED / "datasets"
    if not path.is_dir():
        pytest.skip(f"../shared/datasets not found at {path}: these tests need the shared data")
    return path
