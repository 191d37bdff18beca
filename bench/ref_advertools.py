"""advertools.sitemap_to_df on the benchmark's sitemap index (run in bench/.venv-ref)."""

from __future__ import annotations

import json
import logging
import sys
import time

import advertools as adv


def main() -> None:
    logging.disable(logging.WARNING)
    start = time.perf_counter()
    df = adv.sitemap_to_df(sys.argv[1])
    urls = int(df["loc"].notna().sum()) if "loc" in df.columns else 0
    sitemaps = int(df["sitemap"].nunique()) if "sitemap" in df.columns else 0
    print(
        json.dumps(
            {
                "urls": urls,
                "sitemaps": sitemaps,
                "rows": len(df),
                "seconds": time.perf_counter() - start,
            }
        )
    )


if __name__ == "__main__":
    main()
