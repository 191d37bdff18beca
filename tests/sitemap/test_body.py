from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from sitemapaudit.sitemap.body import BodyStream

from .support import CORPUS, gzip_stream

DOCUMENT = b"<urlset>" + b"<url><loc>https://www.example.com/page</loc></url>" * 4000 + b"</urlset>"


def collect(stream: BodyStream) -> bytes:
    return b"".join(stream)


def test_plain_body_passes_through_in_bounded_chunks() -> None:
    stream = BodyStream(DOCUMENT, limit=10**9, chunk_size=4096)
    chunks = list(stream)
    assert b"".join(chunks) == DOCUMENT
    assert max(len(chunk) for chunk in chunks) <= 4096
    assert not stream.gzip
    assert stream.gzip_layers == 0
    assert stream.bytes_read == len(DOCUMENT)
    assert not stream.truncated
    assert stream.problems == []


def test_gzip_is_detected_by_magic_bytes() -> None:
    stream = BodyStream(gzip.compress(DOCUMENT), limit=10**9, chunk_size=4096)
    assert stream.gzip  # known before iterating
    chunks = list(stream)
    assert b"".join(chunks) == DOCUMENT
    assert max(len(chunk) for chunk in chunks) <= 4096
    assert stream.gzip_layers == 1
    assert stream.bytes_read == len(DOCUMENT)
    assert stream.problems == []


def test_fake_gz_plain_body_is_not_gunzipped() -> None:
    body = (CORPUS / "advertools/regular_sitemap.xml.gz.actually-not-gzip").read_bytes()
    stream = BodyStream(body, limit=10**9)
    assert collect(stream) == body
    assert not stream.gzip
    assert stream.problems == []


def test_double_gzip_is_unwrapped_twice() -> None:
    stream = BodyStream(gzip.compress(gzip.compress(DOCUMENT)), limit=10**9)
    assert collect(stream) == DOCUMENT
    assert stream.gzip_layers == 2
    assert stream.problems == []


def test_at_most_two_gzip_layers_are_unwrapped() -> None:
    once = gzip.compress(DOCUMENT)
    stream = BodyStream(gzip.compress(gzip.compress(once)), limit=10**9)
    assert collect(stream) == once
    assert stream.gzip_layers == 2


@pytest.mark.parametrize("gzip_encoded", [False, True])
def test_one_gzip_layer_and_a_plain_body_are_read_whatever_the_header(gzip_encoded: bool) -> None:
    for body in (DOCUMENT, gzip.compress(DOCUMENT)):
        stream = BodyStream(body, limit=10**9, gzip_encoded=gzip_encoded)
        assert collect(stream) == DOCUMENT
        assert not stream.gzip_inside
        assert stream.problems == []


def test_a_second_gzip_layer_is_unwrapped_when_content_encoding_declares_it() -> None:
    stream = BodyStream(gzip.compress(gzip.compress(DOCUMENT)), limit=10**9, gzip_encoded=True)
    assert collect(stream) == DOCUMENT
    assert stream.gzip_layers == 2
    assert stream.problems == []


@pytest.mark.parametrize("checked", [False, True])
def test_a_second_gzip_layer_without_content_encoding_is_gzip_invalid(checked: bool) -> None:
    once = gzip.compress(DOCUMENT)
    stream = BodyStream(gzip.compress(once), limit=10**9, checked=checked, gzip_encoded=False)
    assert collect(stream) == once
    assert stream.gzip_layers == 1
    assert stream.gzip_inside
    assert [p.code for p in stream.problems] == ["gzip_invalid"]
    assert "gzipped twice" in stream.problems[0].message
    assert "Content-Encoding: gzip" in stream.problems[0].message


def test_a_third_gzip_layer_is_gzip_invalid_with_content_encoding() -> None:
    once = gzip.compress(DOCUMENT)
    stream = BodyStream(gzip.compress(gzip.compress(once)), limit=10**9, gzip_encoded=True)
    assert collect(stream) == once
    assert stream.gzip_layers == 2
    assert [p.code for p in stream.problems] == ["gzip_invalid"]
    assert "gzipped three times" in stream.problems[0].message


def test_concatenated_gzip_members_are_all_read() -> None:
    body = gzip.compress(b"first part, ") + gzip.compress(b"second part")
    stream = BodyStream(body, limit=10**9)
    assert collect(stream) == b"first part, second part"
    assert stream.problems == []


def test_padding_after_the_gzip_stream_is_ignored() -> None:
    stream = BodyStream(gzip.compress(DOCUMENT) + b"\0" * 100, limit=10**9)
    assert collect(stream) == DOCUMENT
    assert stream.problems == []


def test_truncated_gzip_yields_what_was_decoded_and_a_problem() -> None:
    body = gzip.compress(DOCUMENT)
    stream = BodyStream(body[: len(body) // 2], limit=10**9)
    data = collect(stream)
    assert data
    assert DOCUMENT.startswith(data)
    assert stream.bytes_read == len(data)
    assert [p.code for p in stream.problems] == ["gzip_invalid"]
    assert "truncated" in stream.problems[0].message


def test_bad_checksum_keeps_all_decoded_bytes() -> None:
    body = bytearray(gzip.compress(DOCUMENT))
    body[-6] ^= 0xFF  # inside the CRC32 of the trailer
    stream = BodyStream(bytes(body), limit=10**9)
    assert collect(stream) == DOCUMENT
    assert [p.code for p in stream.problems] == ["gzip_invalid"]
    assert "corrupt" in stream.problems[0].message


def test_checked_stream_yields_nothing_of_a_corrupt_member() -> None:
    body = bytearray(gzip.compress(DOCUMENT, mtime=0))
    body[len(body) // 2] ^= 0xFF
    loose = BodyStream(bytes(body), limit=10**9)
    assert collect(loose)  # decoded before the fault, possibly wrong
    stream = BodyStream(bytes(body), limit=10**9, checked=True)
    assert collect(stream) == b""
    assert stream.bytes_read == 0
    assert stream.corrupt is not None
    assert [p.code for p in stream.problems] == ["gzip_invalid"]
    assert f"{loose.bytes_read:,} bytes were decoded before the fault" in stream.problems[0].message


def test_checked_stream_keeps_the_members_before_a_corrupt_one() -> None:
    second = bytearray(gzip.compress(DOCUMENT, mtime=0))
    second[len(second) // 2] ^= 0xFF
    body = gzip.compress(b"first member, ") + gzip.compress(b"second, ") + bytes(second)
    stream = BodyStream(body, limit=10**9, checked=True, chunk_size=7)
    assert collect(stream) == b"first member, second, "
    assert stream.bytes_read == len(b"first member, second, ")
    assert "only the 22 bytes of the complete gzip members" in stream.problems[0].message


def test_checked_stream_drops_a_member_whose_checksum_does_not_match() -> None:
    body = bytearray(gzip.compress(DOCUMENT))
    body[-6] ^= 0xFF
    stream = BodyStream(bytes(body), limit=10**9, checked=True)
    assert collect(stream) == b""
    assert "incorrect data check" in stream.problems[0].message


def test_checked_stream_of_a_corrupt_inner_layer_keeps_nothing() -> None:
    inner = bytearray(gzip.compress(DOCUMENT, mtime=0))
    inner[len(inner) // 2] ^= 0xFF
    stream = BodyStream(gzip.compress(bytes(inner)), limit=10**9, checked=True)
    assert collect(stream) == b""
    assert stream.gzip_layers == 2
    assert "inner layer" in stream.problems[0].message


@pytest.mark.parametrize("cut", [0.5, 0.99])
def test_checked_stream_reads_sound_and_truncated_gzip_as_before(cut: float) -> None:
    body = gzip.compress(DOCUMENT)
    for data in (body, body[: int(len(body) * cut)], DOCUMENT):
        loose, checked = BodyStream(data, limit=10**9), BodyStream(data, limit=10**9, checked=True)
        assert collect(checked) == collect(loose)
        assert checked.problems == loose.problems
        assert checked.bytes_read == loose.bytes_read
    capped = BodyStream(body, limit=1000, checked=True)
    assert collect(capped) == DOCUMENT[:1000]
    assert capped.truncated


def test_garbage_after_the_magic_is_gzip_invalid() -> None:
    stream = BodyStream(b"\x1f\x8b\x08 this is not deflate data", limit=10**9)
    assert collect(stream) == b""
    assert stream.gzip
    assert [p.code for p in stream.problems] == ["gzip_invalid"]


def test_broken_inner_layer_is_reported_once() -> None:
    inner = gzip.compress(DOCUMENT)
    stream = BodyStream(gzip.compress(inner[: len(inner) // 2]), limit=10**9)
    data = collect(stream)
    assert DOCUMENT.startswith(data)
    assert [p.code for p in stream.problems] == ["gzip_invalid"]
    assert "inner layer" in stream.problems[0].message


@pytest.mark.parametrize(
    ("name", "ending", "size"),
    [
        ("sample_data__truncated-crc-error-short.gz", b"</html>", 3741),
        ("sample_data__truncated-crc-error.gz", b"</html", 25542),
    ],
)
def test_scrapy_truncated_samples_keep_their_data(name: str, ending: bytes, size: int) -> None:
    # Scrapy's gunzip returns these bodies up to the fault without raising; so do we.
    stream = BodyStream((CORPUS / "scrapy" / name).read_bytes(), limit=10**9)
    data = collect(stream)
    assert data.endswith(ending)
    assert len(data) == size
    assert not data.startswith(b"\x1f\x8b")
    assert [p.code for p in stream.problems] == ["gzip_invalid"]


def test_scrapy_bomb_sample_decompresses_to_its_known_size() -> None:
    body = (CORPUS / "scrapy/sample_data__bomb-gzip.bin").read_bytes()
    assert sum(len(chunk) for chunk in BodyStream(body, limit=10**9)) == 11_511_612
    capped = BodyStream(body, limit=10_000_000)
    assert sum(len(chunk) for chunk in capped) == 10_000_000
    assert capped.truncated


def test_limit_stops_plain_reading() -> None:
    stream = BodyStream(DOCUMENT, limit=1000, chunk_size=300)
    assert collect(stream) == DOCUMENT[:1000]
    assert stream.bytes_read == 1000
    assert stream.truncated


def test_body_exactly_at_the_limit_is_not_truncated() -> None:
    for body in (DOCUMENT, gzip.compress(DOCUMENT)):
        stream = BodyStream(body, limit=len(DOCUMENT))
        assert collect(stream) == DOCUMENT
        assert not stream.truncated
        one_less = BodyStream(body, limit=len(DOCUMENT) - 1)
        assert collect(one_less) == DOCUMENT[:-1]
        assert one_less.truncated


def test_gzip_bomb_is_bounded_by_the_limit_and_never_held_in_memory() -> None:
    megabyte = b"\0" * 1_048_576
    bomb = gzip_stream(megabyte for _ in range(200))  # 200 MiB of zeros, ~200 KB compressed
    assert len(bomb) < 1_000_000
    limit = 20 * 1_048_576
    tracemalloc.start()
    try:
        stream = BodyStream(bomb, limit=limit)
        total = 0
        largest = 0
        for chunk in stream:
            total += len(chunk)
            largest = max(largest, len(chunk))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == limit == stream.bytes_read
    assert stream.truncated
    assert largest <= 65536
    assert peak < 4 * 1_048_576, f"peak traced memory {peak} bytes"


def test_stopping_early_is_clean() -> None:
    stream = BodyStream(gzip.compress(DOCUMENT), limit=10**9, chunk_size=1024)
    for chunk in stream:
        assert chunk
        break
    assert stream.bytes_read == 1024
    assert not stream.truncated


def test_iterating_again_starts_over() -> None:
    stream = BodyStream(gzip.compress(DOCUMENT), limit=10**9)
    assert collect(stream) == DOCUMENT
    assert collect(stream) == DOCUMENT
    assert stream.bytes_read == len(DOCUMENT)


def test_empty_body() -> None:
    stream = BodyStream(b"", limit=100)
    assert collect(stream) == b""
    assert not stream.gzip
    assert not stream.truncated


@pytest.mark.parametrize("kwargs", [{"limit": -1}, {"limit": 10, "chunk_size": 0}])
def test_invalid_arguments_are_programming_errors(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must"):
        BodyStream(b"x", **kwargs)


def test_raw_deflate_without_gzip_header_is_not_unwrapped() -> None:
    body = zlib.compress(DOCUMENT)
    assert collect(BodyStream(body, limit=10**9)) == body
