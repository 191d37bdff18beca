"""Settings for the whole suite."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests check behaviour, not speed: on a shared, loaded machine one example can take
# longer than Hypothesis's default 200 ms deadline without anything being wrong. Timing belongs
# to bench/, so no test here fails on time alone.
settings.register_profile(
    "sitemapaudit", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("sitemapaudit")


# Every test keeps what it writes in its own temporary directory: an audit whose history path
# is left at its default would add runs to the history of whoever runs the suite.
_DEFAULT_HISTORY = Path("reports") / "history.sqlite3"


@pytest.fixture(autouse=True, scope="session")
def _no_history_in_the_working_directory() -> Iterator[None]:
    before = _DEFAULT_HISTORY.exists() and _DEFAULT_HISTORY.stat().st_mtime_ns
    yield
    after = _DEFAULT_HISTORY.exists() and _DEFAULT_HISTORY.stat().st_mtime_ns
    assert after == before, f"a test wrote {_DEFAULT_HISTORY.resolve()}"
