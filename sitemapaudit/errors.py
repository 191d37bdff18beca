"""Exceptions of sitemapaudit.

Broken input (a bad sitemap, a failing page) is data and becomes a finding; exceptions are
for bad configuration and for bugs, and all of them derive from :class:`SitemapAuditError`.
"""


class SitemapAuditError(Exception):
    """Base class of every exception sitemapaudit raises on purpose."""


class ConfigError(SitemapAuditError):
    """A setting or a spider argument has a value that cannot be used.

    The message always names the setting or argument and the bad value.
    """
