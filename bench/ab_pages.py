"""Two versions of the audit side by side on the same small pages, rounds alternating.

    python3 bench/ab_pages.py --tree OLD_TREE:OLD_VENV --tree NEW_TREE:NEW_VENV [--rounds 4]

Each tree is a checkout of the project and a virtualenv with it installed (``pip install -e
TREE``: an editable install shadows ``PYTHONPATH``, so each tree needs its own). The script
writes the benchmark's small-page site (``--pages``, default 10,000), serves it with the
bench's nginx, and runs ``scrapy crawl audit -s SITEMAPAUDIT_UNTHROTTLED=true`` from each tree
in turn, ``--rounds`` times, each with a fresh history file. It prints each round's wall time
and pages per second of Scrapy's crawl time (``elapsed_time_seconds``), the medians, and
whether every round wrote one record per page. Standard library only (run it with any Python
3.11+); nginx as for ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from nginx import Nginx, Server, free_port  # noqa: E402
from sitegen import write_page_site  # noqa: E402

_ELAPSED_RE = re.compile(r"'elapsed_time_seconds': ([0-9.]+)")


def _audit(tree: Path, venv: Path, origin: str, work: Path, name: str) -> dict[str, float]:
    report = work / f"{name}.jsonl"
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(venv / "bin" / "scrapy"),
            "crawl",
            "audit",
            "-a",
            f"domain={origin}",
            "-O",
            str(report),
            "-s",
            f"SITEMAPAUDIT_HISTORY_PATH={work / name}.sqlite3",
            "-s",
            "SITEMAPAUDIT_UNTHROTTLED=true",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    elapsed = _ELAPSED_RE.search(done.stderr)
    with report.open(encoding="utf-8") as lines:
        urls = sum(1 for line in lines if '"record": "url"' in line)
    return {
        "wall_s": wall,
        "crawl_s": float(elapsed.group(1)) if elapsed else float("nan"),
        "urls": urls,
        "exit": done.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="TREE:VENV (twice or more)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--pages", type=int, default=10_000)
    args = parser.parse_args()
    trees = [tuple(Path(p).resolve() for p in value.split(":", 1)) for value in args.tree]
    (HERE / ".work").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ab-pages-", dir=HERE / ".work") as work_dir:
        work = Path(work_dir)
        os.chmod(work, 0o755)  # nginx's worker reads the site as another user
        port = free_port()
        origin = f"http://127.0.0.1:{port}"
        write_page_site(work / "www", origin, args.pages, "small")
        nginx = Nginx(prefix=work / "nginx", servers=[Server("pages", work / "www", port)])
        nginx.start()
        runs: dict[str, list[dict[str, float]]] = {str(tree): [] for tree, _ in trees}
        try:
            for round_ in range(args.rounds):
                for index, (tree, venv) in enumerate(trees):
                    run = _audit(tree, venv, origin, work, f"t{index}-r{round_}")
                    runs[str(tree)].append(run)
                    rate = args.pages / run["crawl_s"]
                    print(
                        f"round {round_ + 1} {tree}: wall {run['wall_s']:.2f} s, "
                        f"{rate:.0f} pages/s crawl time, {run['urls']:.0f} URL records, "
                        f"exit {run['exit']:.0f}",
                        flush=True,
                    )
        finally:
            nginx.stop()
    for tree, rounds in runs.items():
        rates = [args.pages / r["crawl_s"] for r in rounds]
        complete = all(r["urls"] == args.pages for r in rounds)
        print(
            f"{tree}: median {statistics.median(rates):.0f} pages/s crawl time "
            f"({', '.join(f'{x:.0f}' for x in rates)}); one record per page: {complete}"
        )
    print(json.dumps({"pages": args.pages, "runs": runs}))


if __name__ == "__main__":
    main()
