"""sitemapaudit: audit a website's XML sitemaps and every URL they list."""

__version__ = "0.1.0"
