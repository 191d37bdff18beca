"""Final page responses wait in a PageQueue and are read a batch at a time, as if read at once."""

from __future__ import annotations

from typing import Any

import pytest

from sitemapaudit.crawl import pages
from sitemapaudit.crawl.pages import PageQueue, PendingPage, outcome_from_response
from sitemapaudit.facts import FetchOutcome

HEAD = (
    b"<!DOCTYPE html><html><head><title>t</title>"
    b'<meta name="robots" content="noindex"><link rel="canonical" href="/other"></head><body>x'
)


def _page(i: int, status: int = 200) -> PendingPage:
    return PendingPage(
        url_id=i,
        blocked=i % 2 == 0,
        url=f"https://e.com/p{i}",
        status=status,
        headers={
            "content-type": ["text/html"],
            "last-modified": ["Wed, 01 May 2024 10:00:00 GMT"],
            "x-robots-tag": ["googlebot: noindex"] if i % 3 == 0 else [],
        },
        body=HEAD if i % 4 else b"<html><head></head><body>",
        outcome=FetchOutcome(redirect_chain=[{"url": f"https://e.com/r{i}", "status": 301}]),
    )


def test_a_batch_is_full_at_its_size() -> None:
    queue = PageQueue("Googlebot", size=3, max_wait=1.0)
    assert [queue.add(_page(i), 10.0) for i in range(3)] == [False, False, True]
    assert len(queue) == 3
    assert [p.url_id for p in queue.read()] == [0, 1, 2]
    assert len(queue) == 0
    assert queue.read() == []


def test_a_batch_is_full_once_its_bodies_hold_max_bytes() -> None:
    queue = PageQueue("Googlebot", size=100, max_bytes=len(HEAD) * 3)
    assert [queue.add(_page(i), 0.0) for i in (1, 2)] == [False, False]
    assert queue.add(_page(3), 0.0) is True
    assert len(queue.read()) == 3
    assert queue.add(_page(5), 0.0) is False  # the count starts afresh
    big = _page(6)
    big.body = HEAD + b"x" * len(HEAD) * 3
    assert queue.add(big, 0.0) is True


def test_pages_are_due_once_the_first_waited_long_enough() -> None:
    queue = PageQueue("Googlebot", size=100, max_wait=0.05)
    assert queue.wait_left(5.0) is None
    queue.add(_page(1), 10.0)
    queue.add(_page(2), 10.04)
    assert abs(queue.wait_left(10.02) - 0.03) < 1e-9  # type: ignore[operator]
    assert queue.wait_left(10.05) == 0.0
    assert queue.wait_left(11.0) == 0.0
    queue.read()
    assert queue.wait_left(11.0) is None
    queue.add(_page(3), 12.0)
    assert abs(queue.wait_left(12.0) - 0.05) < 1e-9  # type: ignore[operator]


def test_read_fills_each_outcome_as_reading_the_response_at_once_does() -> None:
    queue = PageQueue("Googlebot", size=100)
    pages = [_page(i, status=200 if i != 5 else 404) for i in range(12)]
    for page in pages:
        queue.add(page, 0.0)
    read = queue.read()
    assert read == pages
    for i, page in enumerate(read):
        expected = outcome_from_response(
            url=page.url,
            status=page.status,
            headers=page.headers,
            body=page.body,
            outcome=_page(i, status=page.status).outcome,
            user_agent="Googlebot",
        )
        expected.checked_at = page.outcome.checked_at
        assert page.outcome == expected
    noindex = {p.url_id: p.outcome.noindex for p in read}
    assert noindex[1] == ["meta:robots"]
    assert noindex[3] == ["meta:robots", "header:x-robots-tag"]
    assert noindex[4] == []
    assert noindex[5] == []  # a 404 is not read
    assert read[1].outcome.canonical == "https://e.com/other"
    assert read[1].outcome.redirect_chain == [{"url": "https://e.com/r1", "status": 301}]


def test_a_passed_unavailable_after_is_a_noindex_of_its_source() -> None:
    body = (
        b'<html><head><meta name="robots" content="unavailable_after: 2010-06-25T00:00:00Z">'
        b"</head><body></body></html>"
    )
    headers = {
        "content-type": ["text/html"],
        "x-robots-tag": ["unavailable_after: 2999-01-01T00:00:00Z"],
    }
    outcome = outcome_from_response(
        url="https://e.com/a",
        status=200,
        headers=headers,
        body=body,
        outcome=FetchOutcome(),
        user_agent="Googlebot",
    )
    # The header's date is still ahead: only the meta's counts.
    assert outcome.noindex == ["meta:robots"]
    assert outcome.unavailable_after == {"meta:robots": "2010-06-25T00:00:00Z"}
    again = FetchOutcome.from_json(outcome.to_json())
    assert again == outcome


def test_a_page_whose_reading_raises_does_not_take_its_batch_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def read_but_p1(**kwargs: Any) -> FetchOutcome:
        if kwargs["url"].endswith("/p1"):
            raise RuntimeError("bug")
        return outcome_from_response(**kwargs)

    monkeypatch.setattr(pages, "outcome_from_response", read_but_p1)
    queue = PageQueue("Googlebot", size=3, max_wait=1.0)
    for i in range(3):
        queue.add(_page(i), 10.0)
    failed: list[tuple[int, str]] = []
    read = queue.read(lambda page, exc: failed.append((page.url_id, str(exc))))
    assert [p.url_id for p in read] == [0, 2]
    assert all(p.outcome.fetched for p in read)
    assert failed == [(1, "bug")]
    for i in range(3):
        queue.add(_page(i), 10.0)
    with pytest.raises(RuntimeError, match="bug"):
        queue.read()


# A head whose script runs past the 2 MiB read: the robots meta after it is not seen.
LONG_HEAD = (
    b"<!DOCTYPE html><html><head><title>t</title><script>"
    + b"var a = 1;\n" * 220_000
    + b'</script><meta name="robots" content="noindex"></head><body>x</body></html>'
)


@pytest.mark.parametrize("stopped", [False, True])
def test_a_head_longer_than_the_read_limit_is_reported(stopped: bool) -> None:
    assert len(LONG_HEAD) > pages.HEAD_READ_LIMIT
    body = LONG_HEAD[: pages.HEAD_READ_LIMIT + 100] if stopped else LONG_HEAD
    outcome = outcome_from_response(
        url="https://e.com/p",
        status=200,
        headers={"content-type": ["text/html"]},
        body=body,
        outcome=FetchOutcome(),
        user_agent="Googlebot",
        stopped=stopped,
    )
    assert outcome.noindex == []
    assert outcome.head_too_large == pages.HEAD_READ_LIMIT
    assert outcome.head_broken is None


@pytest.mark.parametrize(
    "body",
    [
        # the head ends (at <p>) within the limit, without </head> or <body>
        b"<html><head><title>t</title><p>" + b"lorem ipsum " * 200_000,
        HEAD + b"<p>lorem ipsum</p>" * 200_000,
        b"<html><head><title>t</title><script>x</script>",
    ],
)
def test_a_head_that_ends_within_the_read_limit_is_not_too_large(body: bytes) -> None:
    outcome = outcome_from_response(
        url="https://e.com/p",
        status=200,
        headers={"content-type": ["text/html"]},
        body=body,
        outcome=FetchOutcome(),
        user_agent="Googlebot",
    )
    assert outcome.head_too_large is None
