"""Fixtures of the hostile-input tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.support import Tripwire


@pytest.fixture
def tripwire(tmp_path: Path) -> Iterator[Tripwire]:
    """A named pipe in ``tmp_path`` that counts every attempt to open it for reading."""
    wire = Tripwire(tmp_path)
    try:
        yield wire
    finally:
        wire.close()
