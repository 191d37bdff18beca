"""Where the default report goes: its directory from the settings, and its file reserved under
a name no other report has."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

logger = logging.getLogger(__name__)


def default_report_dir(settings: BaseSettings) -> str:
    """The directory of the default report, or ``""`` when the audit writes none.

    The report goes to ``SITEMAPAUDIT_REPORT_DIR`` when no feed is given (``-o``, ``-O``,
    ``FEEDS``), and also beside the feeds given when that setting is itself given on the
    command line (``-s``): scrapyd passes settings that way (``-d setting=``), and when its
    ``items_dir`` is set it gives every job a ``FEEDS`` setting of its own, which would
    otherwise take the report from the directory asked for."""
    report_dir = str(settings.get("SITEMAPAUDIT_REPORT_DIR", "reports") or "")
    given = (settings.getpriority("SITEMAPAUDIT_REPORT_DIR") or 0) >= SETTINGS_PRIORITIES["cmdline"]
    if settings.getdict("FEEDS") and not given:
        return ""
    return report_dir


def reserve_report(template: str, name: str) -> str:
    """Create the default report file empty, under ``name`` or ``name-2``, ``name-3``...: two
    audits of one site started in the same second (cron), or two workers of a distributed
    audit, each get a file of their own (created exclusively: two processes choosing at once
    cannot both take one name)."""
    for number in range(1, 1000):
        candidate = name if number == 1 else f"{name}-{number}"
        path = Path(template % {"report_name": candidate})
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        return candidate
    return name


def drop_reserved(path: Path) -> None:
    """Remove the default report a distributed worker reserved but did not write."""
    try:
        if path.stat().st_size == 0:
            path.unlink()
    except OSError as exc:
        logger.debug("the empty report %s could not be removed: %s", path, exc)
