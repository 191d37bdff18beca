"""The audit's requests: robots.txt, the homepage, a sitemap and its redirects' hops, a listed
page, each with the meta that the callbacks and the project's middlewares read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scrapy import Request
from scrapy.http import Headers, Response
from twisted.python.failure import Failure

from sitemapaudit.crawl.redirects import RedirectState
from sitemapaudit.crawl.tree import SitemapRef
from sitemapaudit.discovery.homepage import HOMEPAGE_READ_LIMIT
from sitemapaudit.headonly import META_KEY as HEAD_ONLY_META
from sitemapaudit.readlimit import META_KEY as READ_LIMIT_META
from sitemapaudit.readlimit import OWN_LIMIT_KEY as OWN_READ_LIMIT
from sitemapaudit.readlimit import PARTIAL_KEY
from sitemapaudit.urls import request_url

Callback = Callable[[Response], Any]
Errback = Callable[[Failure], Any]


def discovery_request(
    url: str, callback: Callback, errback: Errback, *, priority: int = 0
) -> Request:
    """A request of discovery (robots.txt, the homepage), its redirects followed hop by hop."""
    return Request(
        request_url(url),
        callback=callback,
        errback=errback,
        priority=priority,
        dont_filter=True,
        meta={"dont_redirect": True, "redirects": RedirectState()},
    )


def robots_request(origin: str, max_bytes: int, callback: Callback, errback: Errback) -> Request:
    robots = discovery_request(origin + "/robots.txt", callback, errback, priority=100)
    # Read what is parsed of it (and a byte more, to know it was cut), not more.
    return _read_up_to(robots, max_bytes, "sitemapaudit/robots/stopped_at_read_limit")


def homepage_request(origin: str, callback: Callback, errback: Errback) -> Request:
    homepage = discovery_request(origin + "/", callback, errback, priority=90)
    # What arrived of it is read if the download fails part way (a timeout).
    homepage.meta[PARTIAL_KEY] = None
    # Read up to what is parsed of it (a page that never ends does not hold the audit).
    return _read_up_to(homepage, HOMEPAGE_READ_LIMIT, "sitemapaudit/homepage/stopped_at_read_limit")


def _read_up_to(request: Request, limit: int, stat: str) -> Request:
    """``request`` read up to ``limit`` bytes by SitemapReadLimit (counted in ``stat`` when it
    stops there), not cancelled by Scrapy on its announced size."""
    request.meta[READ_LIMIT_META] = 0
    request.meta[OWN_READ_LIMIT] = (limit, stat)
    request.meta["download_maxsize"] = 0
    return request


def sitemap_request(
    ref: SitemapRef,
    headers: Mapping[str, str],
    previous_run: int | None,
    *,
    callback: Callback,
    errback: Errback,
) -> Request:
    """A sitemap's request, with the validators (``headers``) of the ``previous_run`` that
    read it."""
    return Request(
        request_url(ref.url),
        callback=callback,
        errback=errback,
        priority=50 - ref.depth,
        dont_filter=True,
        headers=headers,
        meta={
            "dont_redirect": True,
            "sitemap_ref": ref,
            "redirects": RedirectState(),
            "previous_run": previous_run,
            # Read up to SITEMAPAUDIT_SITEMAP_READ_LIMIT (SitemapReadLimit stops it there)
            # and report it, rather than let Scrapy cancel it on its announced size.
            READ_LIMIT_META: 0,
            "download_maxsize": 0,
        },
    )


def sitemap_hop(hop: Request, validators: Mapping[str, str], previous_run: int | None) -> Request:
    """The next hop of a sitemap's redirects, with the validators of its own URL: where the
    redirects end is a sitemap of its own (see :meth:`AuditRun.redirect_ended`)."""
    headers = Headers(hop.headers)
    for name in ("If-None-Match", "If-Modified-Since"):
        headers.pop(name, None)
    headers.update(validators)
    return hop.replace(headers=headers, meta={**hop.meta, "previous_run": previous_run})


def page_request(
    url_id: int,
    url: str,
    state: RedirectState,
    blocked: bool,
    *,
    callback: Callback,
    errback: Errback,
) -> Request:
    """A listed page's request (or the next hop of its redirects)."""
    return Request(
        request_url(url),
        callback=callback,
        errback=errback,
        dont_filter=True,
        meta={
            "dont_redirect": True,
            "url_id": url_id,
            "blocked": blocked,
            "redirects": state,
            HEAD_ONLY_META: True,
        },
    )
