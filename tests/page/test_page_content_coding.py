"""Tests of page bodies in a Content-Encoding: gzip declared by the header, deflate, br, zstd."""

from __future__ import annotations

import gzip
import random
import zlib
from collections.abc import Callable

import pytest

from sitemapaudit.crawl.pages import outcome_from_response, page_head_bytes
from sitemapaudit.facts import FetchOutcome
from sitemapaudit.page.coding import body_coding, declares_gzip, decode_capped, decoder
from sitemapaudit.page.stream import HeadWatcher

brotli = pytest.importorskip("brotli")
zstd = pytest.importorskip("backports.zstd")

HEAD = (
    b'<html><head><meta name="robots" content="noindex">'
    b'<link rel="canonical" href="https://e.com/b"></head><body>'
)
PAGE = HEAD + b"<p>text</p>" * 400_000 + b"</body></html>"


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "deflate": zlib.compress,
    "raw deflate": _raw_deflate,
    "br": brotli.compress,
    "zstd": zstd.compress,
}


def _coding(name: str) -> str:
    return name.removeprefix("raw ")


def _outcome(body: bytes, coding: str, *, stopped: bool = False) -> FetchOutcome:
    return outcome_from_response(
        url="https://e.com/a",
        status=200,
        headers={"content-type": ["text/html"], "content-encoding": [coding]},
        body=body,
        outcome=FetchOutcome(),
        user_agent="Googlebot",
        stopped=stopped,
    )


@pytest.mark.parametrize("name", ENCODERS)
def test_an_encoded_page_is_decoded_and_read(name: str) -> None:
    outcome = _outcome(ENCODERS[name](PAGE), _coding(name))
    assert outcome.fetched
    assert outcome.error is None
    assert outcome.noindex == ["meta:robots"]
    assert outcome.canonical == "https://e.com/b"


@pytest.mark.parametrize("name", ENCODERS)
def test_only_the_head_is_decompressed(name: str) -> None:
    head, problem = page_head_bytes(ENCODERS[name](PAGE), coding=_coding(name))
    assert problem is None
    assert head.startswith(HEAD)
    assert len(head) < 200_000


@pytest.mark.parametrize("name", ENCODERS)
def test_an_encoded_body_that_does_not_decode_is_fetch_failed(name: str) -> None:
    coding = _coding(name)
    outcome = _outcome(b"<html><head>" + ENCODERS[name](PAGE), coding)
    assert not outcome.fetched
    assert outcome.status == 200
    assert outcome.error is not None
    assert outcome.error.startswith(f"the page's {coding}-encoded body cannot be decoded: ")
    assert outcome.noindex == []


@pytest.mark.parametrize("name", ENCODERS)
def test_an_encoded_body_cut_short_is_fetch_failed_unless_stopped_on_purpose(name: str) -> None:
    small = ENCODERS[name](HEAD)
    assert not _outcome(small[: len(small) // 2], _coding(name)).fetched
    assert _outcome(small[: len(small) // 2], _coding(name), stopped=True).fetched


@pytest.mark.parametrize(
    "coding", ["compress", "gzip, compress", "gzip, utf-8", "gzip, gzip, gzip, gzip, gzip"]
)
def test_a_coding_the_audit_cannot_decode_is_fetch_failed_naming_it(coding: str) -> None:
    outcome = _outcome(b"\x1f\x9d\x90<html>", coding)
    assert not outcome.fetched
    assert outcome.error == (
        f"the page's {coding}-encoded body cannot be decoded: "
        f"Content-Encoding {coding!r} is not supported"
    )


def test_a_missing_module_makes_br_undecodable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sitemapaudit.page.coding._module", lambda *names: None)
    assert decoder("br") is None
    outcome = _outcome(brotli.compress(PAGE), "br")
    assert not outcome.fetched
    assert outcome.noindex == []


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (None, None),
        ([], None),
        (["identity"], None),
        (["gzip"], "gzip"),
        (["x-gzip"], "x-gzip"),
        ([" GZIP "], "gzip"),
        (["utf-8"], None),  # no coding browsers know: they ignore it
        (["Deflate"], "deflate"),
        ([" br "], "br"),
        (["identity, zstd"], "zstd"),
        (["gzip, br"], "gzip, br"),
        (["deflate", "GZIP"], "deflate, gzip"),
    ],
)
def test_body_coding(values: list[str] | None, expected: str | None) -> None:
    assert body_coding(values) == expected


@pytest.mark.parametrize("name", ENCODERS)
def test_head_watcher_stops_after_the_head_of_an_encoded_page(name: str) -> None:
    body = ENCODERS[name](PAGE)
    watcher = HeadWatcher(coding=_coding(name))
    fed = 0
    for start in range(0, len(body), 1024):
        fed += 1024
        if watcher.feed(body[start : start + 1024]):
            break
    assert watcher.done
    assert fed < len(body) or len(body) < 4096


STACKS: dict[str, Callable[[bytes], bytes]] = {
    "deflate, gzip": lambda data: gzip.compress(zlib.compress(data)),
    "br, gzip": lambda data: gzip.compress(brotli.compress(data)),
    "zstd, gzip": lambda data: gzip.compress(zstd.compress(data)),
    "gzip, gzip": lambda data: gzip.compress(gzip.compress(data)),
    "gzip, deflate": lambda data: zlib.compress(gzip.compress(data)),
    "x-gzip, br, zstd": lambda data: zstd.compress(brotli.compress(gzip.compress(data))),
}


@pytest.mark.parametrize("coding", STACKS)
def test_several_codings_are_undone_last_listed_first(coding: str) -> None:
    outcome = _outcome(STACKS[coding](PAGE), coding)
    assert outcome.fetched
    assert outcome.error is None
    assert outcome.noindex == ["meta:robots"]
    head, problem = page_head_bytes(STACKS[coding](PAGE), coding=coding)
    assert problem is None
    assert head.startswith(HEAD)
    assert len(head) < 200_000


@pytest.mark.parametrize("coding", STACKS)
def test_several_codings_in_another_order_than_listed_are_fetch_failed(coding: str) -> None:
    listed = ", ".join(reversed(coding.split(", ")))
    outcome = _outcome(STACKS[coding](PAGE), listed)
    if listed == coding:
        assert outcome.fetched
        return
    assert not outcome.fetched
    assert outcome.error is not None
    assert outcome.error.startswith(f"the page's {listed}-encoded body cannot be decoded: ")
    assert outcome.noindex == []


def test_several_codings_cut_short_are_fetch_failed_unless_stopped_on_purpose() -> None:
    small = STACKS["deflate, gzip"](HEAD)
    assert not _outcome(small[: len(small) // 2], "deflate, gzip").fetched
    assert _outcome(small[: len(small) // 2], "deflate, gzip", stopped=True).fetched


def test_gzip_data_under_several_codings_is_not_read_as_gzip_alone() -> None:
    # Gzip data whose content is still deflated is not HTML.
    outcome = _outcome(gzip.compress(zlib.compress(PAGE)), "gzip")
    assert outcome.noindex == []
    assert _outcome(gzip.compress(zlib.compress(PAGE)), "deflate, gzip").noindex == ["meta:robots"]


@pytest.mark.parametrize("coding", STACKS)
def test_head_watcher_stops_after_the_head_of_a_page_in_several_codings(coding: str) -> None:
    # Random text does not compress: the page stays large on the wire.
    body = STACKS[coding](HEAD + random.Random(7).randbytes(100_000).hex().encode())
    watcher = HeadWatcher(coding=coding)
    fed = 0
    for start in range(0, len(body), 1024):
        fed += 1024
        if watcher.feed(body[start : start + 1024]):
            break
    assert watcher.done
    assert fed < len(body)
    head, problem = page_head_bytes(body[:fed], whole=False, coding=coding)
    assert problem is None
    assert head.startswith(HEAD)


def test_head_watcher_stops_at_once_on_a_coding_it_cannot_decode() -> None:
    assert HeadWatcher(coding="compress").feed(b"\x1f\x9d\x90")


def _head_only(body: bytes, coding: str | None, size: int = 1024) -> tuple[bytes, bool]:
    """What a head-only download keeps of ``body`` arriving in chunks of ``size`` bytes, and
    whether it was stopped."""
    watcher = HeadWatcher(coding=coding)
    for start in range(0, len(body), size):
        if watcher.feed(body[start : start + size]):
            return body[: start + size], True
    return body, False


def _read(body: bytes, coding: str | None, *, stopped: bool = False) -> FetchOutcome:
    return outcome_from_response(
        url="https://e.com/a",
        status=200,
        headers={"content-type": ["text/html"]}
        | ({} if coding is None else {"content-encoding": [coding]}),
        body=body,
        outcome=FetchOutcome(),
        user_agent="Googlebot",
        stopped=stopped,
    )


# A page whose head is long and does not compress (random text): its end is far from the start
# of the body in any coding.
_RANDOM = random.Random(7)
LONG_HEAD = (
    b"<html><head><title>"
    + _RANDOM.randbytes(20_000).hex().encode()
    + b'</title><meta name="robots" content="noindex"></head><body>'
)
LONG = LONG_HEAD + _RANDOM.randbytes(50_000).hex().encode() + b"</body></html>"

# Bodies that cannot be read as their Content-Encoding says, known from their first bytes.
UNREADABLE: dict[str, tuple[bytes, str | None]] = {
    "gzip data without Content-Encoding": (gzip.compress(LONG, mtime=0), None),
    "html declared gzip": (LONG, "gzip"),
    "html declared x-gzip": (LONG, "x-gzip"),
    "gzip data declared deflate": (gzip.compress(LONG, mtime=0), "deflate"),
    "gzip data declared br": (gzip.compress(LONG, mtime=0), "br"),
    "gzip data declared zstd": (gzip.compress(LONG, mtime=0), "zstd"),
    "gzip data declared compress": (gzip.compress(LONG, mtime=0), "compress"),
    "zlib data declared gzip": (zlib.compress(LONG), "gzip"),
    "br data declared gzip": (brotli.compress(LONG), "gzip"),
    "zstd data declared deflate": (zstd.compress(LONG), "deflate"),
    "html declared zstd": (LONG, "zstd"),
}


@pytest.mark.parametrize("case", UNREADABLE)
@pytest.mark.parametrize("size", [1, 1024, 65536])
def test_head_watcher_stops_at_once_on_a_body_not_in_its_declared_coding(
    case: str, size: int
) -> None:
    body, coding = UNREADABLE[case]
    kept, stopped = _head_only(body, coding, size)
    assert stopped
    # Stopped at the chunk that shows it: a decoder may need a few bytes to see it, and brotli,
    # whose data has no magic bytes, up to a few hundred (117 for gzip data of this page over
    # 286 gzip header times), against the page's 140,000.
    assert len(kept) <= max(size, 1024)
    full, head_only = _read(body, coding), _read(kept, coding, stopped=True)
    assert not full.fetched
    assert full.error is not None
    assert (head_only.fetched, head_only.error) == (full.fetched, full.error)
    assert head_only.noindex == full.noindex == []


def test_head_watcher_says_why_it_stopped() -> None:
    watcher = HeadWatcher()
    assert not watcher.feed(b"\x1f")
    assert watcher.unreadable is None
    assert watcher.feed(b"\x8b\x08")
    assert watcher.unreadable == (
        "the body is gzip data, but the response does not say Content-Encoding: gzip "
        "(browsers and search engines read it as it is, compressed)"
    )
    watcher = HeadWatcher(coding="compress")
    assert watcher.feed(b"\x1f\x9d\x90")
    assert watcher.unreadable == "Content-Encoding 'compress' is not supported"
    watcher = HeadWatcher(coding="deflate")
    assert watcher.feed(gzip.compress(PAGE)[:1024])
    assert watcher.unreadable is not None
    assert watcher.unreadable.startswith("the deflate data is corrupt: ")
    watcher = HeadWatcher()
    assert watcher.feed(PAGE[:1024])
    assert watcher.unreadable is None


# Bodies read as their Content-Encoding says: the head-only download stops after the head.
READABLE: dict[str, tuple[bytes, str | None]] = {
    "html": (LONG, None),
    "html starting with 1f": (b"\x1f" + LONG, None),
    "gzip": (gzip.compress(LONG, mtime=0), "gzip"),
    "x-gzip": (gzip.compress(LONG, mtime=0), "x-gzip"),
    "deflate": (zlib.compress(LONG), "deflate"),
    "br": (brotli.compress(LONG), "br"),
    "deflate, gzip": (gzip.compress(zlib.compress(LONG)), "deflate, gzip"),
}


@pytest.mark.parametrize("case", READABLE)
@pytest.mark.parametrize("size", [7, 1024])
def test_a_head_only_read_gives_what_a_full_read_gives(case: str, size: int) -> None:
    body, coding = READABLE[case]
    kept, stopped = _head_only(body, coding, size)
    assert stopped
    assert len(kept) < len(body)
    full, head_only = _read(body, coding), _read(kept, coding, stopped=True)
    assert (head_only.fetched, head_only.error) == (full.fetched, full.error)
    assert (head_only.noindex, head_only.canonical) == (full.noindex, full.canonical)
    if not body.startswith(b"\x1f"):  # a page that does not start with its markup
        assert full.noindex == ["meta:robots"]


@pytest.mark.parametrize(
    ("values", "declared"),
    [
        (None, False),
        ([], False),
        (["identity"], False),
        (["br"], False),
        (["gzip"], True),
        ([" X-GZIP "], True),
        (["deflate, gzip"], True),
        (["identity", "gzip"], True),
    ],
)
def test_declares_gzip(values: list[str] | None, declared: bool) -> None:
    assert declares_gzip(values) is declared


@pytest.mark.parametrize("coding", ["gzip", "x-gzip"])
@pytest.mark.parametrize("whole", [True, False])
def test_a_body_declared_gzip_that_is_not_gzip_data_is_not_read(coding: str, whole: bool) -> None:
    head, problem = page_head_bytes(PAGE, whole=whole, coding=body_coding([coding]))
    assert head == b""
    assert problem == "the body is not gzip data (it does not start with the gzip magic 1f 8b)"


@pytest.mark.parametrize("coding", ["gzip", "x-gzip"])
def test_a_page_declared_gzip_that_is_not_gzip_data_is_fetch_failed(coding: str) -> None:
    for stopped in (False, True):
        outcome = _outcome(PAGE, coding, stopped=stopped)
        assert not outcome.fetched
        assert outcome.status == 200
        assert outcome.error == (
            f"the page's {coding}-encoded body cannot be decoded: the body is not gzip data "
            "(it does not start with the gzip magic 1f 8b)"
        )
        assert outcome.noindex == []
        assert outcome.canonical is None


@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "br", "zstd", "deflate, gzip"])
def test_an_empty_body_in_any_coding_is_an_empty_page(coding: str) -> None:
    assert page_head_bytes(b"", coding=body_coding([coding])) == (b"", None)
    outcome = _outcome(b"", coding)
    assert outcome.fetched
    assert outcome.error is None


@pytest.mark.parametrize("coding", ["gzip", "x-gzip"])
def test_a_page_declared_gzip_that_is_gzip_data_is_read(coding: str) -> None:
    body = gzip.compress(PAGE)
    head, problem = page_head_bytes(body, coding=body_coding([coding]))
    assert problem is None
    assert head.startswith(HEAD)
    outcome = _outcome(body, coding)
    assert outcome.fetched
    assert outcome.noindex == ["meta:robots"]


@pytest.mark.parametrize("coding", ["gzip", "x-gzip"])
def test_a_gzip_body_cut_short_is_read_only_when_stopped_on_purpose(coding: str) -> None:
    body = gzip.compress(HEAD + random.Random(7).randbytes(50_000).hex().encode())
    for cut in (1, 2, 10, 40):
        head, problem = page_head_bytes(body[:cut], whole=False, coding=body_coding([coding]))
        assert problem is None, cut
        assert HEAD.startswith(head), cut
        _, problem = page_head_bytes(body[:cut], coding=body_coding([coding]))
        assert problem is not None, cut
        assert "cut short" in problem, cut
    assert _outcome(body[: len(body) // 2], coding, stopped=True).noindex == ["meta:robots"]


def test_a_body_without_content_encoding_is_still_read_as_it_is() -> None:
    assert page_head_bytes(PAGE, coding=body_coding(None))[1] is None
    assert _outcome(PAGE, "identity").noindex == ["meta:robots"]


@pytest.mark.parametrize("coding", ["gzip", "x-gzip"])
def test_head_watcher_stops_at_once_on_a_body_declared_gzip_that_is_not(coding: str) -> None:
    assert HeadWatcher(coding=body_coding([coding])).feed(PAGE[:1024])


def test_plain_html_under_several_codings_with_gzip_is_fetch_failed() -> None:
    outcome = _outcome(PAGE, "deflate, gzip")
    assert not outcome.fetched
    assert outcome.error is not None
    assert outcome.error.startswith(
        "the page's deflate, gzip-encoded body cannot be decoded: "
        "the deflate, gzip data is corrupt: gzip: "
    )
    assert outcome.noindex == []


@pytest.mark.parametrize("stopped", [False, True])
def test_gzip_data_sent_without_content_encoding_is_not_read(stopped: bool) -> None:
    """Browsers and search engines read a body with no Content-Encoding as it is: gzip data
    there is compressed bytes to them, not the page's head."""
    outcome = outcome_from_response(
        url="https://e.com/a",
        status=200,
        headers={"content-type": ["text/html"]},
        body=gzip.compress(PAGE),
        outcome=FetchOutcome(),
        user_agent="Googlebot",
        stopped=stopped,
    )
    assert not outcome.fetched
    assert outcome.status == 200
    assert outcome.error == (
        "the page cannot be read: the body is gzip data, but the response does not say "
        "Content-Encoding: gzip (browsers and search engines read it as it is, compressed)"
    )
    assert outcome.noindex == []


@pytest.mark.parametrize("coding", ["deflate", "br", "zstd"])
def test_gzip_data_declared_in_another_coding_is_corrupt_in_that_coding(coding: str) -> None:
    """Browsers decode the coding the response names, whatever the body's first bytes."""
    outcome = _outcome(gzip.compress(PAGE), coding)
    assert not outcome.fetched
    assert outcome.error is not None
    assert outcome.error.startswith(f"the page's {coding}-encoded body cannot be decoded: ")
    assert outcome.noindex == []


@pytest.mark.parametrize("coding", ["br", "deflate"])
def test_decode_capped_stops_at_its_limit(coding: str) -> None:
    data = b"<url/>" * 1_000_000
    body = brotli.compress(data, quality=5) if coding == "br" else zlib.compress(data)
    assert decode_capped(body, coding, 1000) == (data[:1000], None)
    assert decode_capped(body, coding, len(data) + 1) == (data, None)
    cut, why = decode_capped(body[:50], coding, len(data))
    assert cut == b""
    assert why == f"the {coding} data is cut short (it ends before its end)"
    assert decode_capped(body[:50], coding, len(data), whole=False)[1] is None
    assert decode_capped(b"x", "compress", 10) == (
        b"",
        "Content-Encoding 'compress' is not supported",
    )


@pytest.mark.parametrize(
    "content_type", ["application/gzip", "application/x-gzip", "application/octet-stream"]
)
def test_a_gzip_file_that_is_no_page_is_judged_by_its_headers(content_type: str) -> None:
    """A listed download (``/data.csv.gz``) is gzip data sent as it is: not a broken page."""
    outcome = outcome_from_response(
        url="https://e.com/data.csv.gz",
        status=200,
        headers={"content-type": [content_type], "x-robots-tag": ["noindex"]},
        body=gzip.compress(b"a,b\n1,2\n"),
        outcome=FetchOutcome(),
        user_agent="googlebot",
    )
    assert outcome.fetched
    assert outcome.error is None
    assert outcome.noindex == ["header:x-robots-tag"]
