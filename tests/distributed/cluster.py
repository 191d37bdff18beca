"""Running ``scrapy crawl audit`` worker processes, as users do, and reading their reports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]

QUICK = {
    "AUTOTHROTTLE_ENABLED": "0",
    "DOWNLOAD_DELAY": "0",
    "SITEMAPAUDIT_HISTORY_PATH": "",
    "SITEMAPAUDIT_PROGRESS_INTERVAL": "0",
    "DOWNLOAD_TIMEOUT": "10",
    "LOG_LEVEL": "INFO",
}


def start_worker(
    base: str,
    report: Path | None,
    settings: dict[str, str],
    log: Path,
    *,
    started_at: str | None = None,
    **arguments: str,
) -> subprocess.Popen[bytes]:
    """A worker writing to ``report`` (``-O``), or without ``-O`` when ``None``; with
    ``started_at``, its audit starts then as its spider sees it (see ``frozen_clock``)."""
    scrapy = ["scrapy"] if started_at is None else ["tests.distributed.frozen_clock", started_at]
    command = [sys.executable, "-m", *scrapy, "crawl", "audit", "-a", f"domain={base}"]
    for name, value in arguments.items():
        command += ["-a", f"{name}={value}"]
    for name, value in {**QUICK, **settings}.items():
        command += ["-s", f"{name}={value}"]
    if report is not None:
        command += ["-O", str(report)]
    env = {**os.environ, "PYTHONWARNINGS": "error::DeprecationWarning"}
    with log.open("wb") as out:
        return subprocess.Popen(command, cwd=PROJECT, stdout=out, stderr=subprocess.STDOUT, env=env)


def run_workers(
    base: str,
    directory: Path,
    count: int,
    settings: dict[str, str],
    timeout: float = 180,
    **arguments: str,
) -> list[Path]:
    """Run ``count`` workers to the end; returns the reports that were written."""
    workers = [
        start_worker(
            base,
            directory / f"part{i}.jsonl",
            settings,
            directory / f"worker{i}.log",
            **arguments,
        )
        for i in range(count)
    ]
    for worker in workers:
        assert worker.wait(timeout=timeout) == 0, logs(directory)
    return [p for p in sorted(directory.glob("part*.jsonl")) if p.stat().st_size]


def logs(directory: Path) -> str:
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in directory.glob("*.log"))


def stat(log: Path, name: str) -> int:
    found = re.search(rf"'{re.escape(name)}': (\d+)", log.read_text(errors="replace"))
    return int(found.group(1)) if found else 0


def normalized(report: Path, base: str) -> list[dict[str, Any]]:
    """The records without their times, the site's address replaced, in a stable order."""
    records = []
    for line in report.read_text(encoding="utf-8").splitlines():
        record = json.loads(line.replace(base, "BASE"))
        for key in ("checked_at", "started_at", "finished_at", "origin"):
            record.pop(key, None)
        records.append(record)
    return sorted(records, key=lambda r: (r["record"], r.get("url", "")))
