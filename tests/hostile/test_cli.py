"""``scrapy crawl audit`` against a hostile site, as a user runs it: no traceback, a full report."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hostile.support import (
    NS,
    XML,
    Tripwire,
    corrupt_gzip,
    fixture,
    gzip_bomb,
    sitemapindex,
    urlset,
)
from tests.support.server import Page, TestSite

ROOT = Path(__file__).parents[2]
HTML = "<!DOCTYPE html><html><head><title>t</title></head><body>ok</body></html>"


def crawl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "sitemapaudit.settings", "PYTHONPATH": str(ROOT)}
    settings = {
        "DOWNLOAD_DELAY": "0",
        "AUTOTHROTTLE_ENABLED": "0",
        "CONCURRENT_REQUESTS_PER_DOMAIN": "16",
        "DOWNLOAD_TIMEOUT": "2",
        "RETRY_TIMES": "1",
        "SITEMAPAUDIT_SITEMAP_READ_LIMIT": str(2 * 1024 * 1024),
    }
    options = [part for name, value in settings.items() for part in ("-s", f"{name}={value}")]
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "audit", *args, *options],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_a_hostile_site_is_audited_without_a_traceback(tmp_path: Path, tripwire: Tripwire) -> None:
    site = TestSite({})
    base = site.base
    cut = gzip.compress(urlset(f"{base}/cut-{i}" for i in range(300)), mtime=0)
    documents = {
        "/index.xml": Page(
            body=sitemapindex(
                [
                    f"{base}/{name}"
                    for name in (
                        "xxe.xml",
                        "laughs.xml",
                        "bomb.xml.gz",
                        "cut.xml.gz",
                        "corrupt.xml.gz",
                        "nested.xml",
                        "urls.xml",
                        "index.xml",
                        "gone.xml",
                    )
                ]
                + [tripwire.uri, "http://other.invalid/s.xml"]
            ),
            content_type=XML,
        ),
        "/xxe.xml": Page(body=fixture("xxe_entity.xml", target=tripwire.uri), content_type=XML),
        "/laughs.xml": Page(body=fixture("billion_laughs.xml"), content_type=XML),
        "/bomb.xml.gz": Page(body=gzip_bomb(64), content_type="application/gzip"),
        "/cut.xml.gz": Page(body=cut[: len(cut) // 2], content_type="application/gzip"),
        "/corrupt.xml.gz": Page(body=corrupt_gzip(urlset([f"{base}/c{i}" for i in range(300)]))),
        "/nested.xml": Page(
            body=f'<urlset xmlns="{NS}">' + "<a>" * 10_000 + "</a>" * 10_000 + "</urlset>",
            content_type=XML,
        ),
        "/urls.xml": Page(
            body=urlset(
                [
                    "javascript:alert(1)",
                    tripwire.uri,
                    "relative",
                    "{base}/drop",
                    "{base}/ok",
                    "{base}/" + "x" * 100_000,
                    "http://user:pw@127.0.0.1/",
                ]
            ),
            content_type=XML,
        ),
        "/gone.xml": Page(status=500),
    }
    site.routes.update(
        {
            "/robots.txt": Page(body="Sitemap: {base}/index.xml\n", content_type="text/plain"),
            **documents,
            "/drop": Page(drop=True),
            "/ok": Page(body=HTML),
            "/page": Page(body=HTML),
            "/after": Page(body=HTML),
        }
    )
    with site:
        done = crawl("-a", f"domain={base}", "-O", "report.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert " ERROR: " not in done.stderr
    assert tripwire.opened == 0
    records = [json.loads(line) for line in (tmp_path / "report.jsonl").read_text().splitlines()]
    summary = records[-1]
    assert summary["record"] == "summary"
    urls = [r["url"] for r in records if r["record"] == "url"]
    assert len(urls) == len(set(urls)) == summary["urls_listed"]
    sitemaps = {
        r["url"].replace(base, ""): r["issues"] for r in records if r["record"] == "sitemap"
    }
    assert "xml_entities" in sitemaps["/xxe.xml"]
    assert "xml_entities" in sitemaps["/laughs.xml"]
    assert "too_large" in sitemaps["/bomb.xml.gz"]
    assert "gzip_invalid" in sitemaps["/cut.xml.gz"]
    assert "gzip_invalid" in sitemaps["/corrupt.xml.gz"]
    assert "xml_malformed" in sitemaps["/nested.xml"]
    assert sitemaps["/gone.xml"] == ["http_error"]
    assert {"index_cycle", "invalid_url"} <= set(sitemaps["/index.xml"])
    assert sitemaps["http://other.invalid/s.xml"] == ["off_host"]
    by_url = {r["url"].replace(base, ""): r["issues"] for r in records if r["record"] == "url"}
    assert by_url["/drop"] == ["fetch_failed"]
    assert by_url["/ok"] == []
    assert by_url[tripwire.uri] == ["invalid_url"]
