"""Scrapy responses and failures read into plain values: headers, a redirect's Location, a
sitemap's validators, a body as its Content-Encoding says, and why a request failed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from scrapy.exceptions import DownloadCancelledError, ResponseDataLossError
from scrapy.http import Headers, Response
from twisted.python.failure import Failure
from w3lib.url import safe_url_string

from sitemapaudit.discovery.homepage import HOMEPAGE_READ_LIMIT, homepage_sitemaps
from sitemapaudit.page.coding import decode_capped, gzip_alone, undo_coding
from sitemapaudit.readlimit import PartialBody
from sitemapaudit.urls import slashes_for_backslashes


def header(response: Response, name: str) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def location(response: Response) -> str | None:
    """A redirect's Location as a browser reads it: UTF-8 (bytes that are not are kept as
    percent-escapes), a backslash before the query a slash, with spaces and other characters
    a URL cannot hold percent-encoded; ``""`` for an empty one, ``None`` for none."""
    value = response.headers.get("Location")
    if value is None:
        return None
    if not value.strip():
        return ""
    try:
        # (Latin-1 there and back keeps every byte for safe_url_string to read as UTF-8.)
        encoded = slashes_for_backslashes(value.strip().decode("latin-1")).encode("latin-1")
        return safe_url_string(encoded)
    except ValueError:  # not even a URL to encode: reported as not usable
        return value.decode("latin-1")


def link_text(value: bytes) -> str:
    """A ``Link`` header value as its URLs are read, as a ``Location`` is: UTF-8 (a value that
    is not UTF-8 is read as Latin-1, byte for byte)."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def _latin1(value: bytes) -> str:
    return value.decode("latin-1")


def conflicting_locations(response: Response) -> tuple[str, ...]:
    """The distinct values of a response's Location headers when it has several that differ
    (browsers refuse such a redirect: Chrome's ERR_RESPONSE_HEADERS_MULTIPLE_LOCATION), else
    ``()``."""
    values = response.headers.getlist("Location")
    if len(values) < 2:
        return ()
    distinct = dict.fromkeys(value.strip().decode("latin-1") for value in values)
    return tuple(distinct) if len(distinct) > 1 else ()


def sitemap_validators(response: Response) -> tuple[str | None, str | None]:
    """A sitemap response's ``ETag`` and ``Last-Modified``. A 304 need not repeat them: then
    the ones the conditional request sent are still those of the content."""
    etag, last_modified = header(response, "ETag"), header(response, "Last-Modified")
    if response.status == 304 and response.request is not None:
        sent = response.request.headers
        if etag is None and (value := sent.get("If-None-Match")):
            etag = value.decode("latin-1")
        if last_modified is None and (value := sent.get("If-Modified-Since")):
            last_modified = value.decode("latin-1")
    return etag, last_modified


def partial_homepage_sitemaps(partial: PartialBody, url: str) -> list[tuple[str, str]] | None:
    """The sitemaps named in what arrived of a homepage whose download failed part way, or
    ``None`` when no byte of its body arrived. (Its status is unknown: Scrapy tells the
    headers of an answer, not its status, before the answer is complete.)"""
    if not partial.chunks:
        return None
    links = [link_text(v) for v in partial.headers.getlist("Link")]
    encodings = [v.decode("latin-1") for v in partial.headers.getlist("Content-Encoding")]
    body, undecodable = undo_coding(partial.body, encodings, HOMEPAGE_READ_LIMIT, whole=False)
    try:
        return homepage_sitemaps(b"" if undecodable else body, url, links)
    except ValueError:  # a gzip body cut short
        return [] if not links else homepage_sitemaps(b"", url, links)


def decoded_body(response: Response, limit: int) -> tuple[bytes, str | None]:
    """The body of robots.txt or of the homepage as its Content-Encoding says (as pages and
    sitemaps are read), up to ``limit`` bytes, or why it cannot be read."""
    return undo_coding(
        response.body,
        response_headers(response).get("content-encoding"),
        limit,
        whole="download_stopped" not in response.flags,
    )


def sitemap_body(response: Response, coding: str | None, limit: int) -> tuple[bytes, str | None]:
    """A sitemap's body with a ``Content-Encoding`` other than gzip alone undone, as
    pages are decoded (gzip alone is read by its bytes: see ``BodyStream``), up to a byte
    past the sitemap read limit (``limit``), so that a decompression bomb costs no more and a
    larger document is still ``too_large``; or why it cannot be decoded: a coding the audit
    cannot decode or corrupt data, a ``fetch_failed`` naming the coding, as it is for a
    page (search engines cannot read such a body either; the data may be no gzip at all,
    so it is not ``gzip_invalid``)."""
    if coding is None or gzip_alone(coding):
        return response.body, None
    body, why = decode_capped(
        response.body,
        coding,
        limit + 1,
        whole="download_stopped" not in response.flags,
    )
    if why is None:
        return body, None
    return body, (
        f"the sitemap cannot be read as its Content-Encoding: {coding} says ({why}): "
        "search engines cannot read it either"
    )


class ResponseHeaders(Mapping[str, list[str]]):
    """A response's headers by lowercase name, decoded as latin-1 when first looked up (the
    checks read a handful of the headers of every page, not all of them, some twice)."""

    def __init__(self, headers: Headers) -> None:
        self._headers = headers
        self._decoded: dict[str, list[str]] = {}

    def __getitem__(self, name: str) -> list[str]:
        values: list[str] | None = self.get(name)
        if values is None:
            raise KeyError(name)
        return values

    def get(self, name: str, default: Any = None) -> Any:  # no KeyError for a missing header
        values = self._decoded.get(name)
        if values is None:
            raw = self._headers.getlist(name)
            decode = link_text if name == "link" else _latin1
            values = self._decoded[name] = [decode(v) for v in raw]
        return values or default

    def __iter__(self) -> Iterator[str]:
        return (key.decode("latin-1").lower() for key in self._headers)

    def __len__(self) -> int:
        return len(self._headers)


def response_headers(response: Response) -> Mapping[str, list[str]]:
    return ResponseHeaders(response.headers)


_DATA_LOSS = "the response ended before its announced Content-Length or its last chunk (data loss)"


def failure_reason(failure: Failure) -> str:
    """A short, readable reason: Twisted wraps connection failures in a list of failures."""
    value: BaseException | None = failure.value
    assert value is not None
    # Scrapy re-raises Twisted's failures as DownloadFailedError(str(...)) from the original;
    # its own reasons (data loss, a cancelled download) say more than the Twisted one below.
    while (cause := value.__cause__) is not None:
        if isinstance(value, ResponseDataLossError):
            return f"{type(value).__name__}: {_DATA_LOSS}"
        if isinstance(value, DownloadCancelledError) and str(value).strip():
            break
        value = cause
    if isinstance(value, ResponseDataLossError):
        return f"{type(value).__name__}: {_DATA_LOSS}"
    reasons = getattr(value, "reasons", None)
    if reasons and isinstance(reasons[0], Failure) and reasons[0].value is not None:
        value = reasons[0].value
    name = type(value).__name__
    if type(value).__module__.startswith("OpenSSL"):
        return _tls_reason(value)
    text = str(value).strip()
    return f"{name}: {text}" if text else name


def _tls_reason(value: BaseException) -> str:
    """pyOpenSSL's errors carry a list of (library, function, reason) tuples."""
    details = value.args[0] if value.args else None
    reasons = [str(d[-1]) for d in details if d] if isinstance(details, list) else []
    text = "; ".join(r for r in reasons if r) or str(value).strip()
    return f"TLS error: {text}" if text else "TLS error"
