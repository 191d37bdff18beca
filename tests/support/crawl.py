"""Running a real audit crawl in the test process and reading its report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from scrapy.utils.test import get_crawler

from sitemapaudit import settings as project_module
from sitemapaudit.spiders.audit import AuditSpider

FAST = {
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
    "RETRY_TIMES": 1,
    "DOWNLOAD_TIMEOUT": 5,
    "LOG_LEVEL": "WARNING",
    "SITEMAPAUDIT_HISTORY_PATH": "",
}


STUCK_AFTER_SECONDS = 60


def project_settings(**overrides: Any) -> dict[str, Any]:
    values = {key: getattr(project_module, key) for key in dir(project_module) if key.isupper()}
    values.update(FAST)
    values.update(overrides)
    return values


async def run_audit(
    domain: str, report: Path, *, settings: dict[str, Any] | None = None, **spider_args: str
) -> tuple[list[dict[str, Any]], Any]:
    """Audit ``domain`` with the project's settings (delays off); returns (records, crawler)."""
    values = project_settings(**(settings or {}))
    values["FEEDS"] = {str(report): {"format": "jsonlines", "overwrite": True}}
    # A crawl that never ends fails its test (the summary says it is incomplete) instead of
    # hanging the suite.
    values.setdefault("CLOSESPIDER_TIMEOUT", STUCK_AFTER_SECONDS)
    crawler = get_crawler(AuditSpider, values)
    await crawler.crawl_async(domain=domain, **spider_args)
    lines = report.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines], crawler


def by_record(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["record"] == kind]


ROOT = Path(__file__).parents[2]


def start_audit_process(base: str, report: Path, **settings: object) -> subprocess.Popen[bytes]:
    """``scrapy crawl audit`` of ``base`` in a subprocess of the checkout (delays off, log at
    WARNING, standard error piped), with ``settings`` as ``-s`` options."""
    options = {"DOWNLOAD_DELAY": 0, "AUTOTHROTTLE_ENABLED": 0, **settings}
    command = [sys.executable, "-m", "scrapy", "crawl", "audit", "-a", f"domain={base}"]
    command += ["-O", str(report), "-L", "WARNING"]
    for name, value in options.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
