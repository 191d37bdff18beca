"""The project deploys to scrapyd: the egg scrapyd-deploy builds runs an audit, schemas included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite

ROOT = Path(__file__).parents[2]

RUNNER = """
import sys, warnings
warnings.simplefilter("ignore")
from scrapyd.runner import activate_egg
activate_egg(sys.argv[1])
import sitemapaudit, sitemapaudit.validation.schemas as schemas
assert ".egg" in sitemapaudit.__file__, sitemapaudit.__file__
print("module:", sitemapaudit.__file__, file=sys.stderr)
from scrapy.cmdline import execute
execute(["scrapy", "crawl", "audit", *sys.argv[2:]])
"""


def build_egg(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "reports",
            "tests",
            "bench",
            "*.egg-info",
            "build",
            "dist",
            "__pycache__",
        ),
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "bdist_egg", "-d", str(tmp_path / "eggs")],
        cwd=source,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (egg,) = (tmp_path / "eggs").glob("*.egg")
    return egg


def test_the_egg_runs_an_audit_with_its_schemas(tmp_path: Path) -> None:
    pytest.importorskip("scrapyd")
    egg = build_egg(tmp_path)
    workdir = tmp_path / "scrapyd-job"
    workdir.mkdir()
    site = TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/a", "2024-5-1")), content_type=XML),
            "/a": Page(body="<html><head></head></html>"),
        }
    )
    env = {k: v for k, v in os.environ.items() if k not in ("SCRAPY_SETTINGS_MODULE", "PYTHONPATH")}
    with site:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                RUNNER,
                str(egg),
                "-a",
                f"domain={site.base}",
                "-O",
                "out.jsonl",
                "-s",
                "DOWNLOAD_DELAY=0",
                "-s",
                "AUTOTHROTTLE_ENABLED=0",
            ],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert ".egg" in done.stderr
    records = [json.loads(line) for line in (workdir / "out.jsonl").read_text().splitlines()]
    sitemap = next(r for r in records if r["record"] == "sitemap")
    # The XSD check ran from the schemas inside the egg: the bad lastmod breaks the schema.
    assert sitemap["issues"] == ["schema_invalid"]
    assert records[-1]["record"] == "summary"
