"""Locating and loading the shipped sitemap XSD set, fully offline.

The XSDs live in the repository's top-level ``schemas/`` directory. Built distributions map
that directory to the package ``sitemapaudit.schemas`` (see ``setup.py``), so an installed
wheel or a scrapyd egg carries them as package data; a source checkout has them beside the
``sitemapaudit`` package. :func:`schema_files` looks in that order:

1. ``importlib.resources.files("sitemapaudit") / "schemas"``: a directory of an installed
   wheel, or a ``zipfile.Path`` inside a zipped egg. Files are read as bytes, never as paths,
   so this works from a zip archive too.
2. ``<repository>/schemas`` next to the ``sitemapaudit`` package directory (a source
   checkout or an editable install).

:func:`load_schema` compiles the combined schema (once per thread). Every import or include
is answered from those bytes by an :class:`lxml.etree.Resolver`, including the
``http://www.w3.org/2001/xml.xsd`` import of ``xhtml1-strict.xsd``; a request for anything
else raises :class:`SchemaLoadError`. Nothing is fetched from the network and no file
outside the shipped set is opened.
"""

from __future__ import annotations

import importlib.resources
import threading
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypedDict, cast

from lxml import etree

from sitemapaudit.errors import SitemapAuditError

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
XML_NS = "http://www.w3.org/XML/1998/namespace"

EXTENSION_PREFIXES: dict[str, str] = {
    IMAGE_NS: "image",
    VIDEO_NS: "video",
    NEWS_NS: "news",
    XHTML_NS: "xhtml",
}
"""Extension namespaces with a shipped schema, and the prefix used for them in messages."""

ITEM_TAGS: dict[str, str] = {"urlset": "url", "sitemapindex": "sitemap"}
"""Root local name -> the entry element it lists."""

SCHEMA_FILES: tuple[str, ...] = (
    "sitemap.xsd",
    "siteindex.xsd",
    "sitemap-image.xsd",
    "sitemap-video.xsd",
    "sitemap-news.xsd",
    "xhtml1-strict.xsd",
    "xml.xsd",
)
"""The upstream XSDs, shipped verbatim."""

WRAPPER_FILE = "combined.xsd"
"""The wrapper that includes sitemap.xsd and siteindex.xsd and imports every extension."""

UPSTREAM_LOCATIONS: dict[str, str] = {
    "http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd": "sitemap.xsd",
    "http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd": "siteindex.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1/sitemap-video.xsd": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9/sitemap-news.xsd": "sitemap-news.xsd",
    "http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd": "xhtml1-strict.xsd",
    "http://www.w3.org/2001/xml.xsd": "xml.xsd",
}
"""Published schema locations and the shipped file that answers each of them."""

_BASE_URL = "sitemapaudit-schemas:/"


class SchemaLoadError(SitemapAuditError):
    """The shipped schema set is missing, incomplete or does not compile."""


@dataclass(frozen=True, slots=True)
class SchemaFiles:
    """The shipped schema texts and where they were found."""

    files: dict[str, bytes]
    origin: str
    """``"package"`` (installed wheel, egg or zip) or ``"source"`` (repository checkout)."""
    location: str
    """A human-readable location: a directory path or the ``zipfile.Path`` of the egg."""


def _package_dir() -> Traversable | None:
    try:
        candidate = importlib.resources.files("sitemapaudit").joinpath("schemas")
    except (ModuleNotFoundError, TypeError, ValueError):
        return None
    if candidate.joinpath(WRAPPER_FILE).is_file():
        return candidate
    return None


def _source_dir() -> Traversable | None:
    candidate = Path(__file__).resolve().parents[2] / "schemas"
    if (candidate / WRAPPER_FILE).is_file():
        return candidate
    return None


def _read_all(directory: Traversable) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name in (WRAPPER_FILE, *SCHEMA_FILES):
        entry = directory.joinpath(name)
        if not entry.is_file():
            raise SchemaLoadError(f"schema file {name!r} is missing from {directory}")
        files[name] = entry.read_bytes()
    return files


def schema_files() -> SchemaFiles:
    """Read the wrapper and the seven upstream XSDs from the package or the source tree.

    Raises :class:`SchemaLoadError` when neither place has the complete set.
    """
    packaged = _package_dir()
    if packaged is not None:
        return SchemaFiles(_read_all(packaged), "package", str(packaged))
    source = _source_dir()
    if source is not None:
        return SchemaFiles(_read_all(source), "source", str(source))
    raise SchemaLoadError(
        "the sitemap XSDs were found neither as package data of sitemapaudit "
        "(sitemapaudit/schemas) nor in the source tree's schemas/ directory"
    )


class ParserOptions(TypedDict):
    """Keyword arguments of lxml's XML parsers."""

    resolve_entities: bool
    no_network: bool
    load_dtd: bool
    dtd_validation: bool
    huge_tree: bool
    collect_ids: bool


# Parser options for documents from the web: no entity expansion, no DTD, no network, no
# giant-tree limits lifted, no id table (with EmptyResolver, nothing outside is ever read).
SAFE_PARSER_OPTIONS: ParserOptions = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "collect_ids": False,
}


class EmptyResolver(etree.Resolver):
    """Answers every request for an external DTD or entity with empty content.

    With ``load_dtd=False`` libxml2 still opens an external DTD (or the file of a parameter
    entity) when a document refers to an entity it does not declare; a parser carrying this
    resolver reads nothing from the file system (``no_network`` keeps it off the network).
    """

    def resolve(  # type: ignore[override]
        self, system_url: str | None, public_id: str | None, context: Any
    ) -> Any:
        return self.resolve_string(b"", context, base_url=None)


class _ShippedSchemaResolver(etree.Resolver):
    """Answer every schema import and include from the shipped bytes, and nothing else."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__()
        self._files = files
        self.requests: list[str] = []

    def resolve(  # type: ignore[override]
        self, system_url: str | None, public_id: str | None, context: Any
    ) -> Any:
        url = system_url or ""
        self.requests.append(url)
        name: str | None = None
        if url.startswith(_BASE_URL):
            name = url[len(_BASE_URL) :]
        elif url in UPSTREAM_LOCATIONS:
            name = UPSTREAM_LOCATIONS[url]
        if name is None or name not in self._files:
            raise SchemaLoadError(f"refusing to load schema document {url!r}: not shipped")
        return self.resolve_string(self._files[name], context, base_url=_BASE_URL + name)


def _secure_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
    )


def compile_schema(files: dict[str, bytes]) -> tuple[etree.XMLSchema, list[str]]:
    """Compile the wrapper schema from ``files``; also return every location requested."""
    parser = _secure_parser()
    resolver = _ShippedSchemaResolver(files)
    parser.resolvers.add(resolver)
    try:
        wrapper = etree.fromstring(files[WRAPPER_FILE], parser, base_url=_BASE_URL + WRAPPER_FILE)
        schema = etree.XMLSchema(wrapper)
    except (etree.XMLSyntaxError, etree.XMLSchemaParseError) as exc:
        raise SchemaLoadError(f"the shipped sitemap schemas do not compile: {exc}") from exc
    return schema, resolver.requests


_lock = threading.Lock()
_files: dict[str, bytes] | None = None
_local = threading.local()
_compile_lock = threading.Lock()


def _shipped_bytes() -> dict[str, bytes]:
    global _files  # noqa: PLW0603
    if _files is None:
        with _lock:
            if _files is None:
                _files = schema_files().files
    return _files


def load_schema() -> etree.XMLSchema:
    """The compiled combined schema (urlset, sitemapindex, image, video, news, xhtml).

    The files are read once per process; the schema is compiled once per thread (about
    20 ms), because an :class:`lxml.etree.XMLSchema` keeps the error log of its last
    validation on the object itself, so one instance must not validate in two threads at once.
    """
    schema: etree.XMLSchema | None = getattr(_local, "schema", None)
    if schema is None:
        files = _shipped_bytes()
        # Compiling loads the included schemas through libxml2's process-wide loader hook,
        # which lxml shares between threads: a compilation while other threads parse can
        # fail to load an include. Compilations take turns, and such a failure is retried.
        with _compile_lock:
            for attempt in range(3):
                try:
                    schema, _ = compile_schema(files)
                    break
                except SchemaLoadError:
                    if attempt == 2:
                        raise
        _local.schema = schema
    assert schema is not None
    return schema


_required_names: frozenset[str] | None = None


def required_attribute_names() -> frozenset[str]:
    """Local names of the attributes some shipped schema declares ``use="required"``."""
    global _required_names  # noqa: PLW0603
    if _required_names is None:
        names: set[str] = set()
        for name, data in _shipped_bytes().items():
            if name.endswith(".xsd"):
                document = etree.fromstring(data, _secure_parser())
                found = document.xpath(
                    "//xs:attribute[@use='required']/@name",
                    namespaces={"xs": "http://www.w3.org/2001/XMLSchema"},
                )
                names.update(str(value) for value in cast(list[Any], found))
        _required_names = frozenset(names)
    return _required_names
