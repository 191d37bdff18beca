"""How many page requests ``start()`` hands the engine at a time: a batch, or one when the
host's requests are paced, and none while a paced host's slot already holds a backlog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemapaudit.crawl.run import PageAction

if TYPE_CHECKING:
    from sitemapaudit.crawl.run import AuditRun

# Page requests made at a time (see more_actions).
REQUEST_BATCH = 16
# Requests left waiting in a paced host's downloader slot (see paced_backlog).
PACED_BACKLOG = 2


def paced(engine: Any, crawl_delay: bool) -> bool:
    """Whether requests leave a host's downloader slot one per delay: robots.txt's
    Crawl-delay (``crawl_delay``, before the host's slot has it: see CrawlDelayMiddleware), the
    base ``DOWNLOAD_DELAY`` or AutoThrottle's (each slot's ``delay``). Scrapy sends one request
    of such a slot per delay, whatever its concurrency."""
    return crawl_delay or any(slot.delay > 0 for slot in engine.downloader.slots.values())


def paced_backlog(engine: Any, crawl_delay: bool) -> bool:
    """Whether a paced host's downloader slot already holds ``PACED_BACKLOG`` requests
    waiting for their turn. More would not go out any sooner (one leaves per delay), but a
    stop (Ctrl-C) would still send every one of them, one per delay, before the audit
    closes: the downloader takes as many as its concurrency. An unpaced slot sends its
    queue as fast as the host answers, so it is not held back."""
    return any(
        len(slot.queue) >= PACED_BACKLOG and (crawl_delay or slot.delay > 0)
        for slot in engine.downloader.slots.values()
    )


def more_actions(
    run: AuditRun, first: PageAction, engine: Any, crawl_delay: bool
) -> tuple[list[PageAction], Any]:
    """``first`` and the URLs handed out right after it, up to ``REQUEST_BATCH`` of them
    (one when requests are paced: see ``paced_backlog``), and the first other action met
    on the way, if any. Their requests are made one after another, as pages are read (see
    ``PageQueue``); the engine takes them as it has room."""
    actions = [first]
    batch = 1 if paced(engine, crawl_delay) else REQUEST_BATCH
    while len(actions) < batch:
        action = run.next_action()
        if not isinstance(action, PageAction):
            return actions, action
        actions.append(action)
    return actions, None
