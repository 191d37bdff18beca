"""One audit shared by several processes through Redis (``SITEMAPAUDIT_DISTRIBUTED``).

Every worker runs the same ``scrapy crawl audit`` and joins the audit of the same origin on
the same Redis. What they share:

- Scrapy's request queue and duplicate filter, from scrapy-redis (:mod:`.scheduler`);
- the URL inventory: listings, lastmod, the sitemaps that list each URL, and each URL's
  outcome (:mod:`.inventory`);
- the sitemap tree, discovery and robots.txt, hreflang alternates, the worker heartbeats and
  who writes the report (:mod:`.state`);
- one pace per host for the whole cluster (:mod:`.ratelimit`).

A worker that stops before the audit is complete hands back the URLs it held as it leaves; one
that stops heartbeating (killed) is gone, and once the others have nothing left to do, whatever
it held is queued again (:mod:`.worker`). When every URL has its outcome, one worker (the first
to claim it) builds every record from the shared state and writes the whole report.
"""
