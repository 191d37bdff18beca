"""With JOBDIR, Scrapy's scheduler keeps no request on disk: the audit resumes from its own
inventory, and a request file left by a killed run would be read back in place of new ones."""

from __future__ import annotations

from pathlib import Path

from scrapy import Request, Spider
from scrapy.core.scheduler import Scheduler
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from sitemapaudit import settings as project_settings


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_no_request_is_written_to_the_jobdir(tmp_path: Path) -> None:
    settings = Settings()
    settings.setmodule(project_settings, priority="project")
    settings.set("JOBDIR", str(tmp_path / "job"))
    # The default priority queue needs a running engine; which queue classes take the
    # requests below it is the same either way.
    settings.set("SCHEDULER_PRIORITY_QUEUE", "scrapy.pqueues.ScrapyPriorityQueue")
    crawler = get_crawler(Spider, settings_dict=dict(settings))
    spider = Spider("audit")
    crawler.spider = spider
    scheduler = Scheduler.from_crawler(crawler)
    scheduler.open(spider)
    for i in range(3):
        start = Request(
            f"http://127.0.0.1/p/{i}", dont_filter=True, meta={"is_start_request": True}
        )
        assert scheduler.enqueue_request(start)
        assert scheduler.enqueue_request(Request(f"http://127.0.0.1/q/{i}", dont_filter=True))
    queue_dir = tmp_path / "job" / "requests.queue"
    try:
        assert queue_dir.is_dir()  # the scheduler did open its "disk" queues there
        assert _files(queue_dir) == []
        assert scheduler.next_request() is not None
    finally:
        scheduler.close("finished")
