"""Time sitemapaudit.validation.validate_document on one sitemap file (run with the project on
sys.path): the first call (includes loading and compiling the shipped XSDs) and warm calls."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path


def main() -> None:
    data = Path(sys.argv[1]).read_bytes()
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    t0 = time.perf_counter()
    from sitemapaudit.validation import validate_document  # noqa: PLC0415

    import_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    problems = validate_document(data)
    first_s = time.perf_counter() - t1
    warm: list[float] = []
    for _ in range(repeat):
        t2 = time.perf_counter()
        validate_document(data)
        warm.append(time.perf_counter() - t2)
    from lxml import etree  # noqa: PLC0415

    from sitemapaudit.validation import load_schema  # noqa: PLC0415

    schema = load_schema()
    t3 = time.perf_counter()
    valid = schema.validate(etree.fromstring(data))
    lxml_s = time.perf_counter() - t3
    codes = Counter(getattr(p, "code", type(p).__name__) for p in problems)
    print(
        json.dumps(
            {
                "bytes": len(data),
                "import_s": import_s,
                "first_call_s": first_s,
                "warm_median_s": statistics.median(warm),
                "warm_s": warm,
                "bare_lxml_xmlschema_s": lxml_s,
                "bare_lxml_valid": bool(valid),
                "problems": dict(codes),
            }
        )
    )


if __name__ == "__main__":
    main()
