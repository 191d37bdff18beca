"""Validation never follows schemaLocation hints, external entities or http imports.

The hostile document below names an http server on 127.0.0.1 (which counts connections), a
FIFO (opening it for reading would block forever, so any attempt hangs the run) and
/etc/passwd, through ``xsi:schemaLocation``, ``xsi:noNamespaceSchemaLocation``, external
entities and an XInclude. It is validated in a subprocess with an audit hook that records
every Python-level ``open`` and socket call; when ``strace`` is available the same run is
traced at the system-call level, which also covers libxml2's own file and socket access.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from sitemapaudit.validation.schemas import (
    WRAPPER_FILE,
    SchemaLoadError,
    compile_schema,
    schema_files,
)
from tests.validation.conftest import REPO

HOSTILE = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE urlset [
  <!ENTITY remote SYSTEM "http://127.0.0.1:{port}/entity">
  <!ENTITY passwd SYSTEM "file:///etc/passwd">
  <!ENTITY fifo SYSTEM "file://{fifo}">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
        xmlns:xi="http://www.w3.org/2001/XInclude"
        xmlns:evil="urn:example:evil"
        xsi:schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9
                            http://127.0.0.1:{port}/sitemap.xsd
                            urn:example:evil file:///etc/passwd
                            http://www.w3.org/1999/xhtml file://{fifo}"
        xsi:noNamespaceSchemaLocation="file:///etc/passwd">
  <url><loc>https://www.example.com/&remote;</loc></url>
  <url><loc>https://www.example.com/&passwd;/&fifo;</loc><evil:thing/></url>
  <url><loc>https://www.example.com/x</loc><changefreq>Daily</changefreq></url>
  <url><loc><xi:include href="file:///etc/passwd" parse="text"/></loc></url>
</urlset>
"""

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
data = open(sys.argv[2], "rb").read()
from sitemapaudit.validation import validate_document, load_schema
from sitemapaudit.validation.hreflang import iter_alternates
events = []
def hook(event, args):
    if event == "open":
        events.append(["open", str(args[0])])
    elif event.startswith(("socket.", "urllib.", "http.")):
        events.append([event, repr(args)])
validate_document(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>')
list(iter_alternates(b'<urlset/>'))
sys.addaudithook(hook)
problems = validate_document(data)
alternates = list(iter_alternates(data))
print(json.dumps({
    "events": events,
    "problems": [[p.code, p.message] for p in problems],
}))
"""


class _Listener:
    """A TCP server on 127.0.0.1 that only counts the connections it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    server = _Listener()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def hostile(tmp_path: Path, listener: _Listener) -> Path:
    fifo = tmp_path / "trap.fifo"
    os.mkfifo(fifo)
    document = tmp_path / "hostile.xml"
    document.write_text(HOSTILE.format(port=listener.port, fifo=fifo))
    return document


def _run_child(document: Path, prefix: list[str] | None = None) -> dict[str, list[list[str]]]:
    command = [*(prefix or []), sys.executable, "-c", CHILD, str(REPO), str(document)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    output: dict[str, list[list[str]]] = json.loads(result.stdout.strip().splitlines()[-1])
    return output


def test_hostile_document_is_validated_offline(hostile: Path, listener: _Listener) -> None:
    output = _run_child(hostile)
    assert output["events"] == []
    assert listener.connections == 0
    codes = [code for code, _ in output["problems"]]
    assert "entity_reference" in codes
    assert "unknown_extension" in codes
    messages = "\n".join(message for _, message in output["problems"])
    assert "/urlset/url[3]/changefreq: changefreq 'Daily'" in messages
    assert "root:" not in messages


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_hostile_document_system_calls(hostile: Path, listener: _Listener, tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    probe = subprocess.run(
        ["strace", "-f", "-o", os.devnull, "true"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip("strace cannot trace here")
    prefix = ["strace", "-f", "-e", "trace=open,openat,connect", "-o", str(trace)]
    _run_child(hostile, prefix)
    calls = trace.read_text()
    assert "/etc/passwd" not in calls
    assert "trap.fifo" not in calls
    assert f"htons({listener.port})" not in calls
    assert "connect(" not in calls or "AF_INET" not in calls
    assert listener.connections == 0


def test_schema_build_reads_only_the_shipped_files() -> None:
    shipped = schema_files()
    _schema, requests = compile_schema(shipped.files)
    assert requests == [
        "sitemapaudit-schemas:/sitemap.xsd",
        "sitemapaudit-schemas:/siteindex.xsd",
        "sitemapaudit-schemas:/sitemap-image.xsd",
        "sitemapaudit-schemas:/sitemap-video.xsd",
        "sitemapaudit-schemas:/sitemap-news.xsd",
        "sitemapaudit-schemas:/xhtml1-strict.xsd",
        "http://www.w3.org/2001/xml.xsd",
    ]


@pytest.mark.parametrize(
    "location", ["http://127.0.0.1:9/evil.xsd", "file:///etc/passwd", "../../etc/passwd"]
)
def test_schema_resolver_refuses_anything_else(location: str) -> None:
    files = dict(schema_files().files)
    files[WRAPPER_FILE] = (
        b'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">'
        b'<xsd:import namespace="urn:example:evil" schemaLocation="'
        + location.encode()
        + b'"/></xsd:schema>'
    )
    with pytest.raises((SchemaLoadError, etree.XMLSchemaParseError)):
        compile_schema(files)
