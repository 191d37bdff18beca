"""Where an audit keeps its work files (the inventory, hreflang alternates)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sitemapaudit.config import AuditConfig


def configured_work_dir(config: AuditConfig, jobdir: str | None) -> str:
    """Where the audit keeps its inventory: SITEMAPAUDIT_WORK_DIR, else JOBDIR/sitemapaudit
    (a resumable audit); empty for a temporary directory."""
    return config.work_dir or (str(Path(jobdir) / "sitemapaudit") if jobdir else "")


def work_dir(configured: str) -> tuple[str, bool]:
    """The work directory to use, made if need be, and whether it is a temporary one of the
    run's own (``configured`` is empty), to remove as the run closes."""
    if configured:
        Path(configured).mkdir(parents=True, exist_ok=True)
        return configured, False
    return tempfile.mkdtemp(prefix="sitemapaudit-"), True
