"""ultimate-sitemap-parser on the benchmark's site (run in bench/.venv-ref): robots.txt ->
sitemap index -> gzip sitemaps, then every page of the tree is iterated."""

from __future__ import annotations

import json
import logging
import sys
import time

from usp.tree import sitemap_tree_for_homepage


def main() -> None:
    logging.disable(logging.WARNING)
    start = time.perf_counter()
    tree = sitemap_tree_for_homepage(sys.argv[1] + "/", use_known_paths=False)
    urls = sum(1 for _ in tree.all_pages())
    sitemaps = sum(1 for _ in tree.all_sitemaps())
    print(json.dumps({"urls": urls, "sitemaps": sitemaps, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
