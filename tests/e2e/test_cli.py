"""``scrapy crawl audit`` as a user runs it: a subprocess, its output, its exit status."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import scrapy

from sitemapaudit.commands.crawl import check_appends, check_report_paths
from sitemapaudit.errors import ConfigError
from sitemapaudit.inventory import Inventory, audit_identity
from sitemapaudit.report.paths import reserve_report
from tests.support.golden_site import XML, url, urlset
from tests.support.server import Page, TestSite

ROOT = Path(__file__).parents[2]
FAST = ["-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=0", "-s", "TELNETCONSOLE_ENABLED=0"]


def crawl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    project = {"SCRAPY_SETTINGS_MODULE": "sitemapaudit.settings", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "audit", *args, *FAST],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**__import__("os").environ, **project},
    )


def small_site() -> TestSite:
    return TestSite(
        {
            "/robots.txt": Page(body="Sitemap: {base}/s.xml\n", content_type="text/plain"),
            "/s.xml": Page(body=urlset(url("{base}/a"), url("{base}/gone")), content_type=XML),
            "/a": Page(body="<html><head></head><body>a</body></html>"),
            "/gone": Page(status=404),
        }
    )


def test_report_with_O_and_fail_on(tmp_path: Path) -> None:
    with small_site() as site:
        never = crawl("-a", f"domain={site.base}", "-O", "r.jsonl", cwd=tmp_path)
        failing = crawl(
            "-a", f"domain={site.base}", "-a", "fail_on=error", "-O", "r2.jsonl", cwd=tmp_path
        )
        by_code = crawl(
            "-a", f"domain={site.base}", "-a", "fail_on=redirect", "-O", "r3.jsonl", cwd=tmp_path
        )
    assert never.returncode == 0, never.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["record"] for r in records] == ["sitemap", "url", "url", "summary"]
    assert failing.returncode == 1
    summary = json.loads((tmp_path / "r2.jsonl").read_text().splitlines()[-1])
    assert summary["fail_on"] == {"policy": "error", "failed": True}
    # The log says why, as the crawl closes.
    why = "WARNING: fail_on=error matched (error=1): the command exits with status 1"
    assert why in failing.stderr
    assert failing.stderr.index(why) > failing.stderr.index("Closing spider (finished)")
    assert by_code.returncode == 0
    assert "fail_on=" not in never.stderr + by_code.stderr


def test_without_O_the_report_goes_to_a_dated_path_that_is_printed(tmp_path: Path) -> None:
    with small_site() as site:
        done = crawl("-a", f"domain={site.base}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    reports = list((tmp_path / "reports").glob("*.jsonl"))
    assert len(reports) == 1
    assert reports[0].name.startswith(f"127.0.0.1_{site.port}-")
    assert str(reports[0].resolve()) in done.stdout
    assert json.loads(reports[0].read_text().splitlines()[-1])["record"] == "summary"


def test_a_report_dir_given_with_s_gets_the_report_beside_the_feeds_given(tmp_path: Path) -> None:
    """As scrapyd runs a job when its items_dir is set: it gives the job a FEEDS setting of its
    own, and a SITEMAPAUDIT_REPORT_DIR given with -s (scrapyd's -d setting=) still gets the
    report. Without it, the feeds given are the only outputs, as with -O."""
    items = tmp_path / "items" / "sitemapaudit" / "audit"

    def scrapyd_feeds(job: str) -> str:
        return json.dumps({(items / f"{job}.jl").as_uri(): {"format": "jsonlines"}})

    reports = tmp_path / "var" / "reports"
    with small_site() as site:
        both = crawl(
            "-a",
            f"domain={site.base}",
            "-s",
            f"FEEDS={scrapyd_feeds('job1')}",
            "-s",
            f"SITEMAPAUDIT_REPORT_DIR={reports}",
            cwd=tmp_path,
        )
        feeds_only = crawl(
            "-a", f"domain={site.base}", "-s", f"FEEDS={scrapyd_feeds('job2')}", cwd=tmp_path
        )
    assert both.returncode == 0, both.stderr[-2000:]
    (report,) = reports.glob("*.jsonl")
    assert report.name.startswith(f"127.0.0.1_{site.port}-")
    assert f"sitemapaudit: report written to {report}" in both.stdout
    assert report.read_text() == (items / "job1.jl").read_text()
    assert json.loads(report.read_text().splitlines()[-1])["record"] == "summary"
    assert feeds_only.returncode == 0, feeds_only.stderr[-2000:]
    assert json.loads((items / "job2.jl").read_text().splitlines()[-1])["record"] == "summary"
    assert not list(tmp_path.glob("reports/*.jsonl"))  # (reports/ holds the history)
    assert "report written to" not in feeds_only.stdout
    assert len(list(reports.iterdir())) == 1


def test_bad_arguments_fail_before_any_request(tmp_path: Path) -> None:
    with small_site() as site:
        bad_domain = crawl("-a", "domain=example.com/path", cwd=tmp_path)
        bad_setting = crawl(
            "-a", f"domain={site.base}", "-s", "SITEMAPAUDIT_MAX_REDIRECTS=many", cwd=tmp_path
        )
        missing = crawl(cwd=tmp_path)
        no_sitemap = crawl("-a", f"domain={site.base}", "-a", "sitemap=,,", cwd=tmp_path)
        misspelt = crawl("-a", f"domain={site.base}", "-s", "SITEMAPAUDIT_HEADONLY=0", cwd=tmp_path)
        assert site.hits == {}
    assert bad_domain.returncode == 2
    assert "domain" in bad_domain.stderr
    assert "example.com/path" in bad_domain.stderr
    assert "Traceback" not in bad_domain.stderr
    assert bad_setting.returncode == 2
    assert "SITEMAPAUDIT_MAX_REDIRECTS" in bad_setting.stderr
    assert missing.returncode == 2
    assert "domain argument is required" in missing.stderr
    assert no_sitemap.returncode == 2
    assert "invalid value for sitemap: it names no URL (',,')" in no_sitemap.stderr
    assert misspelt.returncode == 2
    assert "unknown setting SITEMAPAUDIT_HEADONLY: did you mean" in misspelt.stderr


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["-s", "SITEMAPAUDIT_REPORT_DIR=a-file"], "SITEMAPAUDIT_REPORT_DIR='a-file'"),
        (
            ["-O", "r.jsonl", "-s", "SITEMAPAUDIT_REPORT_DIR=a-file/reports"],
            "SITEMAPAUDIT_REPORT_DIR='a-file/reports'",
        ),
        (["-O", "a-file/report.jsonl"], "the output file 'a-file/report.jsonl'"),
        (["-O", "a-dir.jsonl"], "the output file 'a-dir.jsonl' cannot be used: it is a directory"),
        # Writable by its mode bits for root, yet no file can be made there.
        (
            ["-O", "/proc/r.jsonl"],
            "the output file '/proc/r.jsonl' cannot be used: no file can be created in '/proc'",
        ),
        (["-s", "SITEMAPAUDIT_WORK_DIR=a-file/work"], "SITEMAPAUDIT_WORK_DIR or JOBDIR"),
        (["-s", "SITEMAPAUDIT_UNTHROTTLED=yesplease"], "SITEMAPAUDIT_UNTHROTTLED"),
        (["-s", "SITEMAPAUDIT_LASTMOD_TOLERANCE=nan"], "SITEMAPAUDIT_LASTMOD_TOLERANCE"),
        (["-s", "SITEMAPAUDIT_DISTRIBUTED=redis://127.0.0.1:1/0"], "cannot use Redis at"),
        (["-s", "ROBOTSTXT_OBEY=True"], "ROBOTSTXT_OBEY=True cannot be used"),
        # Scrapy's own settings of the pace: a traceback, or (0) a crawl that never ends.
        (["-s", "CONCURRENT_REQUESTS=abc"], "CONCURRENT_REQUESTS must be a number, got 'abc'"),
        (["-s", "AUTOTHROTTLE_MAX_DELAY=-1"], "AUTOTHROTTLE_MAX_DELAY must be at least 0"),
        (["-s", "CONCURRENT_REQUESTS_PER_DOMAIN=0"], "CONCURRENT_REQUESTS_PER_DOMAIN must be"),
        (["-s", "RANDOMIZE_DOWNLOAD_DELAY=maybe"], "RANDOMIZE_DOWNLOAD_DELAY must be True or"),
        (["-s", "DOWNLOAD_TIMEOUT=abc"], "DOWNLOAD_TIMEOUT must be a number, got 'abc'"),
        (["-s", "RETRY_TIMES=-1"], "RETRY_TIMES must be at least 0"),
        (["-s", "SITEMAPAUDIT_NEAR_LIMIT_FRACTION=0"], "SITEMAPAUDIT_NEAR_LIMIT_FRACTION must be"),
        (["-o", "audit.html"], "the output file 'audit.html' cannot be appended to (-o"),
        (["-o", "r.jsonl", "-o", "audit.xlsx"], "'audit.xlsx' cannot be appended to"),
        (["-o", "urls.csv:urls_csv"], "the format urls_csv cannot hold a second audit"),
        (["-o", "old.html"], "use -O to replace it"),
        # A name longer than the file system takes.
        (["-O", "x" * 300 + ".jsonl"], "cannot be used: File name too long"),
        (["-s", "SITEMAPAUDIT_REPORT_DIR=" + "x" * 300], "cannot be used: File name too long"),
        (["-s", "SITEMAPAUDIT_WORK_DIR=" + "x" * 300], "cannot be used: File name too long"),
        # Past what SQLite keeps (the history).
        (["-s", f"SITEMAPAUDIT_HISTORY_KEEP_RUNS={2**63}"], "KEEP_RUNS must be at most"),
    ],
)
def test_a_report_or_work_place_that_cannot_be_used_fails_before_any_request(
    tmp_path: Path, options: list[str], named: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    (tmp_path / "a-dir.jsonl").mkdir()
    (tmp_path / "old.html").write_text("<!DOCTYPE html>")
    with small_site() as site:
        done = crawl("-a", f"domain={site.base}", *options, cwd=tmp_path)
        assert site.hits == {}
    assert done.returncode == 2
    assert named in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "old.html").read_text() == "<!DOCTYPE html>"
    assert not [
        n for n in ("audit.html", "audit.xlsx", "urls.csv", "r.jsonl") if (tmp_path / n).exists()
    ]


def test_feeds_that_may_be_appended_to_are_not_refused() -> None:
    exporters = {
        "jsonlines": "sitemapaudit.report.jsonlines.ReportJsonLinesItemExporter",
        "html": "sitemapaudit.report.exporters.HtmlItemExporter",
        "xlsx": "sitemapaudit.report.exporters.XlsxItemExporter",
    }
    check_appends(
        {
            "r.jsonl": {"format": "jsonlines"},
            "a.html": {"format": "html", "overwrite": True},
            "stdout:": {"format": "html"},
            "s3://bucket/a.xlsx": {"format": "xlsx"},
        },
        exporters,
    )
    with pytest.raises(ConfigError, match=r"'file:///tmp/a\.html' cannot be appended to"):
        check_appends({"file:///tmp/a.html": {"format": "html", "overwrite": False}}, exporters)


def test_an_s3_output_is_not_taken_for_a_local_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    check_report_paths({"s3://bucket/r.jsonl": {"format": "jsonlines"}}, "")
    check_report_paths({"gs+x.y-z://bucket/r.jsonl": {"format": "jsonlines"}}, "")
    assert list(tmp_path.iterdir()) == []


def test_a_jobdir_of_another_audit_fails_before_any_request(tmp_path: Path) -> None:
    job = tmp_path / "job"
    (job / "sitemapaudit").mkdir(parents=True)
    inventory = Inventory(job / "sitemapaudit" / "inventory.sqlite3")
    inventory.set_identity(audit_identity("http://127.0.0.1:9", [], True))
    inventory.sitemap_pending("http://127.0.0.1:9/sitemap.xml", {})
    inventory.close()
    garbage = tmp_path / "garbage" / "sitemapaudit" / "inventory.sqlite3"
    garbage.parent.mkdir(parents=True)
    garbage.write_bytes(b"garbage")
    with small_site() as site:
        other = crawl("-a", f"domain={site.base}", "-s", f"JOBDIR={job}", cwd=tmp_path)
        broken = crawl(
            "-a", f"domain={site.base}", "-s", f"JOBDIR={garbage.parent.parent}", cwd=tmp_path
        )
        assert site.hits == {}
    assert other.returncode == 2
    assert "holds the interrupted audit of http://127.0.0.1:9 (discovered sitemaps;" in (
        other.stderr
    )
    assert f"not of {site.base} (discovered sitemaps; fetch_urls=yes)" in other.stderr
    assert broken.returncode == 2
    assert "is not an inventory sitemapaudit can resume" in broken.stderr
    for done in (other, broken):
        assert "Traceback" not in done.stderr


def test_a_jobdir_of_an_earlier_inventory_layout_fails_before_any_request(tmp_path: Path) -> None:
    inventory = tmp_path / "job" / "sitemapaudit" / "inventory.sqlite3"
    inventory.parent.mkdir(parents=True)
    db = sqlite3.connect(inventory)
    db.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT UNIQUE NOT NULL)")
    db.commit()
    db.close()
    with small_site() as site:
        done = crawl("-a", f"domain={site.base}", "-s", f"JOBDIR={tmp_path / 'job'}", cwd=tmp_path)
        assert site.hits == {}
    assert done.returncode == 2
    assert "new JOBDIR" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_unthrottled_preset_is_applied_and_cmdline_settings_still_win() -> None:
    from scrapy.settings import Settings

    from sitemapaudit.spiders.audit import AuditSpider

    settings = Settings({"SITEMAPAUDIT_UNTHROTTLED": "true"})
    settings.set("CONCURRENT_REQUESTS", 8, priority="cmdline")
    AuditSpider.update_settings(settings)
    assert settings.getfloat("DOWNLOAD_DELAY") == 0
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is False
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 64
    assert settings.getint("CONCURRENT_REQUESTS") == 8


def test_a_default_report_name_is_never_shared(tmp_path: Path) -> None:
    template = str(tmp_path / "reports" / "%(report_name)s.jsonl")
    names = [reserve_report(template, "e.com-20261123T010000Z") for _ in range(3)]
    assert names == [
        "e.com-20261123T010000Z",
        "e.com-20261123T010000Z-2",
        "e.com-20261123T010000Z-3",
    ]
    assert {p.name for p in (tmp_path / "reports").iterdir()} == {f"{n}.jsonl" for n in names}


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True


class _IPv6Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        base = f"http://[::1]:{self.server.server_address[1]}"
        bodies = {
            "/robots.txt": f"Sitemap: {base}/s.xml\n",
            "/s.xml": urlset(url(f"{base}/p")),
            "/p": "<html><head></head><body>x</body></html>",
        }
        body = bodies.get(self.path, "").encode()
        self.send_response(200 if self.path in bodies else 404)
        self.send_header("Content-Type", "text/html" if self.path == "/p" else XML)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_an_ipv6_literal_origin_is_audited(tmp_path: Path) -> None:
    try:
        server = _IPv6Server(("::1", 0), _IPv6Site)
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://[::1]:{server.server_address[1]}"
    try:
        done = crawl("-a", f"domain={origin}", "-O", "r.jsonl", cwd=tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(r["url"], r["status"]) for r in records if r["record"] == "url"] == [
        (f"{origin}/p", 200)
    ]


def test_the_default_report_takes_a_free_name_as_its_feed_opens(tmp_path: Path) -> None:
    from scrapy.utils.test import get_crawler

    from sitemapaudit.spiders.audit import AuditSpider, default_report_params

    settings = {
        "SITEMAPAUDIT_REPORT_DIR": str(tmp_path / "reports"),
        "SITEMAPAUDIT_HISTORY_PATH": "",
    }
    crawler = get_crawler(AuditSpider, settings)
    spider = AuditSpider.from_crawler(crawler, domain="e.com")
    name = spider.report_name
    assert not (tmp_path / "reports").exists()  # nothing is created before the crawl opens
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / f"{name}.jsonl").write_text("another audit's report\n")
    params = default_report_params({"report_name": name}, spider)
    assert params["report_name"] == spider.report_name == f"{name}-2"
    assert (tmp_path / "reports" / f"{name}-2.jsonl").read_text() == ""


def scrapy_command(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["crawl", "audit", "-L", "WARNING"], "the domain argument is required"),
        (
            ["crawl", "audit", "-a", "domain=example.com", "-a", "fail_on=", "-L", "WARNING"],
            "fail_on",
        ),
        (["validate", "no-such-sitemap.xml"], "no such file: 'no-such-sitemap.xml'"),
        (["audit-diff", "old.jsonl"], "expected two arguments, OLD and NEW (got 1)"),
        (["audit-report", "no-such-report.jsonl", "--html", "x.html"], "no such report file"),
    ],
    ids=["crawl-domain", "crawl-fail-on", "validate", "audit-diff", "audit-report"],
)
def test_a_refusal_is_one_line_on_standard_error(
    args: list[str], message: str, tmp_path: Path
) -> None:
    done = scrapy_command(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("scrapy: error: ")
    assert message in line


def test_a_refusal_is_also_in_the_log_file_of_a_job(tmp_path: Path) -> None:
    """As scrapyd runs a job: its log goes to LOG_FILE, its standard error elsewhere."""
    log = tmp_path / "job.log"
    done = scrapy_command("crawl", "audit", "-a", "fail_on=error", "-s", f"LOG_FILE={log}")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert (
        line == "scrapy: error: the domain argument is required: scrapy crawl audit -a domain=HOST"
    )
    logged = log.read_text().splitlines()
    assert logged[0].endswith("INFO: Scrapy " + scrapy.__version__ + " started (bot: sitemapaudit)")
    assert logged[-1].endswith(
        " ERROR: the domain argument is required: scrapy crawl audit -a domain=HOST"
    )
    assert sum("domain argument is required" in entry for entry in logged) == 1


@pytest.mark.parametrize("command", [["crawl", "audit"], ["validate", "no-such-sitemap.xml"]])
def test_a_log_file_in_a_missing_directory_gets_its_directory(
    tmp_path: Path, command: list[str]
) -> None:
    log = tmp_path / "logs" / "nightly" / "job.log"
    done = scrapy_command(*command, "-s", f"LOG_FILE={log}")
    # Refused for what the command says (no domain, no such file), in the log it asked for.
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert " ERROR: " in log.read_text()


@pytest.mark.parametrize("option", [["-s", "LOG_FILE={dir}"], ["--logfile", "{dir}"]])
def test_a_log_file_that_cannot_be_opened_is_refused_in_one_line(
    tmp_path: Path, option: list[str]
) -> None:
    args = [value.format(dir=tmp_path) for value in option]
    done = scrapy_command("crawl", "audit", "-a", "domain=example.com", *args)
    assert done.returncode == 2
    assert (
        done.stderr == f"scrapy: error: LOG_FILE={str(tmp_path)!r} cannot be used: Is a directory\n"
    )
