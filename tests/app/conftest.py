"""Fixtures shared by the dashboard's AppTest modules."""

from __future__ import annotations

import pytest


@pytest.fixture()
def db_url(tmp_path, monkeypatch) -> str:
    """A study database of its own for the test, local mode (no sign-in), jobs run in the test process."""
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv("NLID_DATABASE_URL", url)
    monkeypatch.delenv("NLID_AUTH_HEADER", raising=False)
    monkeypatch.delenv("NLID_LOCAL_USER", raising=False)
    monkeypatch.setenv("NLID_JOBS_INLINE", "1")  # jobs run in the test process (no forkserver)
    return url
