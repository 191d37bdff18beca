"""Checks on sitemap records: fetching, reading and the shape of the sitemap tree."""

from __future__ import annotations

from sitemapaudit.checks.base import CheckContext, ProblemCheck, Severity, SitemapCheck
from sitemapaudit.checks.fetching import error_status_detail
from sitemapaudit.facts import SitemapFacts


class SitemapHttpError(SitemapCheck):
    """The sitemap answered with a 4xx or 5xx status (after retries), or with a 3xx that
    redirects nowhere (300, a 304 to a request that was not conditional): nothing to read."""

    code = "http_error"
    severity = Severity.ERROR

    def run(self, facts: SitemapFacts, ctx: CheckContext) -> list[str] | None:
        status = facts.status
        if status is None:
            return None
        if status >= 400:
            return [error_status_detail(status, facts.retry_after, ctx)]
        # A redirect that was not followed has its own finding (off_host, redirect_broken...).
        if 300 <= status < 400 and not facts.not_modified and not facts.problems:
            if status == 304:
                return ["HTTP status 304 (Not Modified) to a request that was not conditional"]
            return [f"HTTP status {status}, which redirects nowhere"]
        return None


class SitemapFetchFailed(SitemapCheck):
    """The sitemap could not be fetched at all: DNS, connection, timeout (after retries); or
    it answered 304 Not Modified and the history that kept its entries failed; or its body
    cannot be decoded as its ``Content-Encoding`` (other than gzip alone) says."""

    code = "fetch_failed"
    severity = Severity.ERROR

    def run(self, facts: SitemapFacts, ctx: CheckContext) -> list[str] | None:
        return [facts.error] if facts.error else None


class XmlMalformed(ProblemCheck):
    """The sitemap is not well-formed XML; entries before the error are still audited."""

    code = "xml_malformed"
    severity = Severity.ERROR


class NotASitemap(ProblemCheck):
    """The document is not a sitemap at all (an HTML page, an unknown root element)."""

    code = "not_a_sitemap"
    severity = Severity.ERROR


class Empty(ProblemCheck):
    """The sitemap lists no entries."""

    code = "empty"
    severity = Severity.WARNING


class TooManyUrls(ProblemCheck):
    """The sitemap lists more than 50,000 URLs, the protocol's limit."""

    code = "too_many_urls"
    severity = Severity.ERROR


class IndexTooManySitemaps(ProblemCheck):
    """The sitemap index lists more than 50,000 sitemaps, the protocol's limit."""

    code = "index_too_many_sitemaps"
    severity = Severity.ERROR


class TooLarge(ProblemCheck):
    """The sitemap is over 50 MiB (52,428,800 bytes) uncompressed, the protocol's limit."""

    code = "too_large"
    severity = Severity.ERROR


class GzipInvalid(ProblemCheck):
    """The gzip data is corrupt, truncated, or gzip again inside what search engines unwrap."""

    code = "gzip_invalid"
    severity = Severity.ERROR


class XmlEntities(ProblemCheck):
    """The document declares entities, an external DTD or an XInclude; nothing is loaded."""

    code = "xml_entities"
    severity = Severity.ERROR


class MissingLoc(ProblemCheck):
    """An entry has no `<loc>` (or an empty one), so it lists nothing."""

    code = "missing_loc"
    severity = Severity.ERROR


class IndexCycle(ProblemCheck):
    """An index lists itself or an index above it in the tree (a loop), at its URL or at one it
    redirects to; it is not read again."""

    code = "index_cycle"
    severity = Severity.WARNING


class NestedIndex(ProblemCheck):
    """A sitemap index is listed by another index; Google ignores nested indexes."""

    code = "nested_index"
    severity = Severity.WARNING


class SitemapOffHost(ProblemCheck):
    """The sitemap is on another host than the audited one (and not in SITEMAPAUDIT_SITEMAP_HOSTS),
    or redirects there; it is not fetched."""

    code = "off_host"
    severity = Severity.ERROR
    needs_document = False


class SitemapRedirectLoop(ProblemCheck):
    """The sitemap's redirects revisit a URL or exceed SITEMAPAUDIT_MAX_REDIRECTS hops."""

    code = "redirect_loop"
    severity = Severity.ERROR
    needs_document = False


class SitemapRedirect(ProblemCheck):
    """The sitemap's location redirects; robots.txt and indexes should name the final location.
    The target is read once: under this record, or under its own when the audit knows it."""

    code = "redirect"
    severity = Severity.WARNING
    needs_document = False


class SitemapRedirectBroken(ProblemCheck):
    """The sitemap answers with a redirect nobody can follow: no Location header or
    an empty one, a Location that is not an http(s) URL, or several different ones."""

    code = "redirect_broken"
    severity = Severity.ERROR
    needs_document = False


class IndexTooDeep(ProblemCheck):
    """Children of this index are deeper than SITEMAPAUDIT_MAX_INDEX_DEPTH; not fetched."""

    code = "index_too_deep"
    severity = Severity.WARNING


class SitemapLimit(ProblemCheck):
    """The audit reached SITEMAPAUDIT_MAX_SITEMAPS; further children are not fetched."""

    code = "sitemap_limit"
    severity = Severity.WARNING


class ChildInvalidUrl(ProblemCheck):
    """A sitemap location (in an index, robots.txt or the homepage) is not a valid http(s) URL;
    or the URL of an image or video in a `<url>` (`image:loc`, `video:thumbnail_loc`,
    `video:content_loc`, `video:player_loc`), or the `href` of an hreflang `xhtml:link`
    alternate, is not one, or is empty; or a `<loc>` holds an entity reference, never
    expanded (no entry, not requested)."""

    code = "invalid_url"
    severity = Severity.ERROR


class SitemapRobotsBlocked(ProblemCheck):
    """A rule of robots.txt disallows the sitemap for the audited user agent, or robots.txt
    could not be read (a 5xx or 429 answer, or none), which disallows every URL of the host:
    search engines that obey it do not fetch it (the audit reads it anyway)."""

    code = "robots_blocked"
    severity = Severity.ERROR
    needs_document = False


class IndexLastmodStale(ProblemCheck):
    """The index's `<lastmod>` for this sitemap is older than the newest `<lastmod>` the sitemap
    lists (beyond SITEMAPAUDIT_LASTMOD_TOLERANCE): crawlers that trust it may not read the
    sitemap again, and miss its changes."""

    code = "index_lastmod_stale"
    severity = Severity.WARNING


class IndexLastmodInvalid(ProblemCheck):
    """The index's `<lastmod>` for this sitemap is not a valid W3C Datetime (as for a URL's
    `<lastmod>`: a time without a time zone, which the XSD accepts, included)."""

    code = "lastmod_invalid"
    severity = Severity.WARNING
    needs_document = False


class IndexLastmodFuture(ProblemCheck):
    """The index's `<lastmod>` for this sitemap is later than the time of the audit."""

    code = "lastmod_future"
    severity = Severity.WARNING
    needs_document = False


STRUCTURE_CHECKS: tuple[type[SitemapCheck], ...] = (
    SitemapHttpError,
    SitemapFetchFailed,
    XmlMalformed,
    NotASitemap,
    Empty,
    TooManyUrls,
    IndexTooManySitemaps,
    TooLarge,
    GzipInvalid,
    XmlEntities,
    MissingLoc,
    IndexCycle,
    NestedIndex,
    SitemapOffHost,
    ChildInvalidUrl,
    SitemapRedirect,
    SitemapRedirectLoop,
    SitemapRedirectBroken,
    IndexTooDeep,
    SitemapLimit,
    SitemapRobotsBlocked,
    IndexLastmodStale,
    IndexLastmodInvalid,
    IndexLastmodFuture,
)
