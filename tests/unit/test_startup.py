"""What every ``scrapy`` command loads: not the libraries only some runs need."""

from __future__ import annotations

import json
import subprocess
import sys

from sitemapaudit.validation.document import _START_TAG, scan_unescaped

# Scrapy imports every module of COMMANDS_MODULE to list the commands; a crawl loads the
# spider and every component the settings name. Whatever these import, every command or
# every crawl pays for at start.
_CODE = """
import importlib, json, sys
from sitemapaudit import settings
names = ["sitemapaudit.commands.crawl", "sitemapaudit.commands.validate",
         "sitemapaudit.commands.audit-report", "sitemapaudit.commands.audit-diff",
         "sitemapaudit.spiders.audit"]
for setting in ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "EXTENSIONS", "ITEM_PIPELINES"):
    names += [path.rpartition(".")[0] for path in getattr(settings, setting, {})
              if path.startswith("sitemapaudit.")]
for name in names:
    importlib.import_module(name)
heavy = sorted(m for m in ("openpyxl", "redis") if m in sys.modules)
print(json.dumps([sorted(set(names)), heavy]))
"""


def test_commands_and_crawls_load_neither_openpyxl_nor_redis() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CODE], capture_output=True, text=True, check=True
    ).stdout
    loaded, heavy = json.loads(out)
    assert "sitemapaudit.distributed.worker" in loaded
    assert heavy == []


def test_xml_name_patterns_compile_when_first_needed() -> None:
    assert _START_TAG.compiled.match('<url a="1">') is not None
    problems = scan_unescaped("<urlset><url><loc>https://e.com/?a=1&b=2</loc></url></urlset>")
    assert [p.code for p in problems] == ["unescaped_characters"]
