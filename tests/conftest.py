"""Shared fixtures. Reference data lives outside the repository (``../shared/data``
beside the checkout, or ``$NLID_SHARED_DATA``); tests that need it skip without it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from nlid_core.examples import make_example

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    env = os.environ.get("NLID_SHARED_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if cand.is_dir() else None


@pytest.fixture(scope="session")
def seed_record():
    """The seed-000 benchmark record (noise seed 42)."""
    return make_example("seed")


@pytest.fixture(scope="session")
def silverbox_csv() -> Path:
    d = shared_data_dir()
    path = d / "silverbox" / "SNLS80mV.csv" if d else None
    if path is None or not path.is_file():
        pytest.skip("Silverbox data not available (../shared/data/silverbox)")
    return path


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
