"""URL rules: the audited origin, validity of listed URLs, scope, comparison and resolution.

Everything here is pure and never raises on hostile input; only :func:`parse_origin`, which
reads configuration, raises :class:`~sitemapaudit.errors.ConfigError`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

import idna

from sitemapaudit.errors import ConfigError

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443}

_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_SCHEME_START_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# Characters a registered name may hold besides letters and digits (RFC 3986 unreserved and
# sub-delims, and "%" for escapes, which are checked separately).
_REG_NAME_RE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=%]*")
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")
_HOST_LABEL_RE = re.compile(r"[a-z0-9_](?:[a-z0-9_\-]{0,61}[a-z0-9_])?")
_PORT_RE = re.compile(r"[0-9]{1,5}")
_BAD_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PERCENT_HEX_RE = re.compile(r"%[0-9A-Fa-f]{2}")
# C0 and C1 controls, DEL and every Unicode space.
_SPACE_OR_CONTROL_RE = re.compile(r"[\x00-\x20\x7f-\x9f\s]")
# What the WHATWG URL parser strips from an attribute value before parsing it.
_URL_TAB_NEWLINE_RE = re.compile(r"[\t\n\r]")
_URL_EDGE_JUNK = "".join(chr(c) for c in range(0x21))
# An absolute http(s) URL that urljoin gives back unchanged whatever the base: printable ASCII
# with a host, and no ";" (path parameters), no brackets (IPv6 literals are checked) and no
# empty query or fragment (urljoin drops those; see _urljoin_keeps).
_PLAIN_ABSOLUTE_RE = re.compile(r"https?://[A-Za-z0-9][!-:<-Z\\^-~]*")
# The authority of a URL with one: what lies between "://" and the path, query or fragment.
_AUTHORITY_RE = re.compile(r"[^:/?#]*://([^/?#\\]*)")
_SPECIAL = ("http://", "https://")


@dataclass(frozen=True, slots=True)
class Origin:
    """The site under audit: scheme, ASCII (punycode) host and port (``None`` = default)."""

    scheme: str
    host: str
    port: int | None

    @property
    def url(self) -> str:
        """The origin as a URL without a trailing slash, e.g. ``https://example.com``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port is None:
            return f"{self.scheme}://{host}"
        return f"{self.scheme}://{host}:{self.port}"

    def owns(self, url: str) -> bool:
        """Whether ``url`` is on this site.

        The host must be the same (case-insensitive, IDNA-normalised, an IPv4 address in any
        of its notations, a trailing dot ignored) and so must the port once a scheme's default
        port is read as no port; ``http`` and ``https`` URLs both belong to the origin
        whichever scheme it was given with.
        """
        parts = _split_authority(url)
        if parts is None:
            return False
        scheme, host, port = parts
        if scheme not in DEFAULT_PORTS:
            return False
        if host.rstrip(".") != self.host.rstrip("."):
            return False
        if port == DEFAULT_PORTS[scheme]:
            port = None
        return port == self.port


def url_origin(url: str) -> Origin | None:
    """The origin of an absolute http(s) URL; ``None`` when it has none."""
    parts = _split_authority(url)
    if parts is None or parts[0] not in DEFAULT_PORTS:
        return None
    scheme, host, port = parts
    return Origin(scheme, host, None if port == DEFAULT_PORTS[scheme] else port)


def origin_of(url: str) -> str:
    """The origin (``scheme://host[:port]``) of an absolute http(s) URL, as the ``domain``
    argument takes it; ``url`` itself when it has none."""
    origin = url_origin(url)
    return url if origin is None else origin.url


@dataclass(frozen=True, slots=True)
class SitemapHosts:
    """Where the site's sitemaps may be fetched: the audited origin, and other hosts that keep
    its sitemaps (a CDN, a host that robots.txt cross-submits, the host of a sitemap given as
    an argument)."""

    origin: Origin
    others: tuple[Origin, ...] = ()

    def owns(self, url: str) -> bool:
        return self.origin.owns(url) or any(other.owns(url) for other in self.others)


def parse_origin(value: str) -> Origin:
    """Read the ``domain`` argument: a bare host (meaning https) or an ``http(s)://`` origin.

    Accepted: ``example.com``, ``sub.example.co.uk``, ``localhost``, ``127.0.0.1`` (or
    another notation of an IPv4 address, stored in dotted decimal), ``[::1]``, an IDN such as
    ``bücher.de`` (stored as punycode), each with an optional ``:port``; or
    ``http://host[:port]`` / ``https://host[:port]`` with an optional trailing ``/``. A port
    equal to the scheme's default is stored as ``None``.

    Raises :class:`ConfigError` naming the ``domain`` argument and quoting the value for
    anything else.
    """

    def fail(reason: str) -> ConfigError:
        return ConfigError(
            f"invalid value for domain: {value!r} ({reason}); expected a host such as "
            "'example.com' or an origin such as 'https://example.com'"
        )

    if not isinstance(value, str) or not value:
        raise fail("empty")
    if _SPACE_OR_CONTROL_RE.search(value):
        raise fail("contains whitespace or control characters")
    scheme = "https"
    rest = value
    if "://" in value:
        scheme, _, rest = value.partition("://")
        scheme = scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise fail("the scheme must be http or https")
    else:
        prefix, colon, after = value.partition(":")
        looks_like_host = (
            "." in prefix
            or prefix.lower() == "localhost"
            or prefix.startswith("[")
            or after.rstrip("/").isdigit()
        )
        if colon and not looks_like_host and _SCHEME_RE.fullmatch(prefix):
            raise fail("the scheme must be http or https")
    if rest.endswith("/"):
        rest = rest[:-1]
    if not rest or rest[0] in "/?#":  # http:///path: a path, but first no host at all
        raise fail("no host")
    for char, what in (
        ("/", "a path is not allowed"),
        ("?", "a query is not allowed"),
        ("#", "a fragment is not allowed"),
        ("@", "user information is not allowed"),
        ("\\", "a backslash is not allowed"),
    ):
        if char in rest:
            raise fail(what)
    split = _split_host_port(rest)
    if split is None:
        raise fail("malformed host or port")
    raw_host, raw_port = split
    port: int | None = None
    if raw_port is not None:
        if not _PORT_RE.fullmatch(raw_port) or not 0 < int(raw_port) <= 65535:
            raise fail("invalid port")
        port = int(raw_port)
        if port == DEFAULT_PORTS[scheme]:
            port = None
    host = _config_host(raw_host)
    if host is None:
        raise fail("invalid host")
    return Origin(scheme=scheme, host=host, port=port)


def _config_host(raw: str) -> str | None:
    """The normalised host of a configured origin, or ``None`` when it is not a valid host."""
    if raw.startswith("["):
        if not raw.endswith("]"):
            return None
        try:
            return ipaddress.IPv6Address(raw[1:-1]).compressed
        except ValueError:
            return None
    host = _ascii_host(raw)
    if host is None:
        return None
    if _ends_in_number(host):
        return _ipv4_host(host)
    host = host.rstrip(".") if host.endswith(".") and not host.endswith("..") else host
    if not host or len(host) > 253:
        return None
    labels = host.split(".")
    if not all(_HOST_LABEL_RE.fullmatch(label) for label in labels):
        return None
    return host


def _split_host_port(hostport: str) -> tuple[str, str | None] | None:
    """Split ``host[:port]`` (host possibly a bracketed IPv6 literal); ``None`` if malformed."""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end == -1:
            return None
        host, after = hostport[: end + 1], hostport[end + 1 :]
        if not after:
            return host, None
        if not after.startswith(":"):
            return None
        return host, after[1:]
    if "]" in hostport:
        return None
    if ":" in hostport:
        host, _, port = hostport.rpartition(":")
        if ":" in host:
            return None
        return host, port
    return hostport, None


@lru_cache(maxsize=4096)
def _ascii_host(host: str) -> str | None:
    """``host`` lowercased, with a non-ASCII name converted to punycode (UTS #46)."""
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        pass
    try:
        return host.encode("idna").decode("ascii").lower()
    except (UnicodeError, ValueError):
        return None


_RADIX_DIGITS = {8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _ipv4_number(part: str) -> int | None:
    """A part of a host read as an IPv4 number (decimal, ``0x`` hexadecimal or ``0`` octal, as
    the WHATWG URL Standard reads it); ``None`` when it is not one."""
    digits, base = part, 10
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:], 16
        if not digits:
            return 0
    elif len(part) > 1 and part[0] == "0":
        digits, base = part[1:], 8
    if not digits or digits.strip(_RADIX_DIGITS[base]):
        return None
    return int(digits, base)


def _ends_in_number(host: str) -> bool:
    """Whether the URL Standard reads ``host`` as an IPv4 address (its last label, a trailing
    dot aside, is a number): ``example.123`` is then no host at all."""
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    return (last.isascii() and last.isdigit()) or _ipv4_number(last) is not None


@lru_cache(maxsize=4096)
def _ipv4_host(host: str) -> str | None:
    """The dotted-decimal address that an ASCII ``host`` ending in a number names, as the
    WHATWG URL Standard (browsers, Google) reads it: ``127.1``, ``0x7f000001``, ``0177.0.0.1``,
    ``2130706433`` and ``127.0.0.1.`` are all ``127.0.0.1``. ``None`` when it names none
    (``999.1.1.1``, ``1.2.3.4.5``, ``example.123``)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    values = [number for number in numbers if number is not None]
    last = values.pop()
    if any(value > 255 for value in values) or last >= 256 ** (4 - len(values)):
        return None
    address = last + sum(value << (8 * (3 - index)) for index, value in enumerate(values))
    return str(ipaddress.IPv4Address(address))


def _host_form(host: str) -> str | None:
    """An ASCII host as URLs are compared and requested: an IPv4 address in dotted decimal
    (:func:`_ipv4_host`), a name as it is; ``None`` when it ends in a number that is no
    address. A host with percent-escapes is kept as written."""
    if "%" in host or not _ends_in_number(host):
        return host
    return _ipv4_host(host)


def request_url(url: str) -> str:
    """``url`` as a browser requests it: with an IPv4 address written another way
    (``http://127.1/``, ``http://127.0.0.1./``) in dotted decimal (``http://127.0.0.1/``), and
    the ``.`` and ``..`` segments of its path removed (:func:`remove_dot_segments`). Any other
    URL is returned unchanged (a name keeps its trailing dot). An http(s) URL without a path
    (``http://e.com``, ``http://e.com?q``) gets the ``/`` browsers request."""
    url = remove_dot_segments(url)
    authority = _AUTHORITY_RE.match(url)
    if authority is None:
        return url
    end = authority.end()
    if (end == len(url) or url[end] in "?#") and url[: authority.start(1)].lower() in _SPECIAL:
        url = f"{url[:end]}/{url[end:]}"
    host = authority.group(1).rpartition("@")[2].partition(":")[0]
    if host.isascii() and (not _ends_in_number(host) or _ipv4_host(host) == host):
        return url
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except (ValueError, TypeError, AttributeError):
        return url
    if not hostname or ":" in hostname or "%" in hostname:
        return url
    ascii_host = _ascii_host(hostname)
    if ascii_host is None or not _ends_in_number(ascii_host):
        return url
    address = _ipv4_host(ascii_host)
    if address is None:
        return url
    userinfo, at, hostport = parts.netloc.rpartition("@")
    split = _split_host_port(hostport)
    if split is None or split[0] == address:
        return url
    port = "" if split[1] is None else f":{split[1]}"
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{address}{port}"))


def _split_authority(url: str) -> tuple[str, str, int | None] | None:
    """(lowercased scheme, normalised host, port or ``None``) of an absolute URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except (ValueError, TypeError, AttributeError):
        return None
    hostname = parts.hostname
    if not parts.scheme or not hostname:
        return None
    if ":" in hostname:
        try:
            return parts.scheme.lower(), ipaddress.IPv6Address(hostname).compressed, port
        except ValueError:
            return None
    host = _ascii_host(hostname)
    if host is not None:
        host = _host_form(host)
    if host is None:
        return None
    return parts.scheme.lower(), host, port


# The shape of most listed URLs, accepted without the full check: an ASCII host name whose
# last label starts with a letter, or a dotted-quad IPv4 address, an optional port up to
# 65535, no user information, no percent-escapes, nothing outside printable ASCII. Whatever it
# accepts, the full check accepts too.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_COMMON_URL_RE = re.compile(
    r"[hH][tT][tT][pP][sS]?://"
    r"(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
    r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?"
    rf"|(?:{_OCTET}\.){{3}}{_OCTET})"
    r"(?::(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
    r"(?:[/?#][!-$&-~]*)?"
)


def is_valid_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) URL by the rules of a ``<loc>`` (not
    ``invalid_url``; see :func:`loc_problems`), whatever its length."""
    return _COMMON_URL_RE.fullmatch(url) is not None or _valid_loc(url)


def loc_problems(loc: str, *, max_length: int = 2048) -> list[str]:
    """URL-rule codes for a listed URL: ``'invalid_url'`` and/or ``'url_too_long'``.

    A valid loc is an absolute ``http``/``https`` URL with a host, without user information,
    whitespace or control characters, with a numeric port up to 65535, well-formed
    percent-escapes and, for a bracketed host, a valid IPv6 literal. Internationalised host
    names are valid. ``url_too_long`` is reported when the loc has more than ``max_length``
    characters.
    """
    problems: list[str] = []
    if not is_valid_url(loc):
        problems.append("invalid_url")
    if isinstance(loc, str) and len(loc) > max_length:
        problems.append("url_too_long")
    return problems


# Printable ASCII that RFC 3986 allows nowhere in a URL; "[" and "]" only around an IPv6 host.
_UNESCAPED_RE = re.compile(r'["<>\\^`{|}\[\]]')
_NEVER_ALLOWED_RE = re.compile(r'["<>\\^`{|}]')
# Not None when a URL may have characters that :func:`unescaped_characters` names.
may_need_escapes = _UNESCAPED_RE.search


def unescaped_characters(url: str) -> list[tuple[str, str]]:
    """The characters of a valid http(s) URL that RFC 3986 requires percent-encoded, each
    once in order of appearance, with its escape: ``[("|", "%7C")]``. Non-ASCII characters
    are not among them (sitemaps may list IRIs, RFC 3987)."""
    if may_need_escapes(url) is None:
        return []
    start = url.find("//")
    host_end = len(url)
    for delimiter in "/?#":
        position = url.find(delimiter, start + 2 if start >= 0 else 0)
        if position != -1 and position < host_end:
            host_end = position
    found = _NEVER_ALLOWED_RE.findall(url, 0, host_end) + _UNESCAPED_RE.findall(url, host_end)
    return [(char, f"%{ord(char):02X}") for char in dict.fromkeys(found)]


def invalid_url_reason(loc: str) -> str:
    """Why ``loc`` is ``invalid_url`` (see :func:`loc_problems`), in a few words: the first
    rule it breaks, in the order a reader would look."""
    if not loc:
        return "it is empty"
    # A value that does not start with an http(s) scheme, however its spaces are encoded, is
    # no absolute web URL at all (a path, a comment, a mail address): that comes first.
    scheme, colon, rest = loc.partition(":")
    if not _SCHEME_START_RE.match(_SPACE_OR_CONTROL_RE.sub("", loc)):
        return "it is relative: it has no scheme (http:// or https://)"
    if colon and _SCHEME_RE.fullmatch(scheme) and scheme.lower() not in DEFAULT_PORTS:
        return f"its scheme {scheme!r} is not http or https"
    if (space := _SPACE_OR_CONTROL_RE.search(loc)) is not None:
        char = space.group()
        what = "a space" if char == " " else f"the character {char!r}"
        return (
            f"it contains {what} at character {space.start() + 1:,}, which a URL writes "
            f"percent-encoded ({quote(char)})"
        )
    if (percent := _BAD_PERCENT_RE.search(loc)) is not None:
        return f"the '%' at character {percent.start() + 1:,} is not followed by two hex digits"
    if not rest.startswith("//"):
        return f"'//' and a host do not follow {scheme}:"
    authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
    if "@" in authority:
        return "it has user information before its host"
    split = None if "\\" in authority else _split_host_port(authority)
    if split is None:
        return f"its host and port {authority!r} are malformed"
    host, port = split
    if port is not None and port != "" and (not port.isdigit() or int(port) > 65535):
        return f"its port {port!r} is not a number up to 65535"
    if not host:
        return "it has no host"
    return f"its host {host!r} is not a valid host name or IP address"


def _valid_loc(loc: str) -> bool:
    if not isinstance(loc, str) or not loc:
        return False
    if _SPACE_OR_CONTROL_RE.search(loc) or _BAD_PERCENT_RE.search(loc):
        return False
    colon = loc.find(":")
    if colon <= 0 or not _SCHEME_RE.fullmatch(loc[:colon]):
        return False
    if loc[:colon].lower() not in DEFAULT_PORTS:
        return False
    rest = loc[colon + 1 :]
    if not rest.startswith("//"):
        return False
    rest = rest[2:]
    end = len(rest)
    for delimiter in "/?#":
        position = rest.find(delimiter)
        if position != -1 and position < end:
            end = position
    authority = rest[:end]
    if "@" in authority or "\\" in authority:
        return False
    split = _split_host_port(authority)
    if split is None:
        return False
    host, port = split
    if port is not None and port != "" and (not port.isdigit() or int(port) > 65535):
        return False
    if not host:
        return False
    if host.startswith("["):
        return _valid_ip_literal(host[1:-1])
    if "[" in host:
        return False
    if host.isascii():
        if not _REG_NAME_RE.fullmatch(host) or host.strip(".") == "":
            return False
        return _host_form(host.lower()) is not None
    if not _REG_NAME_RE.fullmatch(_NON_ASCII_RE.sub("a", host)):
        return False
    ascii_host = _ascii_host(host)
    return ascii_host is not None and _host_form(ascii_host) is not None


def _valid_ip_literal(literal: str) -> bool:
    if literal[:1] in ("v", "V"):
        return re.fullmatch(r"[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+", literal) is not None
    if "%" in literal:  # a zone ID (fe80::1%25eth0): neither RFC 3986 nor browsers take one
        return False
    try:
        ipaddress.IPv6Address(literal)
    except ValueError:
        return False
    return True


def in_sitemap_scope(url: str, sitemap_url: str) -> bool:
    """Whether ``url`` may be listed by the sitemap at ``sitemap_url`` (sitemaps.org rule).

    The URL must have the sitemap's scheme, host and port and its path must start with the
    directory of the sitemap's path: ``https://ex.com/a/sitemap.xml`` may list
    ``https://ex.com/a/page`` but not ``https://ex.com/b`` or ``http://ex.com/a/page``.
    Percent-escape case does not matter. Unparseable input is out of scope.
    """
    target = _scope_parts(url)
    sitemap = _scope_parts(sitemap_url)
    if target is None or sitemap is None:
        return False
    if target[0] != sitemap[0]:
        return False
    directory = sitemap[1][: sitemap[1].rfind("/") + 1]
    return target[1].startswith(directory)


def scope_problem(url: str, sitemap_url: str) -> str | None:
    """Why ``url`` is out of the scope of the sitemap at ``sitemap_url`` (see
    :func:`in_sitemap_scope`), in words; ``None`` when it is in scope or on another host than
    the sitemap (a sitemap kept on another of the site's hosts has no scope)."""
    if in_sitemap_scope(url, sitemap_url):
        return None
    target, sitemap = _scope_parts(url), _scope_parts(sitemap_url)
    if target is not None and sitemap is not None:
        if target[0][1] != sitemap[0][1]:
            return None
        if target[0][0] != sitemap[0][0]:
            return (
                f"uses {target[0][0]}: while its sitemap {sitemap_url} uses "
                f"{sitemap[0][0]}: (a sitemap lists URLs of its own protocol)"
            )
        if target[0] != sitemap[0]:
            return f"on another port than its sitemap {sitemap_url}"
    return f"outside the directory of {sitemap_url}"


def _scope_parts(url: str) -> tuple[tuple[str, str, int | None], str] | None:
    authority = _split_authority(url)
    if authority is None:
        return None
    scheme, host, port = authority
    if port is not None and port == DEFAULT_PORTS.get(scheme):
        port = None
    try:
        # (A backslash is a slash, as browsers read an http(s) URL: /a\..\b is /b.)
        path = urlsplit(slashes_for_backslashes(url.strip())).path
    except ValueError:
        return None
    # (Characters a browser percent-encodes are their escapes: /café/ is /caf%C3%A9/.)
    path = _remove_dot_segments(_upper_escapes(_encode_iri(path))) or "/"
    return (scheme, host.rstrip("."), port), path


def remove_dot_segments(url: str) -> str:
    """``url`` with the ``.`` and ``..`` segments of its path removed, as browsers and Googlebot
    parse it (WHATWG URL Standard, path state) before requesting it or matching robots.txt
    rules: ``http://h/a/./b/../c`` is ``http://h/a/c``, ``/a/%2E%2e/b`` is ``/b``, ``/a/..`` is
    ``/``, ``/a/.`` is ``/a/``. The query and fragment are kept as written, and so is a URL
    without such a segment (the very object: the common case costs three substring tests).
    A backslash in the path is a slash, as the URL Standard reads it in an http(s) URL
    (``http://h/a\\..\\b`` is ``http://h/b``)."""
    if "/." not in url and "/%2" not in url and "\\" not in url:
        return url
    authority = _AUTHORITY_RE.match(url)
    if authority is None:
        return url
    start = authority.end()
    end = len(url)
    for delimiter in "?#":
        position = url.find(delimiter, start, end)
        if position != -1:
            end = position
    path = url[start:end]
    resolved = _remove_dot_segments(path.replace("\\", "/"))
    if resolved == path:
        return url
    return url[:start] + resolved + url[end:]


# The dot segments of the URL Standard, lowercased: "." and "..", either dot possibly "%2e".
_SINGLE_DOT = frozenset((".", "%2e"))
_DOUBLE_DOT = frozenset(("..", ".%2e", "%2e.", "%2e%2e"))


def _remove_dot_segments(path: str) -> str:
    """An absolute ``path`` with its ``.`` and ``..`` segments (plain or escaped as ``%2e``,
    in either case) resolved as the WHATWG URL Standard resolves them: ``/dir/../escape`` is
    ``/escape``, ``/..`` is ``/``, a last ``.`` or ``..`` segment leaves a trailing slash.
    Any other path (empty, or relative) is returned as it is."""
    if not path.startswith("/") or ("/." not in path and "/%2" not in path):
        return path
    segments = path[1:].split("/")
    kept: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        form = segment.lower() if len(segment) <= 6 else segment
        if form in _DOUBLE_DOT:
            if kept:
                kept.pop()
            if index == last:
                kept.append("")
        elif form in _SINGLE_DOT:
            if index == last:
                kept.append("")
        else:
            kept.append(segment)
    return "/" + "/".join(kept)


def _upper_escapes(text: str) -> str:
    """Percent-escapes in one form: an unreserved character (RFC 3986: letters, digits,
    ``-._~``) written as an escape is the character itself; other escapes in upper case."""
    if "%" not in text:
        return text
    return _PERCENT_HEX_RE.sub(_escape_form, text)


def _escape_form(match: re.Match[str]) -> str:
    char = chr(int(match.group(0)[1:], 16))
    return char if char in _UNRESERVED else match.group(0).upper()


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# What a browser's URL parser percent-encodes (as UTF-8) in a path or query: characters
# outside printable ASCII, and a few printable ones.
_TO_ENCODE_RE = re.compile(r'[^\x21-\x7e]|["<>`]')


def _encode_iri(text: str, encoding: str = "utf-8") -> str:
    """``text`` with the characters a browser would percent-encode in a path or query
    encoded as UTF-8 (``/café`` becomes ``/caf%C3%A9``), or, in a query, in the ``encoding``
    of the page that holds it."""
    if text.isascii() and _TO_ENCODE_RE.search(text) is None:
        return text
    return _TO_ENCODE_RE.sub(lambda match: _encode_char(match.group(0), encoding), text)


def _encode_char(char: str, encoding: str) -> str:
    """``char`` percent-encoded in ``encoding``; one the encoding lacks is written as an HTML
    character reference (``&#8364;``), as browsers write it."""
    try:
        # (UTF-8 holds every character; a lone surrogate is written as its own bytes.)
        data = char.encode(encoding, "surrogatepass" if encoding == "utf-8" else "strict")
    except (UnicodeError, LookupError):
        return f"%26%23{ord(char)}%3B"
    return "".join(f"%{byte:02X}" for byte in data)


def normalize_url(url: str) -> str:
    """``url`` in a form for comparison.

    Lowercases the scheme and host (an IDN host becomes punycode, an IPv4 address written
    another way, such as ``127.1`` or ``127.0.0.1.``, becomes ``127.0.0.1``; a name keeps its
    trailing dot), drops the scheme's default port and the fragment, turns an empty path into
    ``/``, resolves ``.`` and ``..`` segments, percent-encodes what a browser encodes in a path
    or query (non-ASCII characters as UTF-8, spaces, ``"<>```), decodes escaped unreserved
    characters (``%7E`` is ``~``) and uppercases the hex digits of other escapes. The query is
    kept in its order. Input that cannot be parsed is returned stripped of surrounding
    whitespace.
    """
    text = url.strip() if isinstance(url, str) else ""
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    after_scheme = text[len(parts.scheme) + 1 :] if parts.scheme else text
    has_authority = after_scheme.startswith("//")
    netloc = parts.netloc
    if netloc:
        userinfo, at, hostport = netloc.rpartition("@")
        split = _split_host_port(hostport)
        if split is None:
            host, port = hostport.lower(), None
        else:
            host, port = split
            if host.startswith("["):
                host = host.lower()
            else:
                ascii_host = _ascii_host(host) or host.lower()
                host = _host_form(ascii_host) or ascii_host
        default = DEFAULT_PORTS.get(scheme)
        if port is not None and (port == "" or (port.isdigit() and int(port) == default)):
            port = None
        netloc = f"{userinfo}{at}{host}" + ("" if port is None else f":{port}")
    path = _encode_iri(parts.path) or ("/" if has_authority else "")
    if has_authority:
        path = _remove_dot_segments(path)  # as browsers resolve them: /a/./b is /a/b
    query = f"?{_encode_iri(parts.query)}" if parts.query else ""
    prefix = f"{scheme}:" if scheme else ""
    authority = f"//{netloc}" if has_authority else ""
    return _upper_escapes(f"{prefix}{authority}{path}{query}")


def same_url(a: str, b: str) -> bool:
    """Whether two URLs are the same once both are normalised by :func:`normalize_url`."""
    return normalize_url(a) == normalize_url(b)


_SCHEME_PREFIX_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def slashes_for_backslashes(reference: str) -> str:
    """A URL ``reference`` (absolute, or relative to an http(s) URL) with each backslash
    before its query or fragment made a slash, as the WHATWG URL Standard reads an http(s)
    URL (``\\a\\b`` is ``/a/b``). A reference with another scheme (``mailto:``) is kept."""
    if "\\" not in reference:
        return reference
    scheme = _SCHEME_PREFIX_RE.match(reference)
    if scheme is not None and scheme[1].lower() not in DEFAULT_PORTS:
        return reference
    end = len(reference)
    for delimiter in "?#":
        position = reference.find(delimiter, 0, end)
        if position != -1:
            end = position
    return reference[:end].replace("\\", "/") + reference[end:]


def resolve(base: str, value: str) -> str | None:
    """``value`` (absolute, relative or protocol-relative) made absolute against ``base``.

    Tabs and newlines are removed and surrounding spaces and control characters stripped
    first, as browsers do with attribute values (a no-break space stays), and a backslash
    before the query is a slash (see :func:`slashes_for_backslashes`). Returns ``None`` for
    an empty or whitespace-only value; a value that cannot be joined is returned as cleaned.
    """
    if not isinstance(value, str):
        return None
    cleaned = _URL_TAB_NEWLINE_RE.sub("", value).strip(_URL_EDGE_JUNK)
    if not cleaned:
        return None
    cleaned = slashes_for_backslashes(cleaned)
    if _urljoin_keeps(cleaned):
        return cleaned
    try:
        return urljoin(base, cleaned)
    except (ValueError, TypeError):
        return cleaned


def resolve_href(base: str, value: str, *, query_encoding: str = "utf-8") -> str | None:
    """:func:`resolve` as a browser follows a link of a page: what it percent-encodes in a
    path, query or fragment (non-ASCII characters as UTF-8, spaces) encoded (``/café`` becomes
    ``/caf%C3%A9``); the query in ``query_encoding``, the Python codec of the page's encoding,
    as browsers encode it. (Sitemap locations are kept as written: a space there is an error
    to report, not to repair.)"""
    url = resolve(base, value)
    return None if url is None else _encoded(url, query_encoding)


def _encoded(url: str, query_encoding: str = "utf-8") -> str:
    """``url`` with the characters a browser percent-encodes in its path, query and fragment
    encoded as UTF-8, the query in ``query_encoding`` (the host is kept as written)."""
    if url.isascii() and _TO_ENCODE_RE.search(url) is None:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL (``http://[é``): kept as written, as resolve() keeps it
        return url
    return urlunsplit(
        parts._replace(
            path=_encode_iri(parts.path),
            query=_encode_iri(parts.query, query_encoding),
            fragment=_encode_iri(parts.fragment),
        )
    )


def _urljoin_keeps(value: str) -> bool:
    """Whether ``urljoin(base, value)`` is ``value`` for every base (the common canonical: an
    absolute URL written plainly), so that the join can be skipped."""
    return (
        _PLAIN_ABSOLUTE_RE.fullmatch(value) is not None
        and not value.endswith(("?", "#"))
        and "?#" not in value
    )


def canonical_problem(canonical: str) -> str | None:
    """Why search engines cannot use a page's canonical, or ``None`` when they can: it is not
    an http(s) URL (``javascript:``, ``mailto:``...), or not one a browser can parse (a space or
    another character the WHATWG URL Standard forbids in its host, an unclosed ``[``, a port
    past 65535). The page is then not canonicalised to it."""
    if _COMMON_URL_RE.fullmatch(canonical) is not None:
        return None
    if not canonical.lower().startswith(("http://", "https://")):
        return "not an http or https URL"
    origin = url_origin(canonical)
    if origin is None or (
        ":" not in origin.host and _FORBIDDEN_DOMAIN_RE.search(unquote(origin.host))
    ):
        return "not a URL browsers can parse (its host or port is malformed)"
    return None


# Code points the WHATWG URL Standard forbids in a domain (after its percent-decoding): a host
# holding one is no host.
_FORBIDDEN_DOMAIN_RE = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")


def usable_canonical(canonical: str) -> bool:
    """Whether search engines can use a page's canonical (see :func:`canonical_problem`)."""
    return canonical_problem(canonical) is None
