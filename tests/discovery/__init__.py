"""Tests of sitemapaudit.discovery."""
