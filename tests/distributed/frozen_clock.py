"""``python -m tests.distributed.frozen_clock TIME ARGS...``: ``scrapy ARGS``, with every audit
started at ``TIME`` (ISO 8601, UTC) as its spider sees it: workers started "in the same second",
whenever they actually start."""

from __future__ import annotations

import sys
from datetime import datetime, tzinfo

from scrapy.cmdline import execute

from sitemapaudit.spiders import audit


class _Frozen(datetime):
    at: datetime

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
        return cls.at


if __name__ == "__main__":
    _Frozen.at = datetime.fromisoformat(sys.argv[1])
    audit.datetime = _Frozen  # type: ignore[misc]
    execute(["scrapy", *sys.argv[2:]])
