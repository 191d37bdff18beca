"""Counted things in the number they take: ``1 URL``, ``2 URLs``, ``0 URLs``."""

from __future__ import annotations

import pytest

from sitemapaudit.words import are, count_noun, noun


@pytest.mark.parametrize(
    ("value", "says"),
    [(0, "0 sitemaps"), (1, "1 sitemap"), (2, "2 sitemaps"), (1_234, "1,234 sitemaps")],
)
def test_a_count_and_its_noun(value: int, says: str) -> None:
    assert count_noun(value, "sitemap") == says


def test_a_noun_with_its_own_plural() -> None:
    assert count_noun(1, "entry", "entries") == "1 entry"
    assert count_noun(3, "entry", "entries") == "3 entries"
    assert noun(1, "child sitemap") == "child sitemap"
    assert noun(2, "child sitemap") == "child sitemaps"


def test_the_verb_of_a_count() -> None:
    assert [are(n) for n in (0, 1, 2)] == ["are", "is", "are"]
