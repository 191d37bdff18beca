"""Peak memory of validating / reading one sitemap, each case in a fresh subprocess.

``memory_one_sitemap.py [FILE] [--urls N] [--repeat K]`` (run with the project on sys.path,
e.g. ``PYTHONPATH=/work/main /work/venv/bin/python bench/memory_one_sitemap.py``). Without
FILE it generates the validation sitemap of ``bench/sitegen.py`` (50,000 URLs with
``<lastmod>``, about 5.6 MB) and a gzip copy of it (compresslevel 5, like the inventory site).

Cases, each in its own interpreter so that ``ru_maxrss`` (the process's high-water mark) is
about that case alone:

* ``validate``: ``validate_document(data)`` on the uncompressed bytes;
* ``read``: ``read_sitemap(gzip body, ...)`` of ``sitemapaudit.crawl.intake`` with an inventory
  sink that consumes and drops the entries (decompression, the streaming reader and the
  validation, as in the audit);
* ``read+hreflang``: the same with an hreflang sink that drops what it gets.

Before each measured call the process imports everything, compiles the schema and runs the
case once on a 1-URL document, so the reported "peak - base" is what one document adds on top
of a warmed-up process. Python-level allocations are also traced (``tracemalloc`` peak; lxml's
and libxml2's C allocations are not seen by it). The last line of output is JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
CASES = ("validate", "read", "read+hreflang")


def _status_mb(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> bool:
    """Reset the kernel's RSS high-water mark of this process (VmHWM); say whether it worked."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _peak_mb() -> float:
    """The peak RSS: VmHWM, or ru_maxrss when VmHWM could not be reset.

    ``ru_maxrss`` also carries the spawning process's high-water mark across fork and exec,
    so it is only a fallback.
    """
    if _RESET:
        return _status_mb("VmHWM")
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_RESET = False


class _Sink:
    def add_entries(self, sitemap_url: str, entries: Any, batch: int = 1000) -> int:
        count = 0
        for _entry in entries:
            count += 1
        return count


class _Alternates:
    def add(self, loc: str, alternates: Any, sitemap: str) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _run_case(case: str, data: bytes) -> list[Any]:
    now = datetime(2024, 3, 1, tzinfo=UTC)
    if case == "validate":
        from sitemapaudit.validation import validate_document  # noqa: PLC0415

        return validate_document(data, now=now)
    from sitemapaudit.crawl.intake import read_sitemap  # noqa: PLC0415
    from sitemapaudit.facts import SitemapFacts  # noqa: PLC0415

    facts = read_sitemap(
        data,
        SitemapFacts(url="http://127.0.0.1/sitemap-000.xml.gz", found_via="index"),
        inventory=_Sink(),
        rules=lambda _loc: (),
        on_child=lambda _loc: None,
        read_limit=104_857_600,
        now=now,
        near_limit_fraction=0.9,
        hreflang=_Alternates() if case == "read+hreflang" else None,
    )
    return list(facts.problems)


def child_main(case: str, path: Path, trace: bool) -> None:
    sys.path.insert(0, str(HERE))
    from sitegen import BASE_TIME, urlset_bytes, w3c  # noqa: PLC0415

    tiny = urlset_bytes([("https://www.example.com/a.html", w3c(BASE_TIME))])
    if case != "validate":
        tiny = gzip.compress(tiny)
    _run_case(case, tiny)  # imports, schema compile, first-call caches
    data = path.read_bytes()
    global _RESET  # noqa: PLW0603
    _RESET = _reset_peak()
    base = _peak_mb()
    base_now = _status_mb("VmRSS")
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    problems = _run_case(case, data)
    wall = time.perf_counter() - t0
    traced_peak = tracemalloc.get_traced_memory()[1] / 1048576 if trace else None
    if trace:
        tracemalloc.stop()
    peak = _peak_mb()
    print(
        json.dumps(
            {
                "case": case,
                "input_bytes": len(data),
                "base_mb": base,
                "base_current_mb": base_now,
                "peak_source": "VmHWM after clear_refs" if _RESET else "ru_maxrss",
                "peak_mb": peak,
                "added_mb": peak - base,
                "tracemalloc_peak_mb": traced_peak,
                "wall_s": wall,
                "problems": [[p.code, p.message, p.line, p.column] for p in problems],
            }
        )
    )


def _measure(case: str, path: Path, trace: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", case, str(path)]
    if trace:
        cmd.append("--trace")
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=PROJECT)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", nargs="?", type=Path)
    parser.add_argument("--urls", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=CASES)
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    if args.child:
        child_main(args.child, args.file, args.trace)
        return
    sys.path.insert(0, str(HERE))
    from sitegen import write_validation_sitemap  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="memory-one-") as work_dir:
        work = Path(work_dir)
        plain = args.file
        if plain is None:
            plain = work / f"sitemap-{args.urls}.xml"
            write_validation_sitemap(plain, "https://www.example.com", args.urls)
        packed = work / "sitemap.xml.gz"
        packed.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=5))
        rows: list[dict[str, Any]] = []
        for case in CASES:
            path = plain if case == "validate" else packed
            runs = [_measure(case, path, trace=False) for _ in range(args.repeat)]
            traced = _measure(case, path, trace=True)
            added = sorted(r["added_mb"] for r in runs)
            walls = sorted(r["wall_s"] for r in runs)
            rows.append(
                {
                    "case": case,
                    "input_bytes": runs[0]["input_bytes"],
                    "base_mb": runs[0]["base_mb"],
                    "peak_source": runs[0]["peak_source"],
                    "peak_mb_median": sorted(r["peak_mb"] for r in runs)[len(runs) // 2],
                    "added_mb_median": added[len(added) // 2],
                    "added_mb_runs": added,
                    "tracemalloc_peak_mb": traced["tracemalloc_peak_mb"],
                    "wall_s_median": walls[len(walls) // 2],
                    "problem_count": len(runs[0]["problems"]),
                    "problems_same_in_all_runs": all(
                        r["problems"] == runs[0]["problems"] for r in [*runs, traced]
                    ),
                }
            )
    print(f"{plain.name}: {rows[0]['input_bytes']:,} bytes; gzip {rows[1]['input_bytes']:,} bytes")
    print(f"peak RSS from {rows[0]['peak_source']}; base = RSS before the call")
    print(
        f"{'case':<15} {'base MB':>8} {'peak MB':>8} {'added MB':>9} {'py peak MB':>11} "
        f"{'wall s':>7} {'problems':>8}"
    )
    for row in rows:
        print(
            f"{row['case']:<15} {row['base_mb']:>8.1f} {row['peak_mb_median']:>8.1f} "
            f"{row['added_mb_median']:>9.1f} {row['tracemalloc_peak_mb']:>11.1f} "
            f"{row['wall_s_median']:>7.3f} {row['problem_count']:>8}"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
