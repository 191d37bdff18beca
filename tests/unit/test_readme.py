"""The README is the user's manual: every finding code and every setting is in it, as coded."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from sitemapaudit.checks.registry import ALL_CHECKS
from sitemapaudit.defaults import SETTINGS

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


def _table(name: str) -> list[list[str]]:
    block = README.split(f"<!-- {name}:start -->")[1].split(f"<!-- {name}:end -->")[0]
    rows = [line for line in block.strip().splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def test_every_finding_code_is_documented_with_its_severity() -> None:
    documented = {(row[0].strip("`"), row[1]): row[2] for row in _table("codes")}
    coded = {(check.code, check.record): check.severity.value for check in ALL_CHECKS}
    assert documented == coded


def test_every_setting_is_documented_with_type_default_and_meaning() -> None:
    documented = {row[0].strip("`"): (row[1], row[2], row[3]) for row in _table("settings")}
    assert set(documented) == set(SETTINGS)
    for name, (default, kind, meaning) in SETTINGS.items():
        doc_kind, doc_default, doc_meaning = documented[name]
        assert doc_kind == kind, name
        assert doc_meaning == meaning, name
        if isinstance(default, list):
            assert re.findall(r"`([^`]+)`", doc_default) == default, name
        else:
            assert doc_default == f"`{json.dumps(default)}`", name


def test_the_readme_shows_the_two_commands() -> None:
    assert "scrapy crawl audit -a domain=example.com -O report.jsonl" in README
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    test_command = next(line for line in ci.splitlines() if "pytest" in line)
    assert test_command.replace(" -q", "") in README


def test_every_change_type_is_documented() -> None:
    from sitemapaudit.history.diff import CHANGES

    documented = {row[0].strip("`"): row[1] for row in _table("changes")}
    assert documented == CHANGES


def test_the_cron_line_works_in_a_fresh_checkout(tmp_path: Path) -> None:
    """``reports/`` is not in a clone (git ignores it), and the shell opens the log's
    redirection before the audit would make the directory."""
    (line,) = [line for line in README.splitlines() if re.match(r"\d+ \d+ \* \* \* cd ", line)]
    command = line.split(" ", 5)[5].replace("\\%", "%")  # (cron's escape)
    assert command.startswith("cd /srv/sitemapaudit && ")
    command = command.replace("/srv/sitemapaudit", str(tmp_path), 1)
    scrapy = tmp_path / ".venv" / "bin" / "scrapy"
    scrapy.parent.mkdir(parents=True)
    scrapy.write_text('#!/bin/sh\necho "scrapy $*"\n')
    scrapy.chmod(0o755)
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "reports" / "cron.log").read_text()
    assert log.startswith("scrapy crawl audit -a domain=example.com")
