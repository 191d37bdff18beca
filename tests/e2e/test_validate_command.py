"""``scrapy validate``: files and URLs in, records out, exit status for CI gates."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.golden_site import NS, XML, index, url, urlset
from tests.support.server import Page, TestSite

ROOT = Path(__file__).parents[2]
VALID = urlset(url("https://e.com/a", "2024-05-01"), url("https://e.com/b"))


def validate(
    *args: str, timeout: float = 60, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> tuple[int, list[dict[str, Any]], str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "validate",
            *args,
            "-s",
            "DOWNLOAD_DELAY=0",
            "-s",
            "AUTOTHROTTLE_ENABLED=0",
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, records, done.stderr


def test_a_valid_file_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "ok.xml"
    path.write_text(VALID)
    code, records, stderr = validate(str(path))
    assert code == 0, stderr
    assert [r["record"] for r in records] == ["sitemap", "url", "url"]
    assert records[0]["issues"] == []
    assert {r["url"] for r in records[1:]} == {"https://e.com/a", "https://e.com/b"}


def test_an_invalid_gzip_file_exits_1_with_positions(tmp_path: Path) -> None:
    bad = urlset(
        url("https://e.com/a", "2004-12-23T18:00+00:00"),
        "<url><changefreq>Daily</changefreq></url>",
    )
    path = tmp_path / "bad.xml.gz"
    path.write_bytes(gzip.compress(bad.encode()))
    code, records, stderr = validate(str(path))
    assert code == 1, stderr
    sitemap = records[0]
    assert sitemap["gzip"] is True
    assert "schema_invalid" in sitemap["issues"]
    assert any("line" in e and "changefreq" in e for e in sitemap["errors"])


def test_a_doubly_gzipped_file_exits_1(tmp_path: Path) -> None:
    # A file is what a server sends as it is, without Content-Encoding: gunzipped once, it is
    # gzip data again, as search engines would find it.
    path = tmp_path / "twice.xml.gz"
    path.write_bytes(gzip.compress(gzip.compress(VALID.encode())))
    code, records, stderr = validate(str(path))
    assert code == 1, stderr
    assert [r["record"] for r in records] == ["sitemap"]
    assert records[0]["issues"] == ["not_a_sitemap", "gzip_invalid"]
    assert "gzipped twice" in records[0]["errors"][1]


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    code, records, stderr = validate(str(tmp_path / "missing.xml"))
    assert code == 2
    assert "no such file" in stderr
    assert records == []
    code, _, stderr = validate("ftp://e.com/sitemap.xml")
    assert code == 2
    assert "not an http(s) URL: 'ftp://e.com/sitemap.xml'" in stderr
    code, _, stderr = validate(str(tmp_path))
    assert code == 2
    assert f"not a regular file: {str(tmp_path)!r}" in stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-o", "out.jsonl"], "unknown option -o (options: --follow)"),
        (
            ["-s", "SITEMAPAUDIT_NEAR_LIMIT=0.5"],
            "unknown setting SITEMAPAUDIT_NEAR_LIMIT: did you mean "
            "SITEMAPAUDIT_NEAR_LIMIT_FRACTION?",
        ),
    ],
)
def test_an_unknown_option_or_setting_is_named(
    tmp_path: Path, options: list[str], message: str
) -> None:
    path = tmp_path / "s.xml"
    path.write_text(urlset(url("https://e.com/a")), encoding="utf-8")
    code, records, stderr = validate(str(path), *options)
    assert code == 2
    assert message in stderr
    assert records == []


HOSTILE = {
    "xxe.xml": (
        b'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://e.com/&x;</loc></url></urlset>'
    ),
    "laughs.xml": (
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">'
            for i in range(1, 10)
        )
        + ']>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://e.com/&lol9;</loc></url></urlset>'
    ).encode(),
    "bomb.xml.gz": gzip.compress(b"<urlset>" + b" " * 120_000_000 + b"</urlset>", 9),
    "line.xml": (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>https://e.com/{i}</loc></url>" for i in range(50_001))
        + "</urlset>"
    ).encode(),
}


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("xxe.xml", "xml_entities"),
        ("laughs.xml", "xml_entities"),
        ("bomb.xml.gz", "too_large"),
        ("line.xml", "too_many_urls"),
    ],
)
def test_hostile_files_get_a_finding_and_a_clean_exit(tmp_path: Path, name: str, code: str) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE[name])
    status, records, stderr = validate(str(path))
    assert status == 1
    assert "Traceback" not in stderr
    assert code in records[0]["issues"]
    assert "root:" not in json.dumps(records)  # nothing of /etc/passwd


def test_a_file_past_the_entry_limit_gets_its_other_findings(tmp_path: Path) -> None:
    path = tmp_path / "old.xml"
    path.write_bytes(
        (
            '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">'
            + "".join(f"<url><loc>https://e.com/{i}</loc></url>" for i in range(50_001))
            + "</urlset>"
        ).encode()
    )
    status, records, stderr = validate(str(path))
    assert status == 1, stderr
    sitemap = next(r for r in records if r["record"] == "sitemap")
    assert sorted(sitemap["issues"]) == ["namespace_invalid", "too_many_urls"]


def test_urls_are_read_through_the_crawl_and_children_followed(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/index.xml": Page(body=index("{base}/a.xml", "{base}/b.xml"), content_type=XML),
            "/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML),
            "/b.xml": Page(body=urlset(url("{base}/p2", "2024-99-01")), content_type=XML),
        }
    )
    with site:
        code, records, stderr = validate(f"{site.base}/index.xml")
    assert code == 1, stderr  # b.xml's lastmod also breaks the XSD: an error
    assert {r["url"] for r in records if r["record"] == "sitemap"} == {
        f"{site.base}/index.xml",
        f"{site.base}/a.xml",
        f"{site.base}/b.xml",
    }
    urls = {r["url"]: r for r in records if r["record"] == "url"}
    assert urls[f"{site.base}/p2"]["issues"] == ["lastmod_invalid"]
    sitemaps = {r["url"]: r for r in records if r["record"] == "sitemap"}
    assert sitemaps[f"{site.base}/b.xml"]["issues"] == ["schema_invalid"]
    assert site.hits["/p1"] == site.hits["/p2"] == 0
    assert "summary" not in {r["record"] for r in records}


def test_local_files_are_judged_together(tmp_path: Path) -> None:
    """Two files of one site: a URL both list has one record, ``duplicate``; a file named
    twice is read once."""
    first, second = tmp_path / "a.xml", tmp_path / "b.xml.gz"
    first.write_text(urlset(url("https://e.com/a"), url("https://e.com/b")))
    second.write_bytes(
        gzip.compress(urlset(url("https://e.com/b"), url("https://e.com/c")).encode())
    )
    code, records, stderr = validate(str(first), str(second), str(tmp_path / "." / "a.xml"))
    assert code == 0, stderr
    assert [(r["record"], r["url"]) for r in records] == [
        ("sitemap", str(first)),
        ("sitemap", str(second)),
        ("url", "https://e.com/a"),
        ("url", "https://e.com/b"),
        ("url", "https://e.com/c"),
    ]
    assert records[3]["issues"] == ["duplicate"]
    assert records[3]["sitemaps"] == [str(first), str(second)]
    assert records[2]["issues"] == records[4]["issues"] == []


def test_local_index_children_are_followed_only_with_the_flag(tmp_path: Path) -> None:
    site = TestSite({"/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML)})
    with site:
        path = tmp_path / "index.xml"
        path.write_text(index(f"{site.base}/a.xml"))
        _, without, _ = validate(str(path))
        code, with_flag, stderr = validate(str(path), "--follow")
    assert [r["record"] for r in without] == ["sitemap"]
    assert without[0]["child_count"] == 1
    assert code == 0, stderr
    assert [r["url"] for r in with_flag if r["record"] == "url"] == [f"{site.base}/p1"]
    assert [
        (r["url"], r["found_via"], r["parent"]) for r in with_flag if r["record"] == "sitemap"
    ] == [(str(path), "argument", None), (f"{site.base}/a.xml", "index", str(path))]


def test_a_child_also_given_as_an_argument_stays_an_argument(tmp_path: Path) -> None:
    site = TestSite(
        {
            "/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML),
            "/b.xml": Page(body=urlset(url("{base}/p2")), content_type=XML),
        }
    )
    with site:
        path = tmp_path / "index.xml"
        path.write_text(index(f"{site.base}/a.xml", f"{site.base}/b.xml"))
        code, records, stderr = validate(str(path), f"{site.base}/b.xml", "--follow")
    assert code == 0, stderr
    assert sorted(
        (r["url"], r["found_via"], r["parent"]) for r in records if r["record"] == "sitemap"
    ) == sorted(
        [
            (str(path), "argument", None),
            (f"{site.base}/a.xml", "index", str(path)),
            (f"{site.base}/b.xml", "argument", None),
        ]
    )


def test_a_followed_local_index_judges_its_children_as_an_index_url_does(
    tmp_path: Path,
) -> None:
    """The lastmod a local index gives a child it lists (stale, after the audit, not a date)
    and a child that is an index itself are findings on the child's record, as when the same
    index is read from its URL."""
    listed = {
        "a.xml": "2020-01-01",  # older than the URL lastmod a.xml lists
        "nested.xml": "2099-01-01",  # after the audit, and an index
        "c.xml": "2020-13-01",  # no such month
        "d.xml": None,
    }
    entries = "".join(
        f"<sitemap><loc>{{base}}/{name}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "")
        + "</sitemap>"
        for name, lastmod in listed.items()
    )
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>{entries}</sitemapindex>'
    site = TestSite(
        {
            "/index.xml": Page(body=body, content_type=XML),
            "/a.xml": Page(body=urlset(url("{base}/p1", "2024-06-01T00:00:00Z")), content_type=XML),
            "/nested.xml": Page(body=index("{base}/b.xml"), content_type=XML),
            "/b.xml": Page(body=urlset(url("{base}/p2")), content_type=XML),
            "/c.xml": Page(body=urlset(url("{base}/p3", "2024-06-01")), content_type=XML),
            "/d.xml": Page(body=urlset(url("{base}/p4", "2024-06-01")), content_type=XML),
        }
    )
    with site:
        path = tmp_path / "index.xml"
        path.write_text(body.replace("{base}", site.base))
        code, local, stderr = validate(str(path), "--follow")
        assert code == 1, stderr  # (c.xml's lastmod also breaks the index's XSD)
        _, served, stderr = validate(f"{site.base}/index.xml")
    children = {f"{site.base}/{name}": name for name in [*listed, "b.xml"]}

    def findings(records: list[dict[str, Any]], index_name: str) -> dict[str, list[str]]:
        found = {}
        for record in records:
            if record["record"] == "sitemap" and record["url"] in children:
                name = children[record["url"]]
                found[name] = [
                    re.sub(r"after \S+Z, when", "after T, when", error.replace(index_name, "INDEX"))
                    for error in record["errors"]
                ]
        return found

    expected = findings(served, f"{site.base}/index.xml")
    assert findings(local, str(path)) == expected
    assert {name: [e.split(":")[0] for e in errors] for name, errors in expected.items()} == {
        "a.xml": ["index_lastmod_stale"],
        "nested.xml": ["nested_index", "lastmod_future"],
        "c.xml": ["lastmod_invalid"],
        "d.xml": [],
        "b.xml": [],
    }
    assert "nested_index: this index is listed by the index INDEX" in expected["nested.xml"]


def test_validating_urls_writes_no_audit_history(tmp_path: Path) -> None:
    """The project's history (``reports/history.sqlite3`` by default, from where the command
    runs) holds audit runs: a validation adds none, and fetches no sitemap conditionally."""
    site = TestSite({"/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML)})
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "sitemapaudit.settings"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with site:
        for _ in range(2):
            code, records, stderr = validate(f"{site.base}/a.xml", cwd=tmp_path, env=env)
            assert code == 0, stderr
            assert [r["url"] for r in records if r["record"] == "url"] == [f"{site.base}/p1"]
            assert [r["status"] for r in records if r["record"] == "sitemap"] == [200]
    assert not (tmp_path / "reports").exists()


def test_a_url_on_a_host_that_never_answers_is_a_fetch_failure(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, records, stderr = validate(f"http://127.0.0.1:{port}/sitemap.xml")
    assert code == 1
    [record] = records
    assert record["issues"] == ["fetch_failed"]
    assert "the site could not be reached" in stderr
    assert "history" not in stderr


def test_a_local_index_with_relative_children_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "index.xml"
    path.write_text(index("child.xml", "/abs-path.xml", "https://e.com/ok.xml"))
    code, records, stderr = validate(str(path))
    assert code == 1, stderr
    (sitemap,) = records
    assert "invalid_url" in sitemap["issues"]  # (and schema_invalid: "child.xml" is too short)
    assert (
        "invalid_url: lists sitemap locations that are not valid http(s) URLs: child.xml (it "
        "is relative: it has no scheme (http:// or https://)); /abs-path.xml (it is relative: "
        "it has no scheme (http:// or https://))"
    ) in sitemap["errors"]


def test_a_local_atom_feed_resolves_links_only_against_an_absolute_xml_base(
    tmp_path: Path,
) -> None:
    """A file has no URL to resolve a relative Atom link against; an absolute xml:base is one."""
    path = tmp_path / "feed.atom"
    path.write_text(
        '<feed xmlns="http://www.w3.org/2005/Atom">'
        '<entry><link href="/post/1"/></entry>'
        '<entry xml:base="https://e.com/blog/"><link href="post/2"/></entry>'
        "</feed>"
    )
    code, records, stderr = validate(str(path))
    assert code == 1, stderr
    issues = {r["url"]: r["issues"] for r in records if r["record"] == "url"}
    assert issues == {"/post/1": ["invalid_url"], "https://e.com/blog/post/2": []}


EXTENSIONS = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
)


def test_findings_of_the_sitemap_extensions_are_in_the_sitemap_record(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    path = tmp_path / "extensions.xml"
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {EXTENSIONS}>\n'
        "<url><loc>https://e.com/a</loc><news:news><news:publication>"
        "<news:name>The Example Times</news:name><news:language>en</news:language>"
        f"</news:publication><news:publication_date>{now:%Y-%m-%dT%H:%M:%S}"
        "</news:publication_date><news:title>Headline</news:title></news:news></url>\n"
        "<url><loc>https://e.com/b</loc><video:video>"
        "<video:thumbnail_loc>https://e.com/t.jpg</video:thumbnail_loc>"
        "<video:title>Title</video:title><video:description>About</video:description>"
        "<video:content_loc>https://e.com/v.mp4</video:content_loc>"
        "<video:expiration_date>2020-01-01</video:expiration_date></video:video></url>\n"
        "<url><loc>https://e.com/c</loc><image:image><image:loc> </image:loc></image:image>"
        "<news:news><news:publication><news:name>The Example Times</news:name>"
        f"<news:language>en</news:language></news:publication><news:publication_date>{now:%F}"
        "</news:publication_date><news:title></news:title></news:news></url>\n"
        "</urlset>\n"
    )
    code, records, stderr = validate(str(path))
    assert code == 1, stderr
    sitemap = records[0]
    assert sitemap["issues"] == [
        "invalid_url",
        "news_date_invalid",
        "news_missing_field",
        "video_expired",
    ]
    errors = sitemap["errors"]
    assert errors[0] == "invalid_url: line 5: image:loc '' is not a valid http(s) URL: it is empty"
    assert errors[1] == (
        f"news_date_invalid: line 3: news:publication_date '{now:%Y-%m-%dT%H:%M:%S}' is not a "
        "valid date: a time needs a time zone (Z or +hh:mm) in W3C Datetime, or its instant is "
        "unknown (the XSD accepts it without one)"
    )
    assert errors[2] == (
        "news_missing_field: line 5: news:news has an empty news:title (Google requires the "
        "article's title)"
    )
    assert errors[3].startswith(
        "video_expired: line 4: video:expiration_date 2020-01-01 passed at least "
    )
    assert [r["url"] for r in records[1:]] == [f"https://e.com/{p}" for p in "abc"]


def test_a_text_sitemap_near_the_entry_limit_is_warned(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text("".join(f"https://e.com/p{i}\n" for i in range(46_000)))
    code, records, stderr = validate(str(path))
    assert code == 0, stderr
    assert records[0]["kind"] == "text"
    assert records[0]["issues"] == ["near_limit"]


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_text("".join(f"https://e.com/p{i}\n" for i in range(20_000)))
    returncode, stderr = read_a_little("validate", str(path))
    assert returncode == 1
    assert b"Traceback" not in stderr


def read_a_little(*args: str) -> tuple[int, bytes]:
    """Run ``scrapy ARGS``, read 100 bytes of its output and close it, as ``| head -c 100``
    does; its exit status and standard error."""
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.read(100)
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr


@pytest.mark.parametrize(
    "urls",
    [
        20_000,
        # The crawl is over when the last write finds the pipe closed: one batch of records
        # goes out during the crawl, the rest after it, and nothing is left to stop.
        1001,
    ],
)
def test_a_reader_that_goes_away_during_a_crawl_ends_it_quietly(urls: int) -> None:
    """The records of sitemap URLs come from a crawl: it stops too, without tracebacks."""
    site = TestSite(
        {
            "/s.xml": Page(
                body=urlset(*(url(f"{{base}}/p{i}") for i in range(urls))), content_type=XML
            )
        }
    )
    with site:
        returncode, stderr = read_a_little(
            "validate", f"{site.base}/s.xml", "-s", "LOG_LEVEL=ERROR"
        )
    assert returncode == 1
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    assert b"ERROR" not in stderr


def test_a_reader_that_goes_away_during_a_crawl_of_an_index_gets_no_warning() -> None:
    """``scrapy validate URL | head -1``: validate writes no report, so the crawl it stops
    says nothing of an audit stopped before it was complete (nor of anything else)."""
    site = TestSite(
        {
            "/sitemap_index.xml": Page(
                body=index("{base}/a.xml", "{base}/b.xml"), content_type=XML
            ),
            "/a.xml": Page(
                body=urlset(*(url(f"{{base}}/a{i}") for i in range(3000))), content_type=XML
            ),
            "/b.xml": Page(
                body=urlset(*(url(f"{{base}}/b{i}") for i in range(3000))), content_type=XML
            ),
        }
    )
    with site:
        returncode, stderr = read_a_little("validate", f"{site.base}/sitemap_index.xml")
    assert returncode == 1
    assert stderr == b"", stderr.decode(errors="replace")


def test_validating_urls_writes_no_report_or_history_even_when_they_are_set(
    tmp_path: Path,
) -> None:
    """A nightly audit's -s options reused for a validation add no run to its history."""
    site = TestSite({"/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML)})
    history, reports = tmp_path / "h.sqlite3", tmp_path / "reports"
    with site:
        code, records, stderr = validate(
            f"{site.base}/a.xml",
            "-s",
            f"SITEMAPAUDIT_HISTORY_PATH={history}",
            "-s",
            f"SITEMAPAUDIT_REPORT_DIR={reports}",
        )
    assert code == 0, stderr
    assert [r["record"] for r in records] == ["sitemap", "url"]
    assert not history.exists()
    assert not reports.exists()


def test_robotstxt_obey_stops_a_validation_at_start(tmp_path: Path) -> None:
    code, records, stderr = validate("https://e.com/a.xml", "-s", "ROBOTSTXT_OBEY=True")
    assert code == 2
    assert records == []
    assert "ROBOTSTXT_OBEY=True cannot be used" in stderr


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("CONCURRENT_REQUESTS=abc", "CONCURRENT_REQUESTS must be a number, got 'abc'"),
        ("CONCURRENT_REQUESTS_PER_DOMAIN=0", "CONCURRENT_REQUESTS_PER_DOMAIN must be at least 1"),
        # A delay of years: no request would leave, and a stop would wait for it too (the
        # helper's own DOWNLOAD_DELAY=0 comes after).
        ("AUTOTHROTTLE_START_DELAY=1e15", "AUTOTHROTTLE_START_DELAY must be at most 3600"),
    ],
)
def test_a_pace_setting_scrapy_cannot_use_stops_a_validation_at_start(
    setting: str, named: str
) -> None:
    code, records, stderr = validate("https://e.com/a.xml", "-s", setting)
    assert (code, records) == (2, [])
    assert named in stderr


def test_a_file_name_longer_than_the_system_takes_is_bad_usage() -> None:
    code, records, stderr = validate("x" * 300 + ".xml")
    assert (code, records) == (2, [])
    assert "cannot read 'xxx" in stderr
    assert "File name too long" in stderr
    assert "Traceback" not in stderr


def test_a_validation_neither_resumes_nor_leaves_an_audit_s_state(tmp_path: Path) -> None:
    """An audit's -s options reused for a validation: its JOBDIR (maybe holding an
    interrupted audit), its work directory and its Redis are not the validation's."""
    site = TestSite({"/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML)})
    jobdir, work = tmp_path / "job", tmp_path / "work"
    with site:
        code, records, stderr = validate(
            f"{site.base}/a.xml",
            "-s",
            f"JOBDIR={jobdir}",
            "-s",
            f"SITEMAPAUDIT_WORK_DIR={work}",
            "-s",
            "SITEMAPAUDIT_DISTRIBUTED=redis://127.0.0.1:1/0",
        )
    assert code == 0, stderr
    assert [r["url"].rsplit("/", 1)[-1] for r in records] == ["a.xml", "p1"]
    assert not jobdir.exists()
    assert not work.exists()


def test_a_validation_stopped_before_it_read_everything_exits_1() -> None:
    """(A CI job's timeout that stops the gate does not turn it green.)"""
    site = TestSite(
        {
            "/index.xml": Page(body=index("{base}/a.xml", "{base}/slow.xml"), content_type=XML),
            "/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML),
            "/slow.xml": Page(body=urlset(url("{base}/p2")), content_type=XML, delay=5),
        }
    )
    with site:
        code, _records, stderr = validate(f"{site.base}/index.xml", "-s", "CLOSESPIDER_TIMEOUT=1")
    assert code == 1, stderr


def test_an_unreadable_file_is_a_usage_error_before_any_record(tmp_path: Path) -> None:
    good, locked = tmp_path / "good.xml", tmp_path / "locked.xml"
    good.write_text(VALID)
    locked.write_text(VALID)
    locked.chmod(0)
    if os.access(locked, os.R_OK):
        pytest.skip("this user (root) reads a file whatever its mode")
    code, records, stderr = validate(str(good), str(locked))
    assert (code, records) == (2, [])
    assert f"cannot read '{locked}': Permission denied" in stderr


def test_a_file_that_cannot_be_opened_is_named_with_why(tmp_path: Path) -> None:
    from scrapy.exceptions import UsageError

    from sitemapaudit.commands.validate import _check_readable

    gone = tmp_path / "gone.xml"
    with pytest.raises(UsageError, match=f"cannot read '{re.escape(str(gone))}': No such file"):
        _check_readable(str(gone))


def test_an_uppercase_scheme_is_a_url() -> None:
    site = TestSite({"/a.xml": Page(body=urlset(url("{base}/p1")), content_type=XML)})
    with site:
        code, records, stderr = validate(site.base.replace("http://", "HTTP://") + "/a.xml")
    assert code == 0, stderr
    assert [r["record"] for r in records] == ["sitemap", "url"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_an_output_that_cannot_be_written_is_said_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "ok.xml"
    path.write_text(VALID)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "validate", str(path)],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr == (
        "scrapy: error: standard output cannot be written (No space left on device): the "
        "records from here on are lost\n"
    )


def test_a_closed_output_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ok.xml"
    path.write_text(VALID)
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "validate", str(path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 2
    assert done.stderr == (
        "scrapy: error: standard output is closed: the records have nowhere to go\n"
    )
