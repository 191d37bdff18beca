"""What every ``scrapy`` command loads: not the libraries only some runs need."""

from __future__ import annotations

import json
import subprocess
import sys

from sitemapaudit.validation.document import _START_TAG, scan_unescaped

# Scrapy imports every module of COMMANDS_MODULE to list the commands, and the crawl command
# loads the spider: whatever these import, every command pays for at start.
_MODULES = [
    "sitemapaudit.commands.crawl",
    "sitemapaudit.commands.validate",
    "sitemapaudit.spiders.audit",
    "sitemapaudit.report.exporters",
    "sitemapaudit.report.cli",
    "sitemapaudit.history.cli",
    "sitemapaudit.settings",
]


def test_commands_load_neither_openpyxl_nor_redis() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for name in {_MODULES!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in ('openpyxl', 'redis') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []


def test_xml_name_patterns_compile_when_first_needed() -> None:
    assert _START_TAG.compiled.match('<url a="1">') is not None
    problems = scan_unescaped("<urlset><url><loc>https://e.com/?a=1&b=2</loc></url></urlset>")
    assert [p.code for p in problems] == ["unescaped_characters"]
