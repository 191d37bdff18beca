"""``scrapy audit-diff OLD NEW``: what changed between two audits (report files or stored runs)."""

from sitemapaudit.history.cli import AuditDiffCommand


class Command(AuditDiffCommand):
    """Scrapy names a project command after its module: this module gives ``audit-diff``."""
