"""The floor: fetch a sitemap index and its gzip sitemaps over one keep-alive connection and
count <loc> entries with a streaming lxml parser target (nothing kept in memory).

    python floor_lxml.py INDEX_URL [OUT.jsonl]

With ``OUT.jsonl`` it also writes one JSON line per URL (its ``loc`` and ``lastmod``, the
line's constant text joined around the two escaped strings): the least a tool that records
every listed URL has to do, without validation, duplicate detection or any check."""

from __future__ import annotations

import http.client
import json
import sys
import time
import urllib.parse
import zlib
from contextlib import nullcontext
from json.encoder import encode_basestring
from typing import TextIO

from lxml import etree

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class Counter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.urls = 0
        self.children: list[str] = []
        self._in_loc = False
        self._text: list[str] = []
        self._parent = ""
        self._out = out
        self._in_lastmod = False
        self._lastmod: list[str] = []
        self._loc = ""

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if tag == NS + "loc":
            self._in_loc = True
            self._text = []
        elif tag == NS + "lastmod" and self._out is not None:
            self._in_lastmod = True
        elif tag in (NS + "url", NS + "sitemap"):
            self._parent = tag
            self._lastmod = []

    def end(self, tag: str) -> None:
        if tag == NS + "loc":
            self._in_loc = False
            if self._parent == NS + "sitemap":
                self.children.append("".join(self._text).strip())
            else:
                self.urls += 1
                self._loc = "".join(self._text).strip()
        elif tag == NS + "lastmod":
            self._in_lastmod = False
        elif tag == NS + "url" and self._out is not None:
            lastmod = "".join(self._lastmod).strip()
            self._out.write(
                '{"url": '
                + encode_basestring(self._loc)
                + ', "lastmod": '
                + (encode_basestring(lastmod) if lastmod else "null")
                + "}\n"
            )

    def data(self, text: str) -> None:
        if self._in_loc:
            self._text.append(text)
        elif self._in_lastmod:
            self._lastmod.append(text)

    def close(self) -> None:
        pass


def fetch_parse(conn: http.client.HTTPConnection, path: str, counter: Counter) -> None:
    conn.request("GET", path, headers={"Accept-Encoding": "identity"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise SystemExit(f"{path}: HTTP {resp.status}")
    parser = etree.XMLParser(
        target=counter, resolve_entities=False, no_network=True, huge_tree=True
    )
    first = resp.read(65536)
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if first[:2] == b"\x1f\x8b" else None
    chunk = first
    while chunk:
        parser.feed(inflate.decompress(chunk) if inflate else chunk)
        chunk = resp.read(65536)
    if inflate:
        parser.feed(inflate.flush())
    parser.close()


def main() -> None:
    index_url = sys.argv[1]
    parts = urllib.parse.urlsplit(index_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    start = time.perf_counter()
    index = Counter()
    fetch_parse(conn, parts.path, index)
    with open(sys.argv[2], "w", encoding="utf-8") if len(sys.argv) > 2 else nullcontext() as out:
        total = Counter(out)
        for child in index.children:
            fetch_parse(conn, urllib.parse.urlsplit(child).path, total)
    print(
        json.dumps(
            {
                "urls": total.urls,
                "sitemaps": len(index.children),
                "seconds": time.perf_counter() - start,
            }
        )
    )


if __name__ == "__main__":
    main()
