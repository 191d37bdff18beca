"""Checks on how a URL is listed: URL rules and duplicates (no page request needed)."""

from __future__ import annotations

from sitemapaudit.checks.base import FILES_SITE, CheckContext, Severity, UrlCheck
from sitemapaudit.facts import UrlFacts
from sitemapaudit.urls import (
    invalid_url_reason,
    may_need_escapes,
    scope_problem,
    unescaped_characters,
)
from sitemapaudit.words import and_list, are, count_noun


class RuleCheck(UrlCheck):
    """Base for checks whose evidence is a URL rule broken when the URL was listed."""

    detail = ""
    needs_rule = True

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if self.code not in facts.rules:
            return None
        return [
            self.detail.format(url=facts.url, sitemap=facts.sitemaps[0] if facts.sitemaps else "")
        ]


class InvalidUrl(RuleCheck):
    """The `<loc>` is not an absolute http(s) URL (relative, other scheme, malformed)."""

    code = "invalid_url"
    severity = Severity.ERROR

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if self.code not in facts.rules:
            return None
        why = invalid_url_reason(facts.url)
        return [f"{facts.url!r} is not a valid http(s) URL: {why}; not requested"]


class UrlTooLong(RuleCheck):
    """The `<loc>` is longer than SITEMAPAUDIT_MAX_URL_LENGTH (2,048) characters; not fetched."""

    code = "url_too_long"
    severity = Severity.ERROR

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if self.code not in facts.rules:
            return None
        return [
            f"{len(facts.url):,} characters, more than SITEMAPAUDIT_MAX_URL_LENGTH "
            f"({ctx.config.max_url_length:,}); not requested"
        ]


class UrlOffHost(RuleCheck):
    """The URL is on another host than the audited one; not fetched. Of local files given to
    ``scrapy validate``: than the first URL they list (a sitemap lists one host's URLs)."""

    code = "off_host"
    severity = Severity.ERROR
    detail = "on another host than the audited one; not requested"

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        site = ctx.extras.get(FILES_SITE)
        if site is None or self.code not in facts.rules:
            return super().run(facts, ctx)
        return [
            f"on another host than {site}, the first URL's: a sitemap lists the URLs of one "
            "host (the site's)"
        ]


class OutOfScope(RuleCheck):
    """The URL is outside the directory of the sitemap listing it (sitemaps.org location rule;
    not for a sitemap on a SITEMAPAUDIT_SITEMAP_HOSTS host)."""

    code = "out_of_scope"
    severity = Severity.WARNING

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if self.code not in facts.rules:
            return None
        problems = (scope_problem(facts.url, sitemap) for sitemap in facts.sitemaps)
        return [next((p for p in problems if p is not None), "outside its sitemap's directory")]


class UrlFragment(UrlCheck):
    """The `<loc>` has a fragment (`#...`); search engines drop it and read the URL before it."""

    code = "url_fragment"
    severity = Severity.WARNING

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        url = facts.url
        mark = url.find("#")
        if mark < 0 or "invalid_url" in facts.rules:
            return None
        return [f"search engines drop the fragment {url[mark:]!r} and read {url[:mark]!r}"]


class UrlUnescaped(UrlCheck):
    """The `<loc>` has printable ASCII characters that RFC 3986 does not allow in a URL
    (`"`, `<`, `>`, `\\`, `^`, a backtick, `{`, `|`, `}`; `[` and `]` after the host), which the
    sitemap protocol requires percent-encoded."""

    code = "url_unescaped"
    severity = Severity.WARNING

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if may_need_escapes(facts.url) is None or "invalid_url" in facts.rules:
            return None
        found = unescaped_characters(facts.url)
        if not found:
            return None
        chars = and_list([f"'{char}'" for char, _ in found])
        escapes = and_list([escaped for _, escaped in found])
        verb = are(len(found))
        backslash = " (browsers read '\\' as '/')" if any(c == "\\" for c, _ in found) else ""
        return [
            f"{chars} {verb} not allowed unescaped in a URL (RFC 3986, which the sitemap "
            f"protocol requires): write {escapes}{backslash}"
        ]


class Duplicate(UrlCheck):
    """The URL is listed more than once, in one sitemap or across sitemaps."""

    code = "duplicate"
    severity = Severity.NOTICE

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if facts.times_listed > 1:
            return [
                f"listed {count_noun(facts.times_listed, 'time')} in "
                f"{count_noun(len(facts.sitemaps), 'sitemap')}"
            ]
        return None
