"""Where a site's sitemaps are declared: robots.txt and the home page.

Pure functions: bytes in, frozen records out. No Scrapy imports in this package.
"""

from __future__ import annotations

from sitemapaudit.discovery.homepage import homepage_sitemaps
from sitemapaudit.discovery.robots import (
    ROBOTS_MAX_BYTES,
    RobotsPolicy,
    decode_robots,
    robots_policy,
    sitemap_lines,
)

__all__ = [
    "ROBOTS_MAX_BYTES",
    "RobotsPolicy",
    "decode_robots",
    "homepage_sitemaps",
    "robots_policy",
    "sitemap_lines",
]
