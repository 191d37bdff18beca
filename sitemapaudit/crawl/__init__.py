"""The audit's bookkeeping between Scrapy callbacks: which sitemap to fetch, which URL next."""
