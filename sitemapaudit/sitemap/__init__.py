"""Sitemap reading: bytes in, typed records out. No Scrapy imports in this package."""
