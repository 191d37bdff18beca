"""hreflang alternates: the BCP 47 and ISO code check, extraction, and cross-sitemap reciprocity.

Google requires hreflang annotations to be reciprocal: when page A lists page B as an
alternate, B must list A back. Pages and their alternates are usually spread over many
sitemaps, so :class:`HreflangGraph` accumulates them for a whole audit and answers at the end.
An alternate whose href is not an absolute http(s) URL (``/de``, ``ftp://...``), which Google
ignores and the sitemap's ``invalid_url`` reports, is no link in that graph, and its page is
not judged as failing to link back: what it meant to list cannot be told.

Storage choice: a site can list millions of pages with a dozen alternates each, which does
not fit comfortably in a Python dict. The graph is kept in SQLite (the standard library's
``sqlite3``): by default a private temporary database, which SQLite keeps in a small page
cache and spills to a temporary file it deletes when the connection closes, so memory stays
bounded (the cache is capped by ``cache_kib``). A path can be given instead to keep the
store on a chosen disk.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Final

from lxml import etree

from sitemapaudit.sitemap.records import ASCII_WHITESPACE
from sitemapaudit.urls import is_valid_url, normalize_url
from sitemapaudit.validation.isocodes import ISO_639_1, ISO_639_2_TO_1, REGIONS, WITHDRAWN_639_1
from sitemapaudit.validation.schemas import XHTML_NS, EmptyResolver

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

_ALNUM = "[a-z0-9]"
_LANGUAGE = r"(?:[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4}|[a-z]{5,8})"
_SCRIPT = r"[a-z]{4}"
_REGION = r"(?:[a-z]{2}|[0-9]{3})"
_VARIANT = rf"(?:{_ALNUM}{{5,8}}|[0-9]{_ALNUM}{{3}})"
_EXTENSION = rf"(?:[0-9a-wy-z](?:-{_ALNUM}{{2,8}})+)"
_PRIVATE = rf"(?:x(?:-{_ALNUM}{{1,8}})+)"
_LANGTAG = (
    rf"{_LANGUAGE}(?:-{_SCRIPT})?(?:-{_REGION})?(?:-{_VARIANT})*(?:-{_EXTENSION})*(?:-{_PRIVATE})?"
)
_GRANDFATHERED = (
    "en-gb-oed|i-ami|i-bnn|i-default|i-enochian|i-hak|i-klingon|i-lux|i-mingo|i-navajo|"
    "i-pwn|i-tao|i-tay|i-tsu|sgn-be-fr|sgn-be-nl|sgn-ch-de|art-lojban|cel-gaulish|no-bok|"
    "no-nyn|zh-guoyu|zh-hakka|zh-min|zh-min-nan|zh-xiang"
)
_BCP47: Final = re.compile(rf"(?:{_LANGTAG}|{_PRIVATE}|{_GRANDFATHERED})", re.IGNORECASE)
_PRIVATE_TAG: Final = re.compile(_PRIVATE, re.IGNORECASE)
_GRANDFATHERED_TAG: Final = re.compile(_GRANDFATHERED, re.IGNORECASE)
# The language and region subtags at the start of a valid language tag (extended language
# subtags go with the language, a script sits between them).
_SUBTAGS: Final = re.compile(
    r"(?P<language>[a-z]{2,8})(?:-[a-z]{3}(?![a-z0-9])){0,3}(?:-[a-z]{4}(?![a-z0-9]))?"
    r"(?:-(?P<region>[a-z]{2})(?![a-z0-9]))?",
    re.IGNORECASE,
)

# What a site meant by a code that names no language or region, where that is clear.
_LANGUAGE_MEANT: Final = {
    "al": "Albanian is 'sq'",
    "cn": "Chinese is 'zh'",
    "cz": "Czech is 'cs'",
    "dk": "Danish is 'da'",
    "gb": "English is 'en'",
    "gr": "Greek is 'el'",
    "il": "Hebrew is 'he'",
    "jp": "Japanese is 'ja'",
    "rs": "Serbian is 'sr'",
    "ua": "Ukrainian is 'uk'",
    "us": "English is 'en'",
    "vn": "Vietnamese is 'vi'",
}
# ISO 639-2's codes for no language in particular (BCP 47 lists them as languages), and its
# range for local use.
_NO_LANGUAGE: Final = {
    "und": "undetermined",
    "mul": "multiple languages",
    "mis": "uncoded languages",
    "zxx": "no linguistic content",
}
_LOCAL_LANGUAGE: Final = re.compile("q[a-t][a-z]", re.IGNORECASE)
# The grandfathered tags of RFC 1766's "i-" form, with the tag the language subtag registry
# prefers where it names one.
_I_TAGS: Final[dict[str, str | None]] = {
    "i-ami": "ami",
    "i-bnn": "bnn",
    "i-default": None,
    "i-enochian": None,
    "i-hak": "hak",
    "i-klingon": "tlh",
    "i-lux": "lb",
    "i-mingo": None,
    "i-navajo": "nv",
    "i-pwn": "pwn",
    "i-tao": "tao",
    "i-tay": "tay",
    "i-tsu": "tsu",
}

# The languages that the registry's extended language subtags are written after (RFC 5646:
# each extlang has one of them as its prefix, ``zh-yue``, ``ar-afb``); after any other, three
# letters are no subtag a tag can hold (``en-USA`` meant ``en-US``).
_EXTLANG_PREFIXES: Final = frozenset({"ar", "kok", "lv", "ms", "sgn", "sw", "uz", "zh"})
_EXTLANG: Final = re.compile(r"-([a-z]{3})(?![a-z0-9])", re.IGNORECASE)

_REGION_MEANT: Final = {
    "uk": "the United Kingdom is 'GB'",
    "eu": "it is reserved for the European Union, which is no country: list one alternate "
    "per country, or give the language alone",
}

_LINK_TAG: Final = f"{{{XHTML_NS}}}link"


@functools.lru_cache(maxsize=4096)
def _usable_value(value: str) -> bool:
    """Whether Google reads an annotation with this (stripped) hreflang value."""
    return bool(value) and hreflang_problem(value) is None


def is_valid_hreflang(value: str) -> bool:
    """Whether ``value`` is ``x-default`` or a valid BCP 47 language tag that names an
    assigned language and region.

    The syntax follows RFC 5646's grammar, case-insensitively: a language of 2-3 letters
    (with up to three extended-language subtags) or of 4-8 letters, an optional 4-letter
    script, an optional region of 2 letters or 3 digits, variants, extensions and a private
    use part, plus the grandfathered tags. Then, as Google reads hreflang (an ISO 639-1
    language, an optional ISO 3166-1 alpha-2 region), :func:`unassigned_code` must find
    nothing to say. A valid tag may still name a language Google does not document
    (:func:`hreflang_unsupported`).
    """
    return hreflang_problem(value) is None


def hreflang_problem(value: str) -> str | None:
    """What is wrong with an hreflang value, as a message; ``None`` when it is ``x-default``
    or a valid tag with assigned codes (see :func:`is_valid_hreflang`)."""
    if value.lower() == "x-default":
        return None
    if _BCP47.fullmatch(value) is None:
        return (
            f"hreflang {value!r} is not a valid BCP 47 language tag or 'x-default': "
            f"{hreflang_hint(value)}"
        )
    unassigned = unassigned_code(value)
    if unassigned is not None:
        return f"hreflang {value!r}: {unassigned}, so Google ignores this annotation"
    return None


def hreflang_unsupported(value: str) -> str | None:
    """Why Google may not read a valid hreflang value, as a message, or ``None``.

    Google documents hreflang languages as ISO 639-1 codes. A language of three letters that
    is valid in a language tag has no ISO 639-1 code (``fil``, Filipino; ``yue``, Cantonese):
    the tag is right by BCP 47, but Google says nothing of reading it. ``None`` for a value
    :func:`hreflang_problem` finds wrong, which is reported as that.
    """
    if _PRIVATE_TAG.fullmatch(value) or value.lower() in _I_TAGS:
        return None
    if _BCP47.fullmatch(value) is None or unassigned_code(value) is not None:
        return None
    subtags = _SUBTAGS.match(value)
    if subtags is None or len(subtags["language"]) != 3:
        return None
    return (
        f"hreflang {value!r}: language '{subtags['language']}' has three letters and no "
        "two-letter ISO 639-1 code; Google documents only ISO 639-1 languages for hreflang, "
        "so it may ignore this annotation"
    )


def unassigned_code(value: str) -> str | None:
    """Why a syntactically valid language tag names no language or region Google reads, or
    ``None``.

    Reported: a two-letter language that is not ISO 639-1 (``jp``); a three-letter language
    that is the ISO 639-2 code of one that has an ISO 639-1 code (``eng`` for ``en``, which a
    language tag must use); ISO 639-2's codes for no particular language (``und``, ``mul``,
    ``mis``, ``zxx``) and its local-use range ``qaa`` to ``qtz``; a language of 4-8 letters
    (RFC 5646 reserves 4 letters, and the registry has no language of 5-8); the grandfathered
    ``i-`` tags (``i-klingon``), whose ``i`` is no language; and a two-letter region that is
    not an assigned ISO 3166-1 alpha-2 code (``UK``, ``EU``); a private-use tag other than
    ``x-default`` (``x-whatever``). Other three-letter languages (``fil``), a script, a numeric
    UN M.49 region (``es-419``) and anything after the region (``en-US-x-twain``) are not
    looked up.
    """
    lowered = value.lower()
    if lowered in _I_TAGS:
        preferred = _I_TAGS[lowered]
        if lowered == "i-default":
            note = " (the fallback value is written 'x-default')"
        else:
            note = f" (BCP 47 prefers '{preferred}')" if preferred else ""
        return f"a grandfathered tag, whose 'i-' names no ISO 639-1 language{note}"
    if _PRIVATE_TAG.fullmatch(value):
        if lowered == "x-default":
            return None
        return "a private-use tag, which names no language (the one Google reads is 'x-default')"
    subtags = _SUBTAGS.match(value)
    if subtags is None:
        return None
    written = subtags["language"]
    language = written.lower()
    extended = _EXTLANG.match(value, subtags.end("language"))
    if (
        extended is not None
        and language not in _EXTLANG_PREFIXES
        and _GRANDFATHERED_TAG.fullmatch(value) is None
    ):
        return (
            f"'{extended[1]}' is no region but an extended language subtag, which only follows "
            f"{', '.join(sorted(_EXTLANG_PREFIXES)[:-1])} or zh (a region is an ISO 3166-1 "
            "alpha-2 code of two letters, such as 'US')"
        )
    if len(language) == 3:
        problem = _three_letter_problem(written)
        if problem is not None:
            return problem
    elif len(language) >= 4 or (
        len(language) == 2 and language not in ISO_639_1 and language not in WITHDRAWN_639_1
    ):
        meant = _LANGUAGE_MEANT.get(language)
        return f"language '{written}' is not an ISO 639-1 code" + (f" ({meant})" if meant else "")
    region = subtags["region"]
    if region is not None and region.lower() not in REGIONS:
        meant = _REGION_MEANT.get(region.lower())
        return f"region '{region}' is not an ISO 3166-1 alpha-2 country code" + (
            f" ({meant})" if meant else ""
        )
    return None


def _three_letter_problem(written: str) -> str | None:
    """What names no language in a three-letter language subtag, as written; ``None`` for a
    language without an ISO 639-1 code (:func:`hreflang_unsupported`)."""
    language = written.lower()
    two = ISO_639_2_TO_1.get(language)
    if two is not None:
        return (
            f"language '{written}' is not an ISO 639-1 code (a language tag writes it '{two}', "
            "its two-letter code)"
        )
    meaning = _NO_LANGUAGE.get(language)
    if meaning is not None:
        anywhere = " (a page for any language is 'x-default')" if language in {"und", "mul"} else ""
        return f"language '{written}' means \"{meaning}\" and names no language{anywhere}"
    if _LOCAL_LANGUAGE.fullmatch(language):
        return f"language '{written}' is reserved for local use and names no language"
    return None


def hreflang_hint(value: str) -> str:
    """A short hint about what is wrong with an invalid hreflang value."""
    if not value.strip():
        return "it is empty"
    if value != value.strip():
        return "remove the surrounding whitespace"
    if value.lower() in {"x_default", "xdefault", "x-default-"}:
        return "the fallback value is written 'x-default'"
    if "_" in value:
        return "separate subtags with '-', not '_'"
    return "expected a language code such as 'en', 'en-GB', 'zh-Hant' or 'x-default'"


def link_alternate(link: etree._Element) -> tuple[str, str] | None:
    """``(hreflang, href)`` of an ``xhtml:link rel="alternate"`` element, else ``None``.

    Values are stripped of surrounding whitespace; a link without ``hreflang`` or ``href``
    gives ``None``.
    """
    rel = link.get("rel") or ""
    if "alternate" not in rel.lower().split():
        return None
    hreflang = (link.get("hreflang") or "").strip()
    href = (link.get("href") or "").strip(ASCII_WHITESPACE)
    if not hreflang or not href:
        return None
    return hreflang, href


def _without_hreflang(data: bytes) -> bool:
    """Whether a document certainly has no ``hreflang`` attribute, without parsing it: in a
    document that starts as ASCII (``<``, maybe after white space or a UTF-8 byte order mark;
    not UTF-16, UTF-32 or EBCDIC), an attribute name is its bytes."""
    head = data[:64]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    ascii_start = head.lstrip().startswith(b"<") and b"\x00" not in head
    return ascii_start and b"hreflang" not in data


class _ChunkReader(io.RawIOBase):
    """A readable file over an iterable of byte chunks (a document streamed as it inflates)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = chunk
        view = memoryview(buffer).cast("B")
        size = min(len(view), len(self._pending))
        view[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def iter_alternates(
    data: bytes | Iterable[bytes],
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Yield ``(loc, [(hreflang, href), ...])`` for each ``<url>`` that lists alternates.

    ``data`` is a decompressed urlset, whole or as chunks (a document too large to hold, or
    one whose gzip breaks off, is read as it inflates). ``<url>`` and ``<loc>`` are matched by
    local name (so a urlset with a wrong namespace still yields its alternates); links must be
    ``xhtml:link`` elements with ``rel="alternate"``, a ``hreflang`` and an ``href``.
    Parsing is incremental and never resolves entities or loads anything; it stops quietly
    at the first well-formedness error (or where the chunks end), after yielding what came
    before it.
    """
    if isinstance(data, bytes):
        if _without_hreflang(data):
            return
        source: io.RawIOBase | io.BytesIO = io.BytesIO(data)
    else:
        source = _ChunkReader(data)
    events = etree.iterparse(
        source,
        events=("end",),
        tag="{*}url",
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
    )
    events.resolvers.add(EmptyResolver())
    try:
        for _event, element in events:
            parent = element.getparent()
            if parent is None or not str(parent.tag).endswith("urlset"):
                continue
            loc: str | None = None
            alternates: list[tuple[str, str]] = []
            for child in element:
                tag = child.tag
                if not isinstance(tag, str):
                    continue
                if tag == _LINK_TAG:
                    pair = link_alternate(child)
                    if pair is not None:
                        alternates.append(pair)
                elif loc is None and tag.rpartition("}")[2] == "loc":
                    loc = (child.text or "").strip(ASCII_WHITESPACE)
            element.clear(keep_tail=False)
            while element.getprevious() is not None:
                del parent[0]
            if loc and alternates:
                yield loc, alternates
    except etree.XMLSyntaxError:
        return


class HreflangGraph:
    """Pages and their hreflang alternates across every sitemap of an audit.

    Call :meth:`add` for each page (``iter_alternates`` gives them per sitemap), then
    :meth:`not_reciprocal` once all sitemaps are in. Backed by SQLite (see the module
    docstring); usable as a context manager, and safe to call from several threads.
    """

    _COMMIT_EVERY: Final = 20_000

    def __init__(self, path: str | os.PathLike[str] | None = None, *, cache_kib: int = 8192):
        self._db = sqlite3.connect(
            os.fspath(path) if path is not None else "", check_same_thread=False
        )
        self._lock = threading.Lock()
        self._pending = 0
        self._db.execute(f"PRAGMA cache_size = -{int(cache_kib)}")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA temp_store = FILE")
        # URLs as written (for messages and the records) and as compared (``normalize_url``:
        # an IRI and its percent-encoded form, or a host's case, are the same URL).
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS alternate ("
            " page TEXT NOT NULL, href TEXT NOT NULL, hreflang TEXT NOT NULL,"
            " sitemap TEXT NOT NULL, page_key TEXT NOT NULL, href_key TEXT NOT NULL,"
            " PRIMARY KEY (page, href, hreflang)) WITHOUT ROWID"
        )
        self._db.execute(
            "CREATE INDEX IF NOT EXISTS alternate_keys ON alternate (page_key, href_key)"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS page ("
            " loc TEXT PRIMARY KEY, sitemap TEXT NOT NULL, key TEXT NOT NULL) WITHOUT ROWID"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS page_key ON page (key)")
        # Pages that list an alternate whose href is not an absolute http(s) URL.
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS unreadable (key TEXT PRIMARY KEY) WITHOUT ROWID"
        )
        self._db.commit()

    def add(self, loc: str, alternates: Iterable[tuple[str, str]], sitemap: str) -> None:
        """Record that ``sitemap`` lists ``loc`` with ``alternates`` as ``(hreflang, href)``.

        Values are stripped; repeated pairs are stored once. The first sitemap that lists a
        page is the one named in messages. An href that is not an absolute http(s) URL is left
        out, and marks the page as one whose alternates cannot all be read (see
        :meth:`not_reciprocal`).
        """
        page = loc.strip(ASCII_WHITESPACE)
        if not page:
            return
        page_key = normalize_url(page)
        rows = []
        unreadable = False
        for written_hreflang, written_href in alternates:
            href, hreflang = written_href.strip(ASCII_WHITESPACE), written_hreflang.strip()
            if not href or not _usable_value(hreflang):
                # (An invalid hreflang is hreflang_invalid: Google ignores the annotation.)
                continue
            if not is_valid_url(href):
                unreadable = True
                continue
            rows.append((page, href, hreflang, sitemap, page_key, normalize_url(href)))
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO page (loc, sitemap, key) VALUES (?, ?, ?)",
                (page, sitemap, page_key),
            )
            if unreadable:
                self._db.execute("INSERT OR IGNORE INTO unreadable (key) VALUES (?)", (page_key,))
            if rows:
                self._db.executemany(
                    "INSERT OR IGNORE INTO alternate"
                    " (page, href, hreflang, sitemap, page_key, href_key)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
            self._pending += 1 + len(rows)
            if self._pending >= self._COMMIT_EVERY:
                self._db.commit()
                self._pending = 0

    def flush(self) -> None:
        """Make everything added so far durable (a resumed audit reads it back)."""
        with self._lock:
            self._db.commit()
            self._pending = 0

    def __len__(self) -> int:
        """The number of pages recorded."""
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM page").fetchone()
        return int(row[0])

    def not_reciprocal(
        self, in_scope: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[str, str, str]]:
        """Yield ``(page, alternate href, message)`` for each alternate that does not link back.

        An alternate "links back" when it is itself recorded with ``page`` among its own
        alternates (under any hreflang); URLs compare as ``normalize_url`` makes them. A
        page's link to itself is never reported, nor an alternate that ``in_scope`` refuses
        (on another site, whose sitemaps the audit does not read), nor one that lists an
        alternate whose href is not an absolute http(s) URL (``/de``): that href may be the
        link back, and is reported as ``invalid_url`` itself. Results come in page order, one
        per (page, href) pair, with all its hreflang codes in the message.
        """
        with self._lock:
            self._db.commit()
            self._pending = 0
            cursor = self._db.execute(
                "SELECT a.page, a.href, group_concat(a.hreflang, ', '), min(a.sitemap),"
                " p.key IS NOT NULL"
                " FROM alternate AS a"
                " LEFT JOIN (SELECT DISTINCT key FROM page) AS p ON p.key = a.href_key"
                " WHERE a.href_key <> a.page_key AND NOT EXISTS ("
                "  SELECT 1 FROM alternate AS b"
                "  WHERE b.page_key = a.href_key AND b.href_key = a.page_key)"
                " AND NOT EXISTS (SELECT 1 FROM unreadable AS u WHERE u.key = a.href_key)"
                " GROUP BY a.page, a.href ORDER BY a.page, a.href"
            )
        while True:
            with self._lock:
                rows = cursor.fetchmany(1000)
            if not rows:
                return
            if in_scope is not None:
                rows = [row for row in rows if in_scope(row[1])]
            yield from self._messages(rows)

    @staticmethod
    def _messages(rows: list[tuple[str, str, str, str, int]]) -> Iterator[tuple[str, str, str]]:
        for page, href, codes, sitemap, listed in rows:
            if listed:
                message = (
                    f"hreflang alternate {href} ({codes}) of {page} does not list {page} "
                    f"back among its own alternates (seen in {sitemap})"
                )
            else:
                message = (
                    f"hreflang alternate {href} ({codes}) of {page} is not listed with "
                    f"alternates in any audited sitemap, so it cannot link back (seen in "
                    f"{sitemap})"
                )
            yield str(page), str(href), message

    def close(self) -> None:
        """Close the store; a temporary database is deleted."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> HreflangGraph:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
