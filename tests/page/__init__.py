"""Tests of sitemapaudit.page."""
