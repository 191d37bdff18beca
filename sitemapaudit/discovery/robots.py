"""robots.txt: the sitemaps it declares and the crawl policy it sets."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from protego import Protego

from sitemapaudit.sitemap.body import GZIP_MAGIC, BodyStream
from sitemapaudit.sitemap.records import ASCII_WHITESPACE
from sitemapaudit.urls import normalize_url, remove_dot_segments, resolve

# Google reads the first 500 KiB of a robots.txt and ignores the rest.
ROBOTS_MAX_BYTES = 512_000

_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
# A sitemap line as Google reads one: a key that starts with "sitemap" or "site-map", then a
# colon, or whitespace before a value of one word (a forgotten colon).
_SITEMAP_RE = re.compile(
    r"\ufeff?\s*site-?map[^\s:]*\s*(?::|(?=[^\s#]+\s*(?:#.*)?$))", re.IGNORECASE
)
# A user-agent line: the key (Protego's spellings), an optional colon, the value.
_USER_AGENT_LINE_RE = re.compile(
    r"^\ufeff?\s*(?P<key>user[-_ ]?agent)(?=[\s:])\s*:?(?P<value>.*)$", re.IGNORECASE
)
# What Google keeps of a user-agent value: its leading letters, "-" and "_".
_PRODUCT_TOKEN_RE = re.compile(r"[A-Za-z_-]*")
# Line breaks of Python's str.splitlines that robots.txt does not have (Google breaks lines at
# CR and LF only): inside a line they are just characters.
_OTHER_BREAKS_RE = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# The name given to groups of other crawlers, which no product token contains.
_OTHER_CRAWLERS = "~other~"
# The key of a robots.txt line (before its colon, or its first blank without one), and the
# keys Google reads as a rule or a group's start: any other line (Crawl-delay, Host, a
# typo Google does not know) neither applies nor ends the group of the user-agent lines
# before it (RFC 9309, 2.2.4; Google's parser), so it is left out of the rules.
_KEY_RE = re.compile(r"^\ufeff?\s*([^:\s]+(?:[ ][^:\s]+)?)\s*(?::|\s)")
_DISALLOW_TYPOS = frozenset({"dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_FALLBACK_AGENTS = {
    "googlebot-image": "googlebot",
    "googlebot-video": "googlebot",
    "googlebot-news": "googlebot",
}
"""Google's crawlers that obey the Googlebot group when no group names them (their
user-agent tokens are their own and ``Googlebot``)."""


def decode_robots(body: bytes) -> str:
    """The text of a robots.txt body.

    A UTF-8 BOM is stripped; a UTF-16 (LE or BE) body with a BOM is decoded as such; anything
    else is read as UTF-8 with invalid bytes replaced.
    """
    if body.startswith(codecs.BOM_UTF8):
        return body[3:].decode("utf-8", "replace")
    if body.startswith(codecs.BOM_UTF16_LE):
        return body[2:].decode("utf-16-le", "replace")
    if body.startswith(codecs.BOM_UTF16_BE):
        return body[2:].decode("utf-16-be", "replace")
    return body.decode("utf-8", "replace")


def sitemap_lines(text: str, base_url: str) -> list[str]:
    """The sitemap URLs a robots.txt declares, absolute, deduplicated (as the audit tells
    sitemaps apart: after :func:`~sitemapaudit.urls.normalize_url`, the first spelling kept),
    in order.

    Reads ``Sitemap:`` lines whatever the case and the whitespace around the colon, with LF,
    CRLF or CR-only line ends; a ``#`` starts a comment. Empty values are ignored; relative and
    protocol-relative values are resolved against ``base_url`` (the robots.txt URL). Values are
    not otherwise validated: a ``file:`` or malformed value is returned as written.
    """
    found: list[str] = []
    seen: set[str] = set()
    for line in _LINE_BREAK_RE.split(text):
        match = _SITEMAP_RE.match(line)
        if match is None:
            continue
        value = line[match.end() :].split("#", 1)[0].strip(ASCII_WHITESPACE)
        if not value:
            continue
        url = resolve(base_url, value)
        if url is None:
            continue
        key = normalize_url(url)
        if key not in seen:
            seen.add(key)
            found.append(url)
    return found


@dataclass(frozen=True, slots=True)
class RobotsPolicy:
    """What a robots.txt fetch means for the crawl.

    ``outcome`` is ``"rules"`` (2xx: the file's rules apply), ``"allow_all"`` (3xx left
    unresolved, or 4xx other than 429: no rules, RFC 9309) or ``"disallow_all"`` (5xx, 429,
    or unreachable). ``crawl_delay`` is the longer of that of the group for the user agent
    and that of the group for the crawler's own User-Agent (its requests are the ones paced),
    each falling back to the ``*`` group.
    """

    outcome: str
    status: int | None
    sitemaps: tuple[str, ...]
    crawl_delay: float | None
    _parser: Protego | None = field(default=None, repr=False, compare=False)
    _user_agent: str = field(default="Googlebot", repr=False, compare=False)
    # A 2xx body that is an HTML page with no robots.txt line in it (a soft 404).
    html_page: bool = field(default=False, compare=False)

    def can_fetch(self, url: str) -> bool:
        """Whether the user agent may fetch ``url`` under this policy: its rules are matched
        against the path a browser or crawler requests, with ``.`` and ``..`` segments removed
        (``/blocked/../ok`` is ``/ok``)."""
        if self.outcome == "allow_all":
            return True
        if self.outcome == "disallow_all":
            return False
        parser = self._parser
        if parser is None:
            return True
        try:
            return bool(parser.can_fetch(remove_dot_segments(url), self._user_agent))
        except (ValueError, TypeError, UnicodeError):
            return True


def robots_policy(
    status: int | None,
    body: bytes,
    url: str,
    *,
    user_agent: str = "Googlebot",
    crawler_agent: str = "",
    max_bytes: int = ROBOTS_MAX_BYTES,
) -> RobotsPolicy:
    """The policy set by fetching the robots.txt at ``url``.

    ``status`` is the final HTTP status, ``None`` when the file could not be fetched at all.
    For a 2xx only the first ``max_bytes`` bytes are read (a line cut at that limit is
    dropped), the rules are parsed with Protego and the sitemaps with :func:`sitemap_lines`.
    A gzip body (recognised by its magic bytes, as a server sends it with
    ``Content-Encoding: gzip``) is unpacked first, reading at most ``max_bytes`` of it.
    ``user_agent`` is the robot whose rules are evaluated; ``crawler_agent`` the User-Agent
    header the crawler sends (none: not known), whose group's ``Crawl-delay`` (the ``*``
    group's unless a group names it) is honoured too.
    """
    if status is None or status == 429 or not 200 <= status < 500:
        return RobotsPolicy("disallow_all", status, (), None, None, user_agent)
    if status >= 300:
        return RobotsPolicy("allow_all", status, (), None, None, user_agent)
    if body.startswith(GZIP_MAGIC):
        body = b"".join(BodyStream(body, limit=max_bytes + 1))
    # Past the limit, the line it cuts is dropped; one that the limit ends exactly (the next
    # byte ends it) is whole.
    truncated = len(body) > max_bytes and body[max_bytes : max_bytes + 1] not in (b"\n", b"\r")
    text = decode_robots(body[:max_bytes])
    if truncated:
        cut = max(text.rfind("\n"), text.rfind("\r"))
        text = text[: cut + 1] if cut != -1 else ""
    sitemaps = tuple(sitemap_lines(text, url))
    agent = _product_token(user_agent)
    parser: Protego | None
    try:
        parser = Protego.parse(google_groups(text, agent, rules_only=True))
        delays = [Protego.parse(google_groups(text, agent)).crawl_delay(agent or "*")]
        if crawler_agent:
            delays.append(Protego.parse(text).crawl_delay(crawler_agent))
    except Exception:
        parser, delays = None, []
    known = [float(delay) for delay in delays if delay is not None]
    crawl_delay = max(known) if known else None
    html_page = _HTML_START_RE.match(text) is not None and not sitemaps
    html_page = html_page and _DIRECTIVE_RE.search(text) is None
    return RobotsPolicy("rules", status, sitemaps, crawl_delay, parser, agent or "*", html_page)


# The start of an HTML document, and a robots.txt line that means something.
_HTML_START_RE = re.compile(
    r"[\s\ufeff]*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]", re.I | re.S
)
_DIRECTIVE_RE = re.compile(r"^[ \t]*(?:user-agent|allow|disallow|crawl-delay)[ \t]*:", re.I | re.M)


def _product_token(user_agent: str) -> str:
    """The part of a user-agent value Google compares: leading letters, "-" and "_",
    lowercased (``Googlebot/2.1`` is ``googlebot``)."""
    match = _PRODUCT_TOKEN_RE.match(user_agent.strip())
    return match.group(0).lower() if match else ""


def google_groups(text: str, agent: str, *, rules_only: bool = False) -> str:
    """``text`` with its user-agent lines as Google reads them, for Protego to parse.

    Google matches a group when the product token of its user-agent value (``Googlebot/2.1``,
    ``Googlebot;`` and ``googlebot mobile`` all read ``googlebot``) equals the crawler's, case
    aside, and reads ``* anything`` as the global group; Protego would also take a group whose
    value merely starts the crawler's name (``Google`` for ``Googlebot``). So each value is
    rewritten to ``agent`` (the crawler's product token), ``*``, or a name no crawler has.
    Googlebot-Image, -Video and -News obey the Googlebot group when none names them.
    Lines break at CR and LF only, as Google breaks them.

    ``rules_only``: lines other than user-agent, allow, disallow and sitemap lines are left
    out, as Google leaves them out (a ``Crawl-delay`` between two user-agent lines does not
    split their group), and keys Google reads by their start (``Disallowed``) are spelled as
    Protego reads them.
    """
    raw_lines = [_OTHER_BREAKS_RE.sub(" ", raw) for raw in _LINE_BREAK_RE.split(text)]
    named = agent
    fallback = _FALLBACK_AGENTS.get(agent)
    if fallback is not None:
        tokens = {_agent_token(m) for line in raw_lines if (m := _USER_AGENT_LINE_RE.match(line))}
        if agent not in tokens and fallback in tokens:
            named = fallback
    lines = []
    for raw in raw_lines:
        match = _USER_AGENT_LINE_RE.match(raw)
        if match is not None:
            token = _agent_token(match)
            name = token if token == "*" else agent if token and token == named else _OTHER_CRAWLERS
            lines.append(f"{match.group('key')}: {name}")
        else:
            lines.append(_rule_line(raw) if rules_only else raw)
    return "\n".join(lines)


def _agent_token(match: re.Match[str]) -> str:
    """``*`` for the global group's user-agent line, else the product token of its value."""
    value = match.group("value").split("#", 1)[0].strip()
    if value[:1] == "*" and (len(value) == 1 or value[1].isspace()):
        return "*"
    return _product_token(value)


def _rule_line(line: str) -> str:
    """A line that is no user-agent line, as Google reads it: an allow, disallow or sitemap
    line (its key spelled as Protego reads it), or nothing."""
    match = _KEY_RE.match(line)
    if match is None:
        return ""
    key = match.group(1).lower()
    if key.startswith("disallow") or key in _DISALLOW_TYPOS:
        return "disallow:" + line[match.end() :]
    if key.startswith("allow"):
        return "allow:" + line[match.end() :]
    if _SITEMAP_RE.match(line):
        return line
    return ""
