"""``scrapy audit-report``: converting an existing report, run as a real subprocess."""

from __future__ import annotations

import argparse
import codecs
import csv
import errno
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from sitemapaudit.report import cli
from sitemapaudit.report.flat import CHANGE_COLUMNS, SITEMAP_COLUMNS, URL_COLUMNS
from tests.report.conftest import REPO, SAMPLE

COMMAND = "audit-report"


def scrapy(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", COMMAND, *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_output_from_one_run(tmp_path: Path) -> None:
    out = tmp_path / "csv"
    result = scrapy(
        SAMPLE, "--csv", out, "--bom", "--xlsx", tmp_path / "r.xlsx", "--html", tmp_path / "r.html"
    )
    assert result.returncode == 0, result.stderr
    for name, columns in (
        ("urls.csv", URL_COLUMNS),
        ("sitemaps.csv", SITEMAP_COLUMNS),
        ("changes.csv", CHANGE_COLUMNS),
    ):
        path = out / name
        assert path.read_bytes().startswith(codecs.BOM_UTF8)
        with open(path, encoding="utf-8-sig", newline="") as f:
            assert next(csv.reader(f)) == list(columns)
        assert f"wrote {path}" in result.stdout
    workbook = load_workbook(tmp_path / "r.xlsx")
    assert workbook.sheetnames == ["URLs", "Sitemaps", "Changes", "Summary"]
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<title>Sitemap audit: https://shop.example</title>" in html
    assert not list(tmp_path.rglob("*.part"))


def test_html_row_cap_option(tmp_path: Path) -> None:
    result = scrapy(SAMPLE, "--html", tmp_path / "r.html", "--max-rows", "5")
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "40 of 45 URLs are not in this table" in html


def test_csv_without_bom_into_a_new_directory(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    result = scrapy(SAMPLE, "--csv", out)
    assert result.returncode == 0, result.stderr
    assert (out / "urls.csv").read_bytes().startswith(b"url,status,")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((SAMPLE,), "nothing to write"),
        (("--html", "x.html"), "exactly one report file"),
        ((SAMPLE, SAMPLE, "--html", "x.html"), "exactly one report file"),
        (("no/such/report.jsonl", "--html", "x.html"), "no such report file"),
        ((".", "--html", "x.html"), "not a report file: . is a directory"),
        ((SAMPLE, "--csv", "out", "--xlsx", "x.xlsx", "--bom", "--max-rows", "-1"), "--max-rows"),
        ((SAMPLE, "--html", "no/such/dir/x.html"), "no such directory"),
        ((SAMPLE, "--xlsx", "x.xlsx", "--bom"), "--bom applies to CSV"),
        ((SAMPLE, "--html", "x.html", "--max-rows", "many"), "invalid int value"),
        ((SAMPLE, "-o", "x.csv"), "unknown option -o (options: --csv DIR"),
        # Names longer than the file system takes.
        (("x" * 300, "--html", "x.html"), "File name too long"),
        ((SAMPLE, "--html", "x" * 300 + ".html"), "cannot write " + "x" * 300),
        ((SAMPLE, "--csv", "x" * 300), "cannot use the --csv directory"),
    ],
)
def test_bad_usage_exits_2(args: tuple[str | Path, ...], message: str) -> None:
    result = scrapy(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (("--html", "same.html", "--xlsx", "same.html"), "--xlsx same.html and --html same.html"),
        (("--csv", "out", "--html", "out/urls.csv"), "--csv out and --html out/urls.csv"),
        (("--csv", "out", "--xlsx", "./out/../out/changes.csv"), "--csv out and --xlsx"),
        (("--html", "report.jsonl"), "--html report.jsonl would overwrite the report it reads"),
        (("--csv", "."), "--csv . would overwrite the report it reads"),
    ],
)
def test_clashing_outputs_are_refused_before_anything_is_written(
    tmp_path: Path, outputs: tuple[str, ...], message: str
) -> None:
    report = tmp_path / "report.jsonl"
    report.write_bytes(SAMPLE.read_bytes())
    if "--csv ." in message:  # the report is named as one of the CSV files
        report = report.rename(tmp_path / "urls.csv")
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", COMMAND, str(report), *outputs],
        cwd=tmp_path,
        env={**os.environ, "SCRAPY_SETTINGS_MODULE": "sitemapaudit.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert [path.name for path in tmp_path.iterdir()] == [report.name]
    assert report.read_bytes() == SAMPLE.read_bytes()


def test_a_broken_report_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    report = tmp_path / "broken.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    report.write_text("\n".join([*lines[:5], "{oops", *lines[5:]]) + "\n", encoding="utf-8")
    result = scrapy(report, "--html", tmp_path / "r.html", "--csv", tmp_path / "csv")
    assert result.returncode == 1
    assert "broken.jsonl:6: not a JSON line" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "r.html").exists()
    # The --csv directory it made goes too; one that was there stays, as it was.
    assert not (tmp_path / "csv").exists()
    (tmp_path / "kept").mkdir()
    assert scrapy(report, "--csv", tmp_path / "kept").returncode == 1
    assert list((tmp_path / "kept").iterdir()) == []


def test_the_command_is_listed() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "-h"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert COMMAND in result.stdout
    assert "Convert an audit report to CSV, XLSX or HTML" in result.stdout


def test_a_report_without_summary_is_converted_with_a_warning(tmp_path: Path) -> None:
    report = tmp_path / "stopped.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    report.write_text("\n".join(lines[:10]) + "\n", encoding="utf-8")
    result = scrapy(report, "--csv", tmp_path / "csv")
    assert result.returncode == 0, result.stderr
    assert "has no summary record: the audit did not finish" in result.stderr
    assert (tmp_path / "csv" / "urls.csv").exists()


def test_a_csv_directory_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    result = scrapy(SAMPLE, "--csv", blocker / "csv")
    assert result.returncode == 2
    assert f"cannot create the --csv directory {blocker / 'csv'}" in result.stderr
    assert "Traceback" not in result.stderr


class _FullDisk(io.FileIO):
    """A file on a disk with room for ``ROOM`` bytes."""

    ROOM = 100

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > self.ROOM:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


@pytest.mark.parametrize("output", ["--csv", "--xlsx", "--html"])
def test_a_full_disk_leaves_no_file_and_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    output: str,
) -> None:
    """The failure may come only when the last buffered bytes are flushed, as the files are
    closed: the partial files go all the same, and the error is said in one line."""

    def full_disk_open(path: Path, mode: str) -> io.BufferedWriter:
        assert mode == "wb"
        return io.BufferedWriter(_FullDisk(path, "wb"), buffer_size=1 << 20)

    monkeypatch.setattr(cli, "open", full_disk_open, raising=False)
    target = tmp_path / {"--csv": "csv", "--xlsx": "r.xlsx", "--html": "r.html"}[output]
    command = cli.AuditReportCommand()
    opts = argparse.Namespace(csv=None, bom=False, xlsx=None, html=None, max_rows=1000)
    setattr(opts, output[2:], str(target))
    command.run([str(SAMPLE)], opts)
    assert command.exitcode == 1
    err = capsys.readouterr().err
    assert err == "audit-report: [Errno 28] No space left on device\n"
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert leftovers == []


def test_an_output_through_a_symlink_or_to_a_pipe_is_written_there(tmp_path: Path) -> None:
    """A symlink keeps pointing where it did, its target replaced; a pipe (or a device such as
    /dev/stdout) is written to, never replaced by a file."""
    target = tmp_path / "site" / "audit.html"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    pipe = tmp_path / "pipe.xlsx"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = __import__("threading").Thread(
        target=lambda: received.append(pipe.read_bytes()), daemon=True
    )
    reader.start()
    result = scrapy(SAMPLE, "--html", link, "--xlsx", pipe)
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert "<title>Sitemap audit: https://shop.example</title>" in target.read_text()
    assert pipe.is_fifo()
    assert received
    assert received[0].startswith(b"PK")
    assert not list(tmp_path.rglob(".*.part"))


def test_the_feed_encoding_setting_gives_the_csv_files_a_bom_as_bom_does(tmp_path: Path) -> None:
    result = scrapy(SAMPLE, "--csv", tmp_path / "c", "-s", "FEED_EXPORT_ENCODING=utf-8-sig")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "c" / "urls.csv").read_bytes().startswith(codecs.BOM_UTF8)


def test_an_output_to_standard_output_is_the_only_thing_there() -> None:
    """``--html /dev/stdout`` with standard output a pipe (as in ``| gzip``): the page alone."""
    result = scrapy(SAMPLE, "--html", "/dev/stdout")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert result.stdout.rstrip().endswith("</html>")


def test_lines_that_are_not_report_records_are_refused(tmp_path: Path) -> None:
    report = tmp_path / "junk.jsonl"
    report.write_text('{"record": "bogus", "x": 1}\n', encoding="utf-8")
    result = scrapy(report, "--csv", tmp_path / "c")
    assert result.returncode == 1
    assert "junk.jsonl:1: not a report record" in result.stderr
    assert not (tmp_path / "c").exists()
