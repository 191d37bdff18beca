"""Scrapy settings of the sitemapaudit project.

The ``SITEMAPAUDIT_*`` defaults live in :mod:`sitemapaudit.defaults`; this module sets Scrapy's
own settings to what an auditor needs (see the README for why each one is what it is).
"""

from sitemapaudit import __version__
from sitemapaudit.defaults import default_settings

BOT_NAME = "sitemapaudit"
SPIDER_MODULES = ["sitemapaudit.spiders"]
NEWSPIDER_MODULE = "sitemapaudit.spiders"
COMMANDS_MODULE = "sitemapaudit.commands"

globals().update(default_settings())

# A User-Agent that names the tool; robots.txt rules are evaluated for
# SITEMAPAUDIT_ROBOTS_USER_AGENT (Googlebot by default), not for this string.
USER_AGENT = f"Mozilla/5.0 (compatible; sitemapaudit/{__version__}; sitemap auditor)"

# Politeness: a production site is audited at a gentle pace by default.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0.5
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DOWNLOAD_TIMEOUT = 30
RETRY_ENABLED = True
RETRY_TIMES = 2
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 429]
# A URL that fails for good is a finding in the report, not a log line per URL.
RETRY_GIVE_UP_LOG_LEVEL = "DEBUG"
COOKIES_ENABLED = False
# The audit's callbacks yield one item at most: Scrapy's default of 100 parallel item tasks per
# response only costs scheduling overhead.
CONCURRENT_ITEMS = 1

# The audit evaluates robots.txt itself (RFC 9309 semantics, Crawl-delay, findings instead of
# silent drops), follows redirects hop by hop itself and reports every status code.
ROBOTSTXT_OBEY = False
REDIRECT_ENABLED = False
METAREFRESH_ENABLED = False
HTTPERROR_ALLOW_ALL = True

# Only http(s): a sitemap or robots.txt value can never make the auditor read a local file.
DOWNLOAD_HANDLERS = {"file": None, "s3": None, "ftp": None}

# Bodies are decompressed by the audit's own capped reader (gzip sniffed by magic bytes), so
# Scrapy's decompression middleware is off and only gzip is advertised.
DEFAULT_REQUEST_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Encoding": "gzip",
}
DOWNLOAD_MAXSIZE = 110 * 1024 * 1024
DOWNLOAD_WARNSIZE = 0

# Requests the spider makes from responses (redirect hops, sitemaps named by robots.txt or an
# index) are the audit's own decisions: Scrapy's UrlLengthMiddleware would drop a hop to a
# long URL without a record (the URL would be missing from the report); RefererMiddleware
# would send a Referer a crawler does not send; DepthMiddleware counts a depth the audit keeps
# itself (sitemap nesting); MetaCopyDetectionMiddleware checks spider code for a mistake the
# spider does not make. Each of them also costs time on every response.
SPIDER_MIDDLEWARES = {
    "scrapy.spidermiddlewares.urllength.UrlLengthMiddleware": None,
    "scrapy.spidermiddlewares.referer.RefererMiddleware": None,
    "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
    "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware": None,
}

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "sitemapaudit.middlewares.RetryAfterMiddleware": 550,
    "sitemapaudit.middlewares.CrawlDelayMiddleware": 560,
}

EXTENSIONS = {
    # Scrapy's own, for the URL records that travel in batches (report/feeds.py): each
    # record is written to every feed and counted in item_scraped_count as an item.
    "scrapy.extensions.corestats.CoreStats": None,
    "sitemapaudit.report.feeds.RecordCoreStats": 0,
    "scrapy.extensions.feedexport.FeedExporter": None,
    "sitemapaudit.report.feeds.RecordFeedExporter": 0,
    # Counts the lines logged as the spider closes too (fail_on matched, records lost).
    "scrapy.extensions.logcount.LogCount": None,
    "sitemapaudit.logcount.ClosingLogCount": 0,
    "sitemapaudit.headonly.HeadOnlyDownloads": 500,
    "sitemapaudit.progress.ProgressLog": 510,
    "sitemapaudit.readlimit.SitemapReadLimit": 520,
    # Only with SITEMAPAUDIT_DISTRIBUTED: heartbeat, re-queueing, who writes the report.
    "sitemapaudit.distributed.worker.DistributedWorker": 530,
}

ITEM_PIPELINES = {
    "sitemapaudit.pipelines.ChecksPipeline": 300,
    "sitemapaudit.pipelines.SummaryPipeline": 900,
    "sitemapaudit.pipelines.HistoryPipeline": 950,
}

# With JOBDIR, the audit's own on-disk inventory (in JOBDIR/sitemapaudit) is what a resumed
# audit continues from; Scrapy's request queues stay in memory, so that requests of the
# interrupted run are not replayed on top of it. That includes the queue of start requests
# (every page request comes from start()): after a kill its file on disk is left without its
# index, and the next run would read a stale request in place of a new one.
SCHEDULER_DISK_QUEUE = "scrapy.squeues.FifoMemoryQueue"
SCHEDULER_START_DISK_QUEUE = "scrapy.squeues.FifoMemoryQueue"

FEED_EXPORT_ENCODING = "utf-8"
# Spreadsheet and browser formats for FEEDS / -O, e.g. -O urls.csv:urls_csv -O audit.xlsx:xlsx
FEED_EXPORTERS = {
    "jsonlines": "sitemapaudit.report.jsonlines.ReportJsonLinesItemExporter",
    "jsonl": "sitemapaudit.report.jsonlines.ReportJsonLinesItemExporter",
    "jl": "sitemapaudit.report.jsonlines.ReportJsonLinesItemExporter",
    "urls_csv": "sitemapaudit.report.exporters.UrlCsvItemExporter",
    "sitemaps_csv": "sitemapaudit.report.exporters.SitemapCsvItemExporter",
    "changes_csv": "sitemapaudit.report.exporters.ChangesCsvItemExporter",
    "xlsx": "sitemapaudit.report.exporters.XlsxItemExporter",
    "html": "sitemapaudit.report.exporters.HtmlItemExporter",
}
# An error of the audit's own code (a bug) stops the audit, whose report then ends with a
# summary marked incomplete, instead of a report missing records or a crawl that never ends.
CLOSESPIDER_ERRORCOUNT = 1
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
LOG_LEVEL = "INFO"
LOG_FORMATTER = "sitemapaudit.logformatter.AuditLogFormatter"
