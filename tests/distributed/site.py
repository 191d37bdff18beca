"""A test site of a few thousand URLs for the distributed audit, with every kind of finding
spread over an index of sitemaps (one of them gzip), and pages that take a little time to
answer, so that several workers visibly share the work."""

from __future__ import annotations

import gzip

from tests.support.golden_site import XML, html, index, url, urlset
from tests.support.server import Page, Route, TestSite

LM = "Wed, 01 May 2024 10:00:00 GMT"
LASTMOD = "2024-05-01T10:00:00+00:00"
ALT = '<xhtml:link rel="alternate" hreflang="{lang}" href="{{base}}{href}"/>'
NS_XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def page_for(number: int, delay: float) -> Page:
    """The page of /p/<number>, its kind chosen by the last digit."""
    kind = number % 10
    if kind == 1:
        return Page(status=404, body="gone", delay=delay)
    if kind == 2:
        return Page(status=301, headers=[("Location", f"{{base}}/moved/{number}")], delay=delay)
    if kind == 3:
        return Page(body=html('<meta name="robots" content="noindex">'), delay=delay)
    if kind == 4:
        return Page(body=html(), headers=[("X-Robots-Tag", "noindex")], delay=delay)
    if kind == 5:
        return Page(body=html('<link rel="canonical" href="{base}/p/0">'), delay=delay)
    return Page(body=html(), headers=[("Last-Modified", LM)], delay=delay)


def entry(number: int) -> str:
    # Numbers ending in 6 say 2020 while the page says May 2024: lastmod_mismatch.
    lastmod = "2020-01-01" if number % 10 == 6 else LASTMOD
    return url(f"{{base}}/p/{number}", lastmod)


def routes(urls: int = 2400, sitemaps: int = 4, delay: float = 0.01) -> dict[str, Route]:
    per = urls // sitemaps
    table: dict[str, Route] = {
        "/robots.txt": Page(
            body="User-agent: *\nDisallow: /p/7\nSitemap: {base}/sitemap_index.xml\n",
            content_type="text/plain",
        ),
        "/": Page(body=html()),
    }
    names = []
    for s in range(sitemaps):
        entries = [entry(n) for n in range(s * per, (s + 1) * per)]
        # Every sitemap also lists the first page of the next one: URLs listed twice.
        entries.append(entry(((s + 1) % sitemaps) * per))
        body = urlset(*entries)
        if s == sitemaps - 1:
            names.append(f"/sitemap-{s}.xml.gz")
            table[names[-1]] = _gzipped(body)
        else:
            names.append(f"/sitemap-{s}.xml")
            table[names[-1]] = Page(body=body, content_type=XML)
    # hreflang: /p/0 names /p/10 as its German page; /p/10 does not link back.
    table["/sitemap-lang.xml"] = Page(
        body=(
            f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" {NS_XHTML}>\n'
            f"  <url><loc>{{base}}/p/0</loc><lastmod>{LASTMOD}</lastmod>"
            f"{ALT.format(lang='de', href='/p/10')}</url>\n"
            f"  <url><loc>{{base}}/p/10</loc><lastmod>{LASTMOD}</lastmod></url>\n"
            f"  <url><loc>https://elsewhere.example/x</loc></url>\n"
            "</urlset>\n"
        ),
        content_type=XML,
    )
    names.append("/sitemap-lang.xml")
    names.append("/missing.xml")
    table["/sitemap_index.xml"] = Page(
        body=index(*(f"{{base}}{name}" for name in names)), content_type=XML
    )
    for number in range(urls):
        table[f"/p/{number}"] = page_for(number, delay)
        if number % 10 == 2:
            table[f"/moved/{number}"] = Page(body=html(), headers=[("Last-Modified", LM)])
    return table


def _gzipped(body: str) -> Route:
    def serve(site: TestSite, path: str) -> Page:
        data = gzip.compress(body.replace("{base}", site.base).encode())
        return Page(body=data, content_type="application/gzip")

    return serve
