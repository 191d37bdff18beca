"""The audit's bookkeeping between Scrapy callbacks: which sitemap to fetch, which URL next;
and what the spider hands Scrapy and reads from it: requests, responses, records."""
