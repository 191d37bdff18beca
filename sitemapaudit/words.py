"""Counted things in the number they take, for every text a user reads: the findings, the log
and the report (``1 URL``, ``2 URLs``, ``0 URLs``)."""

from __future__ import annotations


def noun(value: int, singular: str, plural: str | None = None) -> str:
    """The noun of ``value`` things: ``singular`` for one, else ``plural`` (when it is not
    ``singular`` and an ``s``)."""
    return singular if value == 1 else (plural or f"{singular}s")


def count_noun(value: int, singular: str, plural: str | None = None) -> str:
    """``value`` and the noun in the number it takes: ``1 URL``, ``2 URLs``, ``0 URLs``
    (``plural``: when it is not ``singular`` and an ``s``)."""
    return f"{value:,} {noun(value, singular, plural)}"


def are(value: int) -> str:
    """The verb of ``value`` things: ``1 ... is``, ``2 ... are``."""
    return "is" if value == 1 else "are"


def and_list(values: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(values) < 2:
        return "".join(values)
    return f"{', '.join(values[:-1])} and {values[-1]}"
