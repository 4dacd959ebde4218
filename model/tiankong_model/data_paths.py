"""Where the raw data lives (the Python side of model/tooling/data-paths.mjs): TIANKONG_DATA, or
../shared/data beside the repository. Only work that needs the full data reads it."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """The raw data directory (it may not exist)."""
    return Path(os.environ.get("TIANKONG_DATA", REPO_ROOT.parent / "shared" / "data")).resolve()


def data_path(relative: str) -> Path:
    """A path inside the raw data directory, e.g. data_path("corpus")."""
    return data_dir() / relative


def fixture_path(relative: str) -> Path:
    """A path inside the small committed copy of the raw data (tests/fixtures/data)."""
    return REPO_ROOT / "tests" / "fixtures" / "data" / relative
