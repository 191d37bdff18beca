"""``scrapy audit-report REPORT.jsonl``: a report as CSV files, an XLSX workbook or HTML."""

from sitemapaudit.report.cli import AuditReportCommand


class Command(AuditReportCommand):
    """Scrapy names a project command after its module: this module gives ``audit-report``."""
