"""The shape of a check: a stable code, a severity, a docstring and one method."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import ClassVar, Generic, TypeVar

from sitemapaudit.config import AuditConfig
from sitemapaudit.facts import SitemapFacts, UrlFacts

F = TypeVar("F", SitemapFacts, UrlFacts)


class Severity(StrEnum):
    """How much a finding matters: errors break indexing, warnings weaken it, notices inform."""

    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"


ROBOTS_UNREADABLE = "robots_unreadable"
"""Key of :attr:`CheckContext.extras`: why every URL is ``robots_blocked`` when robots.txt could
not be read (a 5xx, a 429, no answer), for their findings."""
FILES_SITE = "files_site"
"""Key of :attr:`CheckContext.extras`: the origin (``scheme://host[:port]``) that the local
files given to ``scrapy validate`` list the URLs of, the first URL's, for ``off_host``."""


@dataclass(slots=True)
class CheckContext:
    """What every check may consult besides the facts of one record."""

    config: AuditConfig
    audit_time: datetime
    extras: dict[str, object] = field(default_factory=dict)
    sitemaps_read_at: datetime | None = None
    """When the audit had read every sitemap: a URL's lastmod is in the future when it is
    later than that (``None``: than ``audit_time``). A sitemap generator may date its
    entries with the moment it serves them, after the audit started."""


class Check(Generic[F]):
    """A check looks at the facts of one record and says whether its finding applies.

    ``run`` returns ``None`` when the record is fine, or a list of human-readable details
    (possibly empty) when the finding applies; the details go into the record's ``errors``.
    """

    code: ClassVar[str]
    severity: ClassVar[Severity]
    record: ClassVar[str]
    needs_response: ClassVar[bool] = False
    """True for a URL check whose finding needs something a request showed: its ``run`` returns
    ``None`` whenever the facts' outcome is an unrequested ``FetchOutcome()``, so record
    building may skip it for URLs that were not requested."""
    needs_page: ClassVar[bool] = False
    """True for a URL check judged from a 2xx answer (its headers and ``<head>``): a run in
    which the URL did not answer with a 2xx page cannot tell whether the finding still holds
    (a diff does not call it fixed)."""
    needs_lastmod: ClassVar[bool] = False
    """True for a URL check judged from a readable ``<lastmod>``: a run in which the URL's
    lastmod is ``lastmod_invalid`` cannot tell whether the finding still holds (a diff does not
    call it fixed)."""
    needs_document: ClassVar[bool] = False
    """True for a sitemap check judged from the sitemap's document (its body, the entries of an
    index), not from its fetch, its location, what the index listing it says of it or
    robots.txt: a run that could not read the sitemap (a failed fetch, an error status) cannot
    tell whether the finding still holds (a diff calls it neither fixed nor new)."""
    needs_rule: ClassVar[bool] = False
    """True for a URL check whose finding is a URL rule broken when the URL was listed: its
    ``run`` returns ``None`` whenever the facts' ``rules`` is empty, so record building may skip
    it for URLs that broke none (nearly all of them)."""

    def run(self, facts: F, ctx: CheckContext) -> list[str] | None:
        raise NotImplementedError

    @classmethod
    def meaning(cls) -> str:
        """The first paragraph of the docstring, its lines joined: the meaning shown in the
        README and in the reports (a summary longer than a line is wrapped in the source)."""
        paragraph = (cls.__doc__ or "").strip().split("\n\n", 1)[0]
        return " ".join(line.strip() for line in paragraph.splitlines())


class SitemapCheck(Check[SitemapFacts]):
    record = "sitemap"


class UrlCheck(Check[UrlFacts]):
    record = "url"


class ProblemCheck(SitemapCheck):
    """Base for checks whose evidence is a problem the sitemap reader or validator recorded
    (most of them read from its document: see :attr:`Check.needs_document`)."""

    needs_document = True

    def run(self, facts: SitemapFacts, ctx: CheckContext) -> list[str] | None:
        details = [p.describe() for p in facts.problems if p.code == self.code]
        return details or None
