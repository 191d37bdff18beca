"""The URL rules of a sitemap's locs: the finding codes a listed URL gets from where it is
(invalid, too long, on another host, out of its sitemap's scope), before any request."""

from __future__ import annotations

from collections.abc import Callable

from sitemapaudit.urls import Origin, in_sitemap_scope, loc_problems

# URL-rule codes that keep a listed URL from being requested at all.
NOT_FETCHABLE = frozenset({"invalid_url", "url_too_long", "off_host"})


class UrlRules:
    """The rules of the locs of the audited origin's sitemaps, with the scope of each sitemap
    read once."""

    def __init__(self, origin: Origin, max_url_length: int) -> None:
        self.origin = origin
        self.max_url_length = max_url_length
        self._scopes: dict[str, str] = {}

    def of_sitemap(self, sitemap_url: str, final_url: str) -> Callable[[str], tuple[str, ...]]:
        """The URL rules of the locs of a sitemap. A sitemap read where another redirects
        lives at both URLs: a loc in the directory of either is in scope."""
        if final_url == sitemap_url:
            return lambda loc: self.codes(loc, sitemap_url)

        def rules(loc: str) -> tuple[str, ...]:
            codes = self.codes(loc, sitemap_url)
            return self.codes(loc, final_url) if codes == ("out_of_scope",) else codes

        return rules

    def codes(self, loc: str, sitemap_url: str) -> tuple[str, ...]:
        """The rule codes of ``loc``, listed by the sitemap at ``sitemap_url``."""
        codes = loc_problems(loc, max_length=self.max_url_length)
        if codes:
            return tuple(codes)
        # Most locs start with their (on-origin) sitemap's directory, character for
        # character: on the origin and in scope without parsing them. A sitemap on another of
        # the site's sitemap hosts (a cross-submit) has no scope on the origin ("").
        scope = self._scopes.get(sitemap_url)
        if scope is None:
            scope = self._scopes[sitemap_url] = (
                sitemap_url[: sitemap_url.rfind("/") + 1] if self.origin.owns(sitemap_url) else ""
            )
        if "://" in scope and loc.startswith(scope) and "?" not in scope and not _dotted(loc):
            return ()
        if not self.origin.owns(loc):
            return ("off_host",)
        if scope and not in_sitemap_scope(loc, sitemap_url):
            return ("out_of_scope",)
        return ()


def _dotted(loc: str) -> bool:
    """Whether a loc may hold a ``.`` or ``..`` path segment (plain or escaped), which can
    lead out of the directory it starts with (a backslash is a slash there)."""
    return "/." in loc or "%2e" in loc or "%2E" in loc or "\\" in loc
