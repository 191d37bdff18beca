"""The shipped XSDs are found from a wheel, from a zipped egg and from the source tree, and
both artefacts carry every data file of the package (the HTML report's assets included).

Both builds run offline on a copy of the project (so the checkout gets no build/ or
egg-info directories): the wheel with ``pip wheel --no-deps --no-build-isolation --no-index``,
the egg the way scrapyd-deploy builds one, ``python setup.py clean -a bdist_egg -d DIR``.
The built artefact is then imported by a fresh interpreter that cannot see the checkout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sitemapaudit.validation.schemas import SCHEMA_FILES, WRAPPER_FILE, schema_files
from tests.validation.conftest import REPO

pytestmark = pytest.mark.packaging

SHIPPED = sorted([WRAPPER_FILE, *SCHEMA_FILES])

PROBE = r"""
import io, json, sys
sys.path.insert(0, sys.argv[1])
import sitemapaudit
from sitemapaudit.report.html import HtmlReport
from sitemapaudit.validation import validate_document
from sitemapaudit.validation.schemas import schema_files
found = schema_files()
page = io.StringIO()
HtmlReport().write(page)
problems = validate_document(
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    b'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">'
    b'<url><loc>https://www.example.com/</loc><changefreq>Daily</changefreq>'
    b'<video:video><video:title>t</video:title></video:video></url></urlset>'
)
print(json.dumps({
    "module": sitemapaudit.__file__,
    "origin": found.origin,
    "location": found.location,
    "files": sorted(found.files),
    "messages": [p.message for p in problems if p.code == "schema_invalid"],
    "page": page.getvalue(),
}))
"""


def _package_data() -> set[str]:
    """Every file of the package that is not Python source, by its path in a built artefact:
    ``sitemapaudit/...``, and the top-level ``schemas/`` as ``sitemapaudit/schemas/``."""
    names = set()
    for top, prefix in (("sitemapaudit", "sitemapaudit/"), ("schemas", "sitemapaudit/schemas/")):
        for path in (REPO / top).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc"):
                names.add(prefix + path.relative_to(REPO / top).as_posix())
    return names


def _project_copy(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for name in ("pyproject.toml", "setup.py", "README.md", "scrapy.cfg", "LICENSE"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, project / name)
    shutil.copytree(REPO / "sitemapaudit", project / "sitemapaudit", ignore=ignore)
    shutil.copytree(REPO / "schemas", project / "schemas", ignore=ignore)
    return project


def _probe(path_entry: Path, cwd: Path) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(path_entry)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    output: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return output


def _check(output: dict[str, object], inside: Path) -> None:
    assert str(output["module"]).startswith(str(inside))
    assert output["origin"] == "package"
    assert str(output["location"]).startswith(str(inside))
    assert output["files"] == SHIPPED
    messages = output["messages"]
    assert isinstance(messages, list)
    assert any("changefreq 'Daily'" in str(m) for m in messages)
    assert any("/urlset/url/video:video/video:title" in str(m) for m in messages)
    # The HTML report inlines its stylesheet and script, read from the package.
    page = str(output["page"])
    for asset in ("report.css", "report.js"):
        text = (REPO / "sitemapaudit" / "report" / "assets" / asset).read_text(encoding="utf-8")
        assert text in page, asset


def test_the_package_data_is_what_the_artefacts_are_checked_for() -> None:
    assert {
        "sitemapaudit/py.typed",
        "sitemapaudit/report/assets/report.css",
        "sitemapaudit/report/assets/report.js",
        "sitemapaudit/schemas/PROVENANCE.md",
        *(f"sitemapaudit/schemas/{name}" for name in SHIPPED),
    } <= _package_data()


def test_source_tree_fallback() -> None:
    found = schema_files()
    assert found.origin == "source"
    assert Path(found.location) == REPO / "schemas"
    assert sorted(found.files) == SHIPPED
    for name in SCHEMA_FILES:
        assert found.files[name] == (REPO / "schemas" / name).read_bytes()


def test_wheel_ships_and_loads_the_schemas(tmp_path: Path) -> None:
    project = _project_copy(tmp_path)
    dist = tmp_path / "dist"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(dist),
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    [wheel] = dist.glob("sitemapaudit-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert all(name.startswith(("sitemapaudit/", "sitemapaudit-")) for name in names), (
            "the wheel installs something besides the sitemapaudit package"
        )
        shipped = sorted(
            name.rpartition("/")[2] for name in names if name.startswith("sitemapaudit/schemas/")
        )
        assert [name for name in shipped if name.endswith(".xsd")] == SHIPPED
        assert "PROVENANCE.md" in shipped
        missing = _package_data() - set(names)
        assert not missing, f"the wheel lacks {sorted(missing)}"
        site = tmp_path / "site-packages"
        archive.extractall(site)
    _check(_probe(site, tmp_path), site)


def test_egg_ships_and_loads_the_schemas_from_the_zip(tmp_path: Path) -> None:
    project = _project_copy(tmp_path)
    eggs = tmp_path / "eggs"
    result = subprocess.run(
        [sys.executable, "setup.py", "clean", "-a", "bdist_egg", "-d", str(eggs)],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    [egg] = eggs.glob("sitemapaudit-*.egg")
    with zipfile.ZipFile(egg) as archive:
        names = set(archive.namelist())
    assert {f"sitemapaudit/schemas/{name}" for name in SHIPPED} <= names
    missing = _package_data() - names
    assert not missing, f"the egg lacks {sorted(missing)}"
    output = _probe(egg, tmp_path)
    _check(output, egg)
    assert ".egg/sitemapaudit/schemas" in str(output["location"])
