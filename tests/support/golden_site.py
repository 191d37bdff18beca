"""The golden test site: every discovery path, format and finding code of the audit crawl.

``EXPECTED_URLS`` and ``EXPECTED_SITEMAPS`` are the findings a correct audit reports; the
end-to-end tests compare a real crawl of this site against them.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable
from email.utils import formatdate

from tests.support.server import Page, TestSite

XML = "application/xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
LM_2024 = "Wed, 01 May 2024 10:00:00 GMT"


def urlset(*entries: str) -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n'
        + "\n".join(entries)
        + "\n</urlset>\n"
    )


def conditional(body: str, etag: str) -> object:
    """A sitemap route that answers 304 to a request with ``If-None-Match: etag``, and
    ``body`` with that ETag otherwise."""

    def route(site: TestSite, path: str) -> Page:
        if site.request_headers[path].get("if-none-match") == etag:
            return Page(status=304, content_type=None)
        return Page(body=body, content_type=XML, headers=[("ETag", etag)])

    return route


def url(loc: str, lastmod: str | None = None) -> str:
    extra = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return f"  <url><loc>{loc}</loc>{extra}</url>"


def index(*locs: str) -> str:
    items = "\n".join(f"  <sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n{items}\n</sitemapindex>\n'
    )


def html(head: str = "", body: str = "<p>hello</p>") -> str:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


def page(head: str = "", body: str = "<p>hello</p>", **kwargs: object) -> Page:
    return Page(body=html(head, body), **kwargs)  # type: ignore[arg-type]


def slow_pages(seconds: float) -> Callable[[TestSite, str], Page]:
    """A route answering a small page after ``seconds``: the pages of an audit still running
    when a test stops it."""

    def route(site: TestSite, path: str) -> Page:
        time.sleep(seconds)
        return Page(body="<html><head></head><body>x</body></html>")

    return route


def generated(site: TestSite, path: str) -> Page:
    now = formatdate(usegmt=True)
    return Page(body=html(), headers=[("Last-Modified", now)])


LONG = "/long-" + "x" * 2100

PAGES = urlset(
    url("{base}/ok", "2024-05-01T10:00:00Z"),
    url("{base}/ok-tz", "2024-05-01T12:00:00+02:00"),
    url("{base}/lastmod-dateonly", "2024-05-01"),
    url("  {base}/a&amp;b  "),
    url("{base}/redirect"),
    url("{base}/loop"),
    url("{base}/redirect-noloc"),
    url("{base}/redirect-blocked"),
    url("{base}/redirect-utf8"),
    url("{base}/caf%C3%A9%20menu"),
    url("{base}/gone"),
    url("{base}/error"),
    url("{base}/dropped"),
    url("{base}/noindex-meta"),
    url("{base}/noindex-header"),
    url("{base}/nofollow"),
    url("{base}/body-noindex"),
    url("{base}/bingbot-header"),
    url("{base}/expired"),
    url("{base}/expires-later"),
    url("{base}/private/page"),
    url("{base}/canonical-other"),
    url("{base}/canonical-header"),
    url("{base}/canonical-self"),
    url("{base}/canonical-self#reviews"),
    url("{base}/canonical-conflict"),
    url("{base}/head-broken"),
    url("{base}/refresh-meta"),
    url("{base}/refresh-self"),
    url("{base}/refresh-header"),
    url("{base}/refresh-noscript"),
    url("{base}/lastmod-bad", "2024-13-45"),
    url("{base}/lastmod-future", "2099-01-01"),
    url("{base}/lastmod-mismatch", "2020-01-01T00:00:00Z"),
    url("{base}/lastmod-generated", "2024-05-01"),
    url("{base}/lastmod-none", "2024-05-01"),
    url("{base}/dup"),
    url("{base}/dup"),
    url("relative/page"),
    url("javascript:alert(1)"),
    url("{base}" + LONG),
    url("http://other.example/page"),
    url("{base}/pdf"),
)

BROKEN = (
    f'<?xml version="1.0"?>\n<urlset {NS}>\n'
    "  <url><loc>{base}/before-break-1</loc></url>\n"
    "  <url><loc>{base}/before-break-2</loc></url>\n"
    "  <url><loc>{base}/b&c</loc></url>\n"
    "  <url><loc>{base}/after-break</loc></url>\n</urlset>\n"
)

RSS = """<?xml version="1.0"?>
<rss version="2.0"><channel><title>t</title><link>{base}/</link>
<item><title>a</title><link>{base}/rss-item</link>
<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>
</channel></rss>
"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>x</id>
<updated>2024-05-01T10:00:00Z</updated>
<entry><title>a</title><id>y</id><link href="{base}/atom-entry"/>
<updated>2024-05-01T10:00:00Z</updated></entry>
</feed>
"""

ROBOTS = """User-agent: *
Disallow: /private/

Sitemap: /sitemap_index.xml
sitemap :  //{host}/extra-sitemap.txt
Sitemap:
"""


def gzipped_pages(site: TestSite, path: str) -> Page:
    body = urlset(url("{base}/gz-page"), url("{base}/dup")).replace("{base}", site.base)
    return Page(body=gzip.compress(body.encode()), content_type="application/octet-stream")


def routes(host: str) -> dict[str, object]:
    ok = Page(body=html(), headers=[("Last-Modified", LM_2024)])
    return {
        "/robots.txt": Page(body=ROBOTS.replace("{host}", host), content_type="text/plain"),
        "/": page(
            '<link rel="sitemap" type="application/rss+xml" href="/feed.xml">',
            headers=[("Link", '</atom.xml>; rel="sitemap"')],
        ),
        "/sitemap_index.xml": Page(
            body=index(
                "{base}/pages.xml",
                "{base}/pages.xml.gz",
                "{base}/fake.xml.gz",
                "{base}/nested-index.xml",
                "{base}/broken.xml",
                "{base}/missing.xml",
                "{base}/html.xml",
                "{base}/empty.xml",
                "http://other.example/sitemap.xml",
                "{base}/query.xml?page=1",
                "{base}/encoded.xml",
                "{base}/sub/scoped.xml",
                "{base}/sitemap_index.xml",
            ),
            content_type=XML,
        ),
        "/pages.xml": Page(body=PAGES, content_type=XML),
        "/pages.xml.gz": gzipped_pages,
        "/fake.xml.gz": Page(body=urlset(url("{base}/fake-gz-page")), content_type=XML),
        "/nested-index.xml": Page(
            body=index("{base}/deep.xml", "{base}/sitemap_index.xml"), content_type=XML
        ),
        "/deep.xml": Page(body=urlset(url("{base}/deep-page")), content_type=XML),
        "/broken.xml": Page(body=BROKEN, content_type=XML),
        "/html.xml": page(),
        "/empty.xml": Page(body=urlset(), content_type=XML),
        "/query.xml?page=1": Page(body=urlset(url("{base}/query-page")), content_type="text/html"),
        "/encoded.xml": Page(
            body=urlset(url("{base}/encoded-page")), content_type=XML, gzip_encoding=True
        ),
        "/sub/scoped.xml": Page(
            body=urlset(url("{base}/sub/inside"), url("{base}/outside"), url("{base}/sub/../up")),
            content_type=XML,
        ),
        "/extra-sitemap.txt": Page(
            body="{base}/text-page-1\n\n{base}/text-page-2\n", content_type="text/plain"
        ),
        "/feed.xml": Page(body=RSS, content_type="application/rss+xml"),
        "/atom.xml": Page(body=ATOM, content_type="application/atom+xml"),
        # pages
        "/ok": ok,
        "/ok-tz": ok,
        "/lastmod-dateonly": Page(
            body=html(), headers=[("Last-Modified", "Wed, 01 May 2024 23:30:00 GMT")]
        ),
        "/a&b": page(),
        "/redirect": Page(status=301, headers=[("Location", "/redirect-hop")]),
        "/redirect-hop": Page(status=302, headers=[("Location", "{base}/ok")]),
        "/loop": Page(status=302, headers=[("Location", "/loop2")]),
        "/redirect-noloc": Page(status=301),
        "/redirect-blocked": Page(status=301, headers=[("Location", "/private/target")]),
        # The Location as raw UTF-8 bytes, with a space: followed as a browser follows it.
        "/redirect-utf8": Page(
            status=301, headers=[("Location", "/caf\u00e9 menu".encode().decode("latin-1"))]
        ),
        # A canonical written as an IRI names this page.
        "/caf%C3%A9%20menu": page('<link rel="canonical" href="/caf\u00e9 menu">'),
        "/loop2": Page(status=302, headers=[("Location", "/loop")]),
        "/gone": Page(status=404, body="gone"),
        "/error": Page(status=500, body="boom"),
        "/dropped": Page(drop=True),
        "/noindex-meta": page('<meta name="ROBOTS" content="NOINDEX, follow">'),
        "/noindex-header": page(headers=[("X-Robots-Tag", "googlebot: noindex")]),
        "/nofollow": page('<meta name="robots" content="nofollow">'),
        "/body-noindex": page(body="<p>Please noindex this, we say noindex in text.</p>"),
        "/bingbot-header": page(headers=[("X-Robots-Tag", "bingbot: noindex")]),
        "/expired": page(
            '<meta name="robots" content="unavailable_after: 25 Jun 2010 15:00:00 PST">'
        ),
        "/expires-later": page(headers=[("X-Robots-Tag", "unavailable_after: 2999-01-01")]),
        "/private/page": page(),
        "/canonical-other": page('<link rel="canonical" href="/ok">'),
        "/canonical-header": page(headers=[("Link", '<{base}/ok>; rel="canonical"')]),
        "/canonical-self": page('<link rel="canonical" href="{base}/canonical-self">'),
        # A tracking pixel in the head: the noindex after it is body content, ignored.
        "/head-broken": page('<img src="/pixel.gif"><meta name="robots" content="noindex">'),
        "/canonical-conflict": page(
            '<link rel="canonical" href="/canonical-conflict"><link rel="canonical" href="/ok">'
        ),
        "/refresh-meta": page('<meta http-equiv="refresh" content="0; url=/ok">'),
        "/refresh-self": page('<meta http-equiv="refresh" content="60">'),
        "/refresh-header": page(headers=[("Refresh", "5; url={base}/ok")]),
        "/refresh-noscript": page(
            '<noscript><meta http-equiv="refresh" content="0; url=/ok"></noscript>'
        ),
        "/lastmod-bad": page(),
        "/lastmod-future": page(),
        "/lastmod-mismatch": ok,
        "/lastmod-generated": generated,
        "/lastmod-none": page(),
        "/dup": page(),
        LONG: page(),
        "/pdf": Page(
            body=b"%PDF-1.4 noindex",
            content_type="application/pdf",
            headers=[("X-Robots-Tag", "noindex")],
        ),
        "/gz-page": page(),
        "/fake-gz-page": page(),
        "/deep-page": page(),
        "/before-break-1": page(),
        "/before-break-2": page(),
        "/query-page": page(),
        "/encoded-page": page(),
        "/sub/inside": page(),
        "/outside": page(),
        "/up": page(),  # listed as /sub/../up, requested as browsers request it
        "/text-page-1": page(),
        "/text-page-2": page(),
        "/rss-item": ok,
        "/atom-entry": ok,
    }


B = "{base}"

EXPECTED_SITEMAPS: dict[str, tuple[str, str, list[str]]] = {
    # url: (found_via, kind, issues)
    f"{B}/sitemap_index.xml": ("robots.txt", "sitemapindex", ["index_cycle"]),
    f"{B}/extra-sitemap.txt": ("robots.txt", "text", []),
    f"{B}/feed.xml": ("html-link", "rss", []),
    f"{B}/atom.xml": ("link-header", "atom", []),
    f"{B}/pages.xml": ("index", "urlset", ["schema_invalid"]),
    f"{B}/pages.xml.gz": ("index", "urlset", []),
    f"{B}/fake.xml.gz": ("index", "urlset", []),
    f"{B}/nested-index.xml": ("index", "sitemapindex", ["index_cycle", "nested_index"]),
    f"{B}/deep.xml": ("index", "urlset", []),
    f"{B}/broken.xml": ("index", "urlset", ["xml_malformed", "unescaped_characters"]),
    f"{B}/missing.xml": ("index", "unknown", ["http_error"]),
    f"{B}/html.xml": ("index", "unknown", ["not_a_sitemap"]),
    f"{B}/empty.xml": ("index", "urlset", ["empty", "schema_invalid"]),
    "http://other.example/sitemap.xml": ("index", "unknown", ["off_host"]),
    f"{B}/query.xml?page=1": ("index", "urlset", []),
    f"{B}/encoded.xml": ("index", "urlset", []),
    f"{B}/sub/scoped.xml": ("index", "urlset", []),
}

EXPECTED_URLS: dict[str, list[str]] = {
    f"{B}/ok": [],
    f"{B}/ok-tz": [],
    f"{B}/lastmod-dateonly": [],
    f"{B}/a&b": [],
    f"{B}/redirect": ["redirect"],
    f"{B}/loop": ["redirect", "redirect_loop"],
    f"{B}/redirect-noloc": ["redirect", "redirect_broken"],
    f"{B}/redirect-blocked": ["redirect", "redirect_blocked"],
    f"{B}/redirect-utf8": ["redirect"],
    f"{B}/caf%C3%A9%20menu": [],
    f"{B}/gone": ["http_error"],
    f"{B}/error": ["http_error"],
    f"{B}/dropped": ["fetch_failed"],
    f"{B}/noindex-meta": ["noindex"],
    f"{B}/noindex-header": ["noindex"],
    f"{B}/nofollow": [],
    f"{B}/body-noindex": [],
    f"{B}/bingbot-header": [],
    f"{B}/expired": ["noindex"],
    f"{B}/expires-later": [],
    f"{B}/private/page": ["robots_blocked"],
    f"{B}/canonical-other": ["canonical_mismatch"],
    f"{B}/canonical-header": ["canonical_mismatch"],
    f"{B}/canonical-self": [],
    f"{B}/canonical-self#reviews": ["url_fragment"],
    f"{B}/canonical-conflict": ["canonical_conflict"],
    f"{B}/head-broken": ["head_broken"],
    f"{B}/refresh-meta": ["meta_refresh"],
    f"{B}/refresh-self": [],
    f"{B}/refresh-header": ["meta_refresh"],
    f"{B}/refresh-noscript": [],
    f"{B}/lastmod-bad": ["lastmod_invalid"],
    f"{B}/lastmod-future": ["lastmod_future", "lastmod_unverifiable"],
    f"{B}/lastmod-mismatch": ["lastmod_mismatch"],
    f"{B}/lastmod-generated": ["lastmod_unverifiable"],
    f"{B}/lastmod-none": ["lastmod_unverifiable"],
    f"{B}/dup": ["duplicate"],
    "relative/page": ["invalid_url"],
    "javascript:alert(1)": ["invalid_url"],
    f"{B}{LONG}": ["url_too_long"],
    "http://other.example/page": ["off_host"],
    f"{B}/pdf": ["noindex"],
    f"{B}/gz-page": [],
    f"{B}/fake-gz-page": [],
    f"{B}/deep-page": [],
    f"{B}/before-break-1": [],
    f"{B}/before-break-2": [],
    f"{B}/query-page": [],
    f"{B}/encoded-page": [],
    f"{B}/sub/inside": [],
    f"{B}/outside": ["out_of_scope"],
    f"{B}/sub/../up": ["out_of_scope"],  # its path is /up: outside /sub/
    f"{B}/text-page-1": [],
    f"{B}/text-page-2": [],
    f"{B}/rss-item": [],
    f"{B}/atom-entry": [],
}
