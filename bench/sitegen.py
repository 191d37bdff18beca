"""Generate the local benchmark sites: gzip sitemaps behind an index, robots.txt, HTML pages.

Every page's expected audit facts (noindex source, canonical, lastmod findings) are known at
generation time and written next to the site, so a report can be checked against them.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
BASE_TIME = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)
PROTOCOL_MAX = 50_000


@dataclass
class Site:
    name: str
    root: Path
    origin: str
    index_url: str
    url_count: int
    sitemap_count: int
    urls_file: Path | None = None
    expected_file: Path | None = None
    page_bytes: int = 0
    head_bytes: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "origin": self.origin,
            "index_url": self.index_url,
            "url_count": self.url_count,
            "sitemap_count": self.sitemap_count,
            "page_bytes": self.page_bytes,
            "head_bytes": self.head_bytes,
        }


def w3c(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _split(total: int, parts: int) -> list[int]:
    parts = max(1, parts)
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _write_index(root: Path, origin: str, children: list[tuple[str, str]]) -> None:
    """The index of ``children`` (path, newest lastmod it lists): each lastmod as a sitemap
    generator writes it, the time the sitemap last changed."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f'<sitemapindex xmlns="{SITEMAP_NS}">']
    for child, lastmod in children:
        lines.append(f"  <sitemap><loc>{origin}{child}</loc><lastmod>{lastmod}</lastmod></sitemap>")
    lines.append("</sitemapindex>\n")
    (root / "sitemap_index.xml").write_text("\n".join(lines), encoding="utf-8")


def _write_common(root: Path, origin: str) -> None:
    (root / "robots.txt").write_text(
        f"User-agent: *\nAllow: /\n\nSitemap: {origin}/sitemap_index.xml\n", encoding="utf-8"
    )
    (root / "index.html").write_text(
        "<!DOCTYPE html><html><head><title>bench</title></head><body>bench</body></html>\n",
        encoding="utf-8",
    )


def urlset_bytes(entries: list[tuple[str, str]]) -> bytes:
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<urlset xmlns="{SITEMAP_NS}">\n']
    parts.extend(
        f"  <url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>\n" for loc, lastmod in entries
    )
    parts.append("</urlset>\n")
    return "".join(parts).encode("utf-8")


def write_inventory_site(root: Path, origin: str, urls: int, sitemaps: int) -> Site:
    """``sitemaps`` gzip sitemaps sharing ``urls`` URLs, behind /sitemap_index.xml."""
    root.mkdir(parents=True, exist_ok=True)
    children: list[tuple[str, str]] = []
    start = 0
    for k, count in enumerate(_split(urls, sitemaps)):
        entries = [
            (
                f"{origin}/catalog/{(start + i) // 1000:04d}/item-{start + i:07d}.html",
                w3c(BASE_TIME + timedelta(minutes=start + i)),
            )
            for i in range(count)
        ]
        start += count
        path = f"/sitemap-{k:03d}.xml.gz"
        with gzip.open(root / path.lstrip("/"), "wb", compresslevel=5) as fh:
            fh.write(urlset_bytes(entries))
        children.append((path, max(lastmod for _, lastmod in entries)))
    _write_index(root, origin, children)
    _write_common(root, origin)
    html, _ = page_html(f"{origin}/catalog/page.html", origin, 9, 2_048, 700)
    (root / "page.html").write_text(html, encoding="utf-8")
    os.utime(root / "page.html", (BASE_TIME.timestamp(), BASE_TIME.timestamp()))
    return Site(
        name=root.name,
        root=root,
        origin=origin,
        index_url=f"{origin}/sitemap_index.xml",
        url_count=urls,
        sitemap_count=len(children),
    )


_LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation "
    "ullamco laboris nisi ut aliquip ex ea commodo consequat. "
)


def _pad_head(target: int, used: int) -> str:
    out: list[str] = []
    n = 0
    while used < target - 120:
        line = f'<meta property="og:tag:{n}" content="{_LOREM[: min(150, target - used - 60)]}">\n'
        out.append(line)
        used += len(line)
        n += 1
    return "".join(out)


def _pad_body(target: int, used: int, marker: str) -> str:
    out: list[str] = [f"<h1>Item</h1>\n<p>{marker}</p>\n"]
    used += len(out[0])
    while used < target - 40:
        chunk = _LOREM[: min(len(_LOREM), target - used - 40)]
        line = f"<p>{chunk}</p>\n"
        out.append(line)
        used += len(line)
    return "".join(out)


def page_kind(i: int) -> dict[str, object]:
    """Signals of page ``i``; the same pattern for small and large pages."""
    r = i % 10
    return {
        "meta_noindex": r == 3,
        "header_noindex": r == 8,
        "canonical": "other" if r == 7 else ("none" if r == 9 else "self"),
        "lastmod_off": r == 1,
        "body_noindex_text": r == 5,
    }


def page_html(
    url: str, origin: str, i: int, total: int, head: int
) -> tuple[str, dict[str, object]]:
    kind = page_kind(i)
    first = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>Item {i}</title>\n"
        f'<meta name="description" content="Benchmark page {i}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    )
    canonical_url: str | None = None
    signals = ""
    if kind["canonical"] == "self":
        canonical_url = url
    elif kind["canonical"] == "other":
        canonical_url = f"{origin}/p/other-{i}.html"
    if canonical_url is not None:
        signals += f'<link rel="canonical" href="{canonical_url}">\n'
    if kind["meta_noindex"]:
        signals += '<meta name="robots" content="noindex, follow">\n'
    else:
        signals += '<meta name="robots" content="index, follow">\n'
    close = "</head>\n<body>\n"
    used = len(first) + len(signals) + len(close)
    padding = _pad_head(head, used)
    # The signals come last in <head>, so a reader has to see the whole head to find them.
    head_html = first + padding + signals + close
    marker = (
        "This page is not noindex; the word noindex here is body text."
        if kind["body_noindex_text"]
        else "Body text."
    )
    body = _pad_body(total, len(head_html) + len("</body>\n</html>\n"), marker)
    html = head_html + body + "</body>\n</html>\n"
    noindex: list[str] = []
    if kind["meta_noindex"]:
        noindex.append("meta:robots")
    if kind["header_noindex"]:
        noindex.append("header:x-robots-tag")
    expected = {
        "noindex": sorted(noindex),
        "canonical": canonical_url,
        "issues": sorted(
            (["noindex"] if noindex else [])
            + (["canonical_mismatch"] if kind["canonical"] == "other" else [])
            + (["lastmod_mismatch"] if kind["lastmod_off"] else [])
        ),
        "head_bytes": len(head_html),
        "page_bytes": len(html.encode("utf-8")),
    }
    return html, expected


def write_page_site(root: Path, origin: str, pages: int, size: str) -> Site:
    """``pages`` static HTML pages (``small`` ~2 KB, ``large`` 200 KB with a ~5 KB head),
    listed by gzip sitemaps behind /sitemap_index.xml. Pages whose number ends in 8 live under
    /px/, where the server adds ``X-Robots-Tag: googlebot: noindex``."""
    total, head = (2_048, 700) if size == "small" else (200 * 1024, 5 * 1024)
    root.mkdir(parents=True, exist_ok=True)
    for sub in ("p", "px"):
        (root / sub).mkdir(exist_ok=True)
    expected: dict[str, dict[str, object]] = {}
    entries: list[tuple[str, str]] = []
    urls: list[str] = []
    sizes: list[int] = []
    heads: list[int] = []
    for i in range(pages):
        sub = "px" if page_kind(i)["header_noindex"] else "p"
        rel = f"{sub}/{i:06d}.html"
        url = f"{origin}/{rel}"
        html, facts = page_html(url, origin, i, total, head)
        path = root / rel
        path.write_text(html, encoding="utf-8")
        mtime = BASE_TIME + timedelta(minutes=i)
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
        lastmod = mtime - timedelta(days=3) if page_kind(i)["lastmod_off"] else mtime
        entries.append((url, w3c(lastmod)))
        urls.append(url)
        sizes.append(int(facts.pop("page_bytes")))  # type: ignore[call-overload]
        heads.append(int(facts.pop("head_bytes")))  # type: ignore[call-overload]
        expected[url] = facts
    children: list[tuple[str, str]] = []
    for k in range(0, len(entries), PROTOCOL_MAX):
        path = f"/sitemap-pages-{k // PROTOCOL_MAX:03d}.xml.gz"
        chunk = entries[k : k + PROTOCOL_MAX]
        with gzip.open(root / path.lstrip("/"), "wb", compresslevel=5) as fh:
            fh.write(urlset_bytes(chunk))
        children.append((path, max(lastmod for _, lastmod in chunk)))
    _write_index(root, origin, children)
    _write_common(root, origin)
    urls_file = root.parent / f"{root.name}.urls.txt"
    urls_file.write_text("\n".join(urls) + "\n", encoding="utf-8")
    expected_file = root.parent / f"{root.name}.expected.json"
    expected_file.write_text(json.dumps(expected), encoding="utf-8")
    return Site(
        name=root.name,
        root=root,
        origin=origin,
        index_url=f"{origin}/sitemap_index.xml",
        url_count=pages,
        sitemap_count=len(children),
        urls_file=urls_file,
        expected_file=expected_file,
        page_bytes=round(sum(sizes) / max(1, len(sizes))),
        head_bytes=round(sum(heads) / max(1, len(heads))),
    )


def write_validation_sitemap(path: Path, origin: str, urls: int = PROTOCOL_MAX) -> int:
    entries = [
        (f"{origin}/catalog/item-{i:07d}.html", w3c(BASE_TIME + timedelta(minutes=i)))
        for i in range(urls)
    ]
    data = urlset_bytes(entries)
    path.write_bytes(data)
    return len(data)
