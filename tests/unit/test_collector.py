"""An audit's process collects cyclic garbage less often, with its start-up objects frozen;
``scrapy validate`` does the same while it validates files, and restores the collector."""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f

from sitemapaudit import settings as project_settings
from sitemapaudit.commands import validate as validate_command
from sitemapaudit.crawl.collector import GC_THRESHOLDS
from tests.support.crawl import run_audit
from tests.support.golden_site import page, url, urlset
from tests.support.server import TestSite

_CODE = """
import gc, json
from sitemapaudit.crawl.collector import tune_collector
before = gc.get_threshold()
tune_collector()
frozen = gc.get_freeze_count()
tune_collector()
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


def test_validating_files_collects_as_an_audit_does_and_restores_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(url("https://e.com/a", "2024-05-01")))
    seen: list[tuple[int, int, int]] = []
    real = validate_command.validate_files

    def spy(*args: Any, **kwargs: Any) -> Iterator[Any]:
        seen.append(gc.get_threshold())
        yield from real(*args, **kwargs)

    monkeypatch.setattr(validate_command, "validate_files", spy)
    command = validate_command.Command()
    command.settings = Settings()
    command.settings.setmodule(project_settings)
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        command.run([str(path)], argparse.Namespace(follow=False))
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*saved)
    assert seen == [GC_THRESHOLDS]
    assert command.exitcode == 0
    assert [json.loads(line)["record"] for line in capsys.readouterr().out.splitlines()] == [
        "sitemap",
        "url",
    ]
