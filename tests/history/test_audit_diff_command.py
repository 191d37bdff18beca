"""``scrapy audit-diff``: report files, stored runs, the text table and bad usage."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from scrapy.cmdline import execute

from sitemapaudit.history import HistoryStore, summarize
from tests.history.scenario import (
    EXPECTED,
    NEW_RECORDS,
    NEW_SUMMARY,
    OLD_RECORDS,
    OLD_SUMMARY,
    E,
    write_report,
)

PROJECT = Path(__file__).parents[2]
# Scrapy names a project command after its module: sitemapaudit/commands/audit-diff.py.
COMMAND = "audit-diff"


@pytest.fixture
def reports(tmp_path: Path) -> tuple[Path, Path]:
    return (
        write_report(tmp_path / "old.jsonl", OLD_RECORDS, OLD_SUMMARY),
        write_report(tmp_path / "new.jsonl", NEW_RECORDS, NEW_SUMMARY),
    )


@pytest.fixture
def history(tmp_path: Path, reports: tuple[Path, Path]) -> Path:
    """A history database holding an unrelated run (1), then the old (2) and new (3) runs."""
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        other = store.begin_run("https://other.example", "2024-05-01T00:00:00Z")
        store.finish_run(other, "2024-05-01T01:00:00Z", {})
        store.import_report(reports[0])
        store.import_report(reports[1])
    return path


def run_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """Run ``scrapy audit-diff ARGS`` in this process, from the project directory."""
    monkeypatch.chdir(PROJECT)
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    monkeypatch.delenv("SCRAPY_PROJECT", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        execute(["scrapy", COMMAND, *args])
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_two_report_files_print_json_lines(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reports: tuple[Path, Path],
) -> None:
    code, out, err = run_command(monkeypatch, capsys, str(reports[0]), str(reports[1]))
    assert code == 0
    assert jsonl(out) == EXPECTED
    assert err.strip() == summarize(Counter(r["change"] for r in EXPECTED))


def test_report_files_are_not_written_to_the_history(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reports: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    db = tmp_path / "untouched.sqlite3"
    code, _, _ = run_command(monkeypatch, capsys, "--db", str(db), *map(str, reports))
    assert code == 0
    assert not db.exists()


def by_code_column(rows: list[str], column: int) -> list[str]:
    return [row[column:].split("  ")[0] if row[column : column + 1] != " " else "" for row in rows]


def test_table_output(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reports: tuple[Path, Path],
) -> None:
    code, out, _ = run_command(monkeypatch, capsys, "--table", *map(str, reports))
    assert code == 0
    lines = out.splitlines()
    header, rule, *rows, summary = lines
    assert header.split() == ["change", "url", "code", "old", "->", "new"]
    assert set(rule.replace(" ", "")) == {"-"}
    assert len(rows) == len(EXPECTED)
    assert summary == summarize(Counter(r["change"] for r in EXPECTED))
    url_column = header.index("url")
    code_column = header.index("code")
    assert all(row[url_column - 2 : url_column] == "  " for row in rows)
    assert all(row[code_column - 2 : code_column] == "  " for row in rows if len(row) > code_column)
    assert by_code_column(rows, code_column) == [r["code"] or "" for r in EXPECTED]
    by_url = {(row.split()[0], row.split()[1]): row for row in rows}
    assert by_url["status_regression", f"{E}/broken"].endswith("200 -> 500")
    assert by_url["status_regression", f"{E}/failed"].endswith("200 -> -")
    assert by_url["url_added", f"{E}/added"].endswith(f"in {E}/a.xml")
    assert "(sitemap)" in by_url["finding_new", f"{E}/b.xml"]
    assert by_url["url_moved", f"{E}/moved"].endswith(
        f"{E}/a.xml, {E}/old.xml -> {E}/a.xml, {E}/new.xml"
    )
    assert f"{E}/caf\u00e9" in out


def test_stored_runs_from_the_history_database(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], history: Path
) -> None:
    code, out, _ = run_command(monkeypatch, capsys, "--db", str(history), "run:2", "run:3")
    assert code == 0
    assert jsonl(out) == EXPECTED


def test_history_path_from_the_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], history: Path
) -> None:
    code, out, _ = run_command(
        monkeypatch, capsys, "-s", f"SITEMAPAUDIT_HISTORY_PATH={history}", "run:2", "run:3"
    )
    assert code == 0
    assert jsonl(out) == EXPECTED


def test_the_table_escapes_control_characters(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def record(url: str) -> dict[str, Any]:
        return {"record": "url", "url": url, "sitemaps": [f"{E}/s.xml"], "issues": []}

    old = write_report(tmp_path / "a.jsonl", [], OLD_SUMMARY)
    hostile = [f"{E}/ansi\x1b[31mRED\x1b[0m", f"{E}/line\nbreak", f"{E}/bell\x07"]
    new = write_report(tmp_path / "b.jsonl", [record(u) for u in hostile], NEW_SUMMARY)
    code, out, _ = run_command(monkeypatch, capsys, "--table", str(old), str(new))
    assert code == 0
    assert "\x1b" not in out
    assert "\x07" not in out
    assert f"{E}/ansi\\x1b[31mRED\\x1b[0m" in out
    assert f"{E}/line\\nbreak" in out
    assert len(out.splitlines()) == 2 + 3 + 1


def test_a_gzip_compressed_report(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reports: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    packed = tmp_path / "new.jsonl.gz"
    packed.write_bytes(gzip.compress(reports[1].read_bytes()))
    code, out, _ = run_command(monkeypatch, capsys, str(reports[0]), str(packed))
    assert code == 0
    assert jsonl(out) == EXPECTED


def test_an_unfinished_stored_run_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], history: Path
) -> None:
    with HistoryStore(history) as store:
        unfinished = store.begin_run(E, "2024-06-03T00:00:00Z")
    code, _, err = run_command(
        monkeypatch, capsys, "--db", str(history), "run:3", f"run:{unfinished}"
    )
    assert code == 2
    assert f"run:{unfinished}: the run never finished (the audit stopped early" in err
    assert "report" not in err


def test_a_stored_run_against_a_report_file(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    history: Path,
    reports: tuple[Path, Path],
) -> None:
    before = history.read_bytes()
    code, out, _ = run_command(monkeypatch, capsys, "--db", str(history), "run:2", str(reports[1]))
    assert code == 0
    assert jsonl(out) == EXPECTED
    with HistoryStore(history) as store:
        assert len(store.runs()) == 3
    assert history.read_bytes() == before


@pytest.fixture
def names(tmp_path: Path, history: Path, reports: tuple[Path, Path]) -> dict[str, str]:
    """Paths the bad-usage cases name: a directory, a history and two reports."""
    (tmp_path / "broken.jsonl").write_text("not json\n", encoding="utf-8")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    write_report(tmp_path / "cut.jsonl", NEW_RECORDS[:3], None)
    write_report(tmp_path / "stopped.jsonl", NEW_RECORDS[:3], {**NEW_SUMMARY, "complete": False})
    write_report(
        tmp_path / "other.jsonl", NEW_RECORDS, {**NEW_SUMMARY, "origin": "https://o.example"}
    )
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(reports[1].read_bytes())[:-30])
    sqlite3.connect(tmp_path / "other.sqlite3").execute("CREATE TABLE t (x)").connection.close()
    return {
        "tmp": str(tmp_path),
        "db": str(history),
        "old": str(reports[0]),
        "new": str(reports[1]),
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{tmp}/missing.jsonl", "{new}"], "no such report file: {tmp}/missing.jsonl"),
        (["{tmp}", "{new}"], "not a report file: {tmp} is a directory"),
        (["--db", "{db}", "run:2", "run:9"], "unknown run id 9 in {db}"),
        (["--db", "{tmp}/nothing.sqlite3", "run:1", "run:2"], "no history database at"),
        (["--db", "{db}", "run:two", "run:3"], "bad run reference 'run:two'"),
        (["{old}"], "expected two arguments, OLD and NEW (got 1)"),
        (["{old}", "{new}", "{new}"], "(got 3)"),
        (["--db", "{new}", "run:1", "run:2"], "not a usable history database"),
        (["--db", "{tmp}/other.sqlite3", "run:1", "run:2"], "is not a history database"),
        (["{old}", "{tmp}/broken.jsonl"], "broken.jsonl, line 1: not a JSON record"),
        (["--bogus", "{old}", "{new}"], "unknown option --bogus"),
        # Not complete audits, or not of one site: every missing line would read as a change.
        (["{old}", "{tmp}/empty.jsonl"], "{tmp}/empty.jsonl: no summary record, so not a fini"),
        (["{old}", "{tmp}/cut.jsonl"], "{tmp}/cut.jsonl: no summary record"),
        (["{tmp}/stopped.jsonl", "{new}"], 'summary says "complete": false'),
        (["{old}", "{tmp}/other.jsonl"], "the runs audit different sites"),
        (
            ["--db", "{db}", "run:1", "run:3"],
            "run:1: the run has no summary (the audit was forced to stop",
        ),
        (["--db", "{db}", "run:1", f"run:{2**63}"], "no run has so large an id"),
        (["{old}", "{tmp}/" + "x" * 300], "File name too long"),
        (["--db", "{tmp}/" + "x" * 300, "run:1", "run:2"], "cannot use the history database"),
        (["{old}", "{tmp}/cut.jsonl.gz"], "cut.jsonl.gz: broken gzip data"),
    ],
)
def test_bad_usage_exits_with_status_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    names: dict[str, str],
    args: list[str],
    message: str,
) -> None:
    code, out, err = run_command(monkeypatch, capsys, *(a.format(**names) for a in args))
    assert code == 2
    assert out == ""
    assert message.format(**names) in err
    assert "Traceback" not in err


def test_the_scrapy_command_line(reports: tuple[Path, Path], tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", COMMAND, str(reports[0]), str(reports[1])],
        cwd=PROJECT,
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()] == EXPECTED
    assert f"{E}/caf\u00e9".encode() in done.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "scrapy", COMMAND, str(tmp_path / "no.jsonl"), "run:1"],
        cwd=PROJECT,
        capture_output=True,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stdout == b""
    assert b"no such report file" in missing.stderr.splitlines()[-1]


def test_the_command_is_listed(tmp_path: Path) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "scrapy"], cwd=PROJECT, capture_output=True, check=False
    )
    assert f"  {COMMAND} ".encode() in listed.stdout
