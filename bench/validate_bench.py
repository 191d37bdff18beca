"""Time sitemap validation on one sitemap file. Two modes:

``validate_bench.py FILE [REPEAT]`` (run with the project on sys.path) times
sitemapaudit.validation.validate_document in-process: the first call (includes loading and
compiling the shipped XSDs) and warm calls. The last line of output is JSON (bench/run.py
reads it).

``validate_bench.py --command [--tree DIR]... [--rounds N] [--urls N] [FILE]`` times the
whole ``scrapy validate`` command as a subprocess, for each project tree given (default: this
checkout), rounds interleaved across trees: start-up (the command on a 1-URL sitemap), total
(the command on FILE, by default a generated 50,000-URL sitemap of about 5.6 MB) and their
difference, the time the command takes beyond Scrapy's start-up. Each run's standard output
goes to a file; the table says whether every tree printed the same bytes and exit status.
The last line of output is JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent


def document_main(argv: list[str]) -> None:
    data = Path(argv[0]).read_bytes()
    repeat = int(argv[1]) if len(argv) > 1 else 3
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


def _run_command(tree: Path, file: Path, out: Path) -> tuple[float, int, str, int]:
    """Wall seconds, exit status, SHA-256 and line count of ``scrapy validate FILE``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    with out.open("wb") as stdout:
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "validate", str(file)],
            cwd=tree,
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
            check=False,
        )
        wall = time.perf_counter() - t0
    if done.returncode not in (0, 1) or b"Traceback" in done.stderr:
        sys.exit(f"scrapy validate {file} in {tree} exited {done.returncode}:\n{done.stderr!r}")
    data = out.read_bytes()
    return wall, done.returncode, hashlib.sha256(data).hexdigest(), data.count(b"\n")


def command_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="validate_bench.py --command")
    parser.add_argument("--command", action="store_true", required=True)
    parser.add_argument(
        "--tree",
        action="append",
        type=Path,
        help="a project tree to time (repeatable; default: this checkout)",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--urls", type=int, default=50_000, help="URLs of the generated file")
    parser.add_argument("file", nargs="?", type=Path, help="sitemap to validate")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [PROJECT])]
    sys.path.insert(0, str(HERE))
    from sitegen import write_validation_sitemap  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="validate-bench-") as work_dir:
        work = Path(work_dir)
        tiny = work / "validate-1.xml"
        write_validation_sitemap(tiny, "https://www.example.com", 1)
        big = args.file
        if big is None:
            big = work / f"validate-{args.urls}.xml"
            write_validation_sitemap(big, "https://www.example.com", args.urls)
        size = big.stat().st_size
        walls: dict[Path, dict[str, list[float]]] = {t: {"startup": [], "total": []} for t in trees}
        outputs: dict[Path, set[tuple[int, str, int]]] = {t: set() for t in trees}
        for _ in range(args.rounds):
            for tree in trees:
                wall, *_ = _run_command(tree, tiny, work / "tiny.out")
                walls[tree]["startup"].append(wall)
                wall, code, digest, lines = _run_command(tree, big, work / "big.out")
                walls[tree]["total"].append(wall)
                outputs[tree].add((code, digest, lines))
    results = []
    for tree in trees:
        startup = statistics.median(walls[tree]["startup"])
        total = statistics.median(walls[tree]["total"])
        results.append(
            {
                "tree": str(tree),
                "startup_s": startup,
                "total_s": total,
                "beyond_startup_s": total - startup,
                "startup_runs_s": walls[tree]["startup"],
                "total_runs_s": walls[tree]["total"],
                "outputs": sorted(outputs[tree]),
            }
        )
    same = len({o for r in results for o in r["outputs"]}) == 1
    print(f"scrapy validate {big} ({size:,} bytes), {args.rounds} rounds, medians")
    print(f"{'tree':<40} {'start-up s':>10} {'total s':>8} {'beyond s':>9}  exit  lines")
    for r in results:
        code, digest, lines = r["outputs"][0]
        print(
            f"{r['tree']:<40} {r['startup_s']:>10.3f} {r['total_s']:>8.3f} "
            f"{r['beyond_startup_s']:>9.3f}  {code:>4}  {lines} ({digest[:12]})"
        )
    print("same output in every run of every tree" if same else "OUTPUTS DIFFER")
    summary = {"file": str(big), "bytes": size, "rounds": args.rounds, "same_output": same}
    print(json.dumps({**summary, "trees": results}))


def main() -> None:
    if "--command" in sys.argv[1:]:
        command_main(sys.argv[1:])
    else:
        document_main(sys.argv[1:])


if __name__ == "__main__":
    main()
