"""Indexing directives of robots meta tags and ``X-Robots-Tag`` headers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime

from sitemapaudit.page.dates import expiry_instant

_NOINDEX = frozenset({"noindex", "none"})
# Directives that take a value after a colon; any other "name:" prefix names a user agent.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
# A user-agent token may start with a digit (``360Spider``); it needs one letter, so the time
# of a date split at a comma (``..., 15:00:00``) is not read as one. A version after it
# (``Googlebot/2.1``, as in a User-Agent string) is dropped: the product token names the crawler.
_SCOPE_RE = re.compile(
    r"\s*((?=[A-Za-z0-9_.\-]*[A-Za-z])[A-Za-z0-9_.\-]+)(?:/[^\s:]*)?\s*:(.*)", re.DOTALL
)


def _scoped_parts(parts: list[str]) -> Iterator[tuple[int, str | None, str]]:
    """(index, user agent or ``None`` for all, rules text) for each comma-separated part of a
    directive list.

    A ``name:`` prefix that is not a valued directive (``unavailable_after:``...) scopes the
    rules after it, within the same value, to that user agent.
    """
    scope: str | None = None
    for index, part in enumerate(parts):
        rules = part
        match = _SCOPE_RE.match(part)
        if match and match[1].lower() not in _VALUED_DIRECTIVES:
            scope = match[1].lower()
            rules = match[2]
        yield index, scope, rules


def _scoped_rules(value: str) -> Iterator[tuple[str | None, str]]:
    """(user agent or ``None`` for all, lowercased rule) for each rule of a directive list."""
    for _, scope, rules in _scoped_parts(value.split(",")):
        for word in rules.split():
            yield scope, word.lower()


def _product(user_agent: str) -> str:
    """The lowercased product token of a crawler name, without a version."""
    return user_agent.strip().lower().split("/", 1)[0]


def _says_noindex(value: str, user_agent: str) -> bool:
    agent = _product(user_agent)
    return any(
        rule in _NOINDEX and (scope is None or scope == agent)
        for scope, rule in _scoped_rules(value)
    )


def directives_noindex(content: str, *, user_agent: str = "googlebot") -> bool:
    """Whether the ``content`` of a robots (or user-agent) meta tag forbids indexing.

    Rules are comma-separated and case-insensitive; ``noindex`` and ``none`` forbid indexing,
    ``nofollow``, ``noarchive`` and the rest do not.
    """
    if not isinstance(content, str):
        return False
    return _says_noindex(content, user_agent)


def x_robots_tag_noindex(values: Sequence[str], *, user_agent: str = "googlebot") -> bool:
    """Whether ``X-Robots-Tag`` header values forbid indexing for ``user_agent``.

    ``noindex`` and ``none`` apply to every crawler; ``googlebot: noindex`` applies only
    when ``googlebot`` equals ``user_agent`` (case-insensitively), so ``otherbot: noindex``
    does not apply to Googlebot. A version after the user agent is not part of its name
    (``Googlebot/2.1: noindex`` is for Googlebot). ``unavailable_after: ...`` and other
    valued rules are ignored. Each header value is read on its own.
    """
    if isinstance(values, str):
        values = [values]
    return any(isinstance(value, str) and _says_noindex(value, user_agent) for value in values)


def unavailable_after(value: str, *, user_agent: str = "googlebot") -> datetime | None:
    """The earliest date of the ``unavailable_after: <date>`` rules of a directive list that
    apply to ``user_agent`` (unscoped, or scoped to it), or ``None``.

    Google drops a page from its results after that date. The date may hold commas (``Sat,
    25 Jun 2010 15:00:00 GMT``), so it is read from the rule's text and, when that alone is no
    date, with the comma-separated parts after it. A date Google could not read either
    (see :func:`sitemapaudit.page.dates.expiry_instant`) is ignored.
    """
    if not isinstance(value, str) or "unavailable_after" not in value.lower():
        return None
    agent = _product(user_agent)
    parts = value.split(",")
    found: datetime | None = None
    for index, scope, rules in _scoped_parts(parts):
        match = _SCOPE_RE.match(rules)
        if scope not in (None, agent) or match is None or match[1].lower() != "unavailable_after":
            continue
        rest = match[2]
        for extra in range(3):
            when = expiry_instant(",".join([rest, *parts[index + 1 : index + 1 + extra]]))
            if when is not None:
                found = when if found is None else min(found, when)
                break
    return found
