"""An audit's process collects cyclic garbage less often, with its start-up objects frozen."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit.spiders.audit import GC_THRESHOLDS
from tests.support.crawl import run_audit
from tests.support.golden_site import page
from tests.support.server import TestSite

_CODE = """
import gc, json
from sitemapaudit.spiders import audit
before = gc.get_threshold()
audit._tune_collector()
frozen = gc.get_freeze_count()
audit._tune_collector()
print(json.dumps([before, gc.get_threshold(), frozen > 0, gc.get_freeze_count() == frozen]))
"""


def test_the_collector_is_tuned_once_per_process() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CODE], capture_output=True, text=True, check=True
    ).stdout
    before, after, frozen, once = json.loads(out)
    assert tuple(before) != GC_THRESHOLDS  # Python's defaults until an audit starts
    assert tuple(after) == GC_THRESHOLDS
    assert frozen
    assert once


@deferred_f_from_coro_f
async def test_an_audit_tunes_the_collector(tmp_path: Path) -> None:
    with TestSite({"/": page()}) as site:
        await run_audit(site.base, tmp_path / "report.jsonl")
    assert gc.get_threshold() == GC_THRESHOLDS
