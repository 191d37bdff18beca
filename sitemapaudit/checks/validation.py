"""Checks from validating a sitemap against the schemas, the protocol and Google's rules."""

from __future__ import annotations

from sitemapaudit.checks.base import CheckContext, ProblemCheck, Severity, UrlCheck
from sitemapaudit.facts import UrlFacts


class SchemaInvalid(ProblemCheck):
    """The sitemap violates the official XSD (or an extension's); each violation with its place."""

    code = "schema_invalid"
    severity = Severity.ERROR


class NamespaceInvalid(ProblemCheck):
    """The root element is not in the http://www.sitemaps.org/schemas/sitemap/0.9 namespace."""

    code = "namespace_invalid"
    severity = Severity.ERROR


class EncodingInvalid(ProblemCheck):
    """The sitemap is not UTF-8: another declared encoding, UTF-16, or bytes that do not decode."""

    code = "encoding_invalid"
    severity = Severity.ERROR


class UnescapedCharacters(ProblemCheck):
    """A raw `&`, `<` or `>` appears where XML requires an entity such as `&amp;`."""

    code = "unescaped_characters"
    severity = Severity.ERROR


class EntityReference(ProblemCheck):
    """The sitemap uses entity references other than XML's five, which are never expanded."""

    code = "entity_reference"
    severity = Severity.WARNING


class NearLimit(ProblemCheck):
    """The sitemap is near the 50,000-entry or 50 MiB limit (SITEMAPAUDIT_NEAR_LIMIT_FRACTION)."""

    code = "near_limit"
    severity = Severity.WARNING


class UnknownExtension(ProblemCheck):
    """Extension elements from a namespace with no published schema were not validated."""

    code = "unknown_extension"
    severity = Severity.WARNING


class TooManyImages(ProblemCheck):
    """A `<url>` has more than 1,000 `image:image` elements (Google's limit)."""

    code = "too_many_images"
    severity = Severity.ERROR


class NewsTooMany(ProblemCheck):
    """A news sitemap lists more than 1,000 `news:news` entries (Google's limit), or a `<url>`
    more than one (Google reads one per `<url>`)."""

    code = "news_too_many"
    severity = Severity.ERROR


class NewsTooOld(ProblemCheck):
    """A `news:publication_date` is more than two days before the audit."""

    code = "news_too_old"
    severity = Severity.WARNING


class NewsDateInvalid(ProblemCheck):
    """A `news:publication_date` is a time without a time zone, or a date with one: the XSD
    accepts both, W3C Datetime (which Google asks for) neither."""

    code = "news_date_invalid"
    severity = Severity.WARNING


class NewsMissingField(ProblemCheck):
    """A `news:name` or `news:title` is empty: Google requires the publication's name and the
    article's title (one left out is `schema_invalid`)."""

    code = "news_missing_field"
    severity = Severity.ERROR


class VideoMissingField(ProblemCheck):
    """A `video:video` lacks thumbnail_loc, title, description, or content_loc/player_loc."""

    code = "video_missing_field"
    severity = Severity.ERROR


class VideoUrlIsPage(ProblemCheck):
    """A `video:content_loc` or `video:player_loc` is the `<loc>` of its `<url>`: the page
    that shows the video, where Google needs the video file or its player."""

    code = "video_url_is_page"
    severity = Severity.WARNING


class VideoDurationInvalid(ProblemCheck):
    """A `video:duration` is not a whole number of seconds from 1 to 28800 (8 hours), the range
    Google accepts (the XSD also allows 0)."""

    code = "video_duration_invalid"
    severity = Severity.WARNING


class VideoExpired(ProblemCheck):
    """A `video:expiration_date` has passed at the time of the audit: Google does not show the
    video after that date."""

    code = "video_expired"
    severity = Severity.WARNING


class HreflangInvalid(ProblemCheck):
    """An `xhtml:link` alternate has a hreflang that is not BCP 47 or `x-default`, or names a
    language that is not ISO 639-1 or a region that is not ISO 3166-1 alpha-2, or no href."""

    code = "hreflang_invalid"
    severity = Severity.ERROR


class HreflangUnsupported(ProblemCheck):
    """An `xhtml:link` alternate's hreflang is a valid language tag whose language has three
    letters and no ISO 639-1 code (`fil`, `yue`): Google documents only ISO 639-1 languages."""

    code = "hreflang_unsupported"
    severity = Severity.WARNING


class HreflangNoSelf(ProblemCheck):
    """A `<url>` lists hreflang alternates but none for the page itself."""

    code = "hreflang_no_self"
    severity = Severity.WARNING


class HreflangConflict(ProblemCheck):
    """A `<url>` lists several URLs for one hreflang value (compared without case: `en-GB` and
    `en-gb`), so search engines cannot tell which is meant and may ignore the annotation."""

    code = "hreflang_conflict"
    severity = Severity.WARNING


class HreflangNotReciprocal(UrlCheck):
    """An hreflang alternate of this URL does not list it back, in any sitemap of the audit.

    An alternate href that is not an absolute http(s) URL (`invalid_url` in its sitemap) is
    no link: it is not judged, and its page is not held to link back. The first hundred
    alternates are named, the rest counted."""

    code = "hreflang_not_reciprocal"
    severity = Severity.WARNING
    shown = 100

    def run(self, facts: UrlFacts, ctx: CheckContext) -> list[str] | None:
        if not facts.hreflang:
            return None
        notes = list(facts.hreflang)
        if len(notes) <= self.shown:
            return notes
        more = len(notes) - self.shown
        return [
            *notes[: self.shown],
            f"and {more} more hreflang alternates of this URL do not list it back",
        ]


VALIDATION_SITEMAP_CHECKS = (
    SchemaInvalid,
    NamespaceInvalid,
    EncodingInvalid,
    UnescapedCharacters,
    EntityReference,
    NearLimit,
    UnknownExtension,
    TooManyImages,
    NewsTooMany,
    NewsTooOld,
    NewsDateInvalid,
    NewsMissingField,
    VideoMissingField,
    VideoUrlIsPage,
    VideoDurationInvalid,
    VideoExpired,
    HreflangInvalid,
    HreflangUnsupported,
    HreflangNoSelf,
    HreflangConflict,
)
