"""The distributed audit (``SITEMAPAUDIT_DISTRIBUTED``) against a single process, on one machine.

    python3 bench/distributed.py                  # 10,000 pages, 100,000-URL inventory, 3 rounds
    python3 bench/distributed.py --urls 1000000   # the inventory at 1,000,000 URLs

Two measurements, each side by side in one run on the same local nginx and a private
``redis-server`` (installed with apt-get when missing and running as root):

* pages: a full audit of ``--pages`` small static pages by one process, and by one worker of a
  distributed audit (every request through the shared Redis queue, duplicate filter and
  per-URL state), alternating, ``--repeat`` rounds: wall time and CPU seconds (user + system)
  of the audit's process. The ratio of CPU seconds is what a worker pays for sharing.
* inventory: ``-a fetch_urls=no`` of ``--urls`` URLs in 20 gzip sitemaps by one process, then
  by two workers started together (Redis restarted first, so its ``used_memory_peak`` is the
  audit's): wall time until both have exited, and Redis's peak memory.

Both check that the distributed report has the same URL records (url, sitemaps, lastmod,
status, issues) as the single process. Results go to ``bench/results/<time>-distributed.json``
and a Markdown table to standard output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from measure import run_measured  # noqa: E402
from nginx import Nginx, Server, free_port  # noqa: E402
from sitegen import write_inventory_site, write_page_site  # noqa: E402


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def ensure_redis() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    if os.geteuid() != 0:
        raise SystemExit("redis-server is not installed; run: sudo apt-get install -y redis-server")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "redis-server"], check=True, env=env)
    found = shutil.which("redis-server")
    if not found:
        raise SystemExit("apt-get installed redis-server but no redis-server binary was found")
    return found


class Redis:
    """A private redis-server on 127.0.0.1, no persistence."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            ["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                *(self.binary, "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.cli("ping").strip() == "PONG":
                    return
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def peak_memory(self) -> int:
        for line in self.cli("info", "memory").splitlines():
            if line.startswith("used_memory_peak:"):
                return int(line.split(":", 1)[1])
        return 0


def audit_command(scrapy: Path, origin: str, report: Path, history: Path, *extra: str) -> list[str]:
    return [
        str(scrapy),
        "crawl",
        "audit",
        "-a",
        f"domain={origin}",
        "-O",
        str(report),
        "-s",
        f"SITEMAPAUDIT_HISTORY_PATH={history}",
        "-s",
        "SITEMAPAUDIT_UNTHROTTLED=true",
        *extra,
    ]


def url_records(report: Path) -> list[tuple[Any, ...]]:
    rows = []
    with report.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["record"] == "url":
                rows.append(
                    (
                        record["url"],
                        tuple(record["sitemaps"]),
                        record["lastmod"],
                        record["status"],
                        tuple(record["issues"]),
                    )
                )
    return sorted(rows)


def measure_pages(
    args: argparse.Namespace, origin: str, redis: Redis, work: Path
) -> dict[str, Any]:
    scrapy = Path(args.venv) / "bin" / "scrapy"
    runs: dict[str, list[dict[str, Any]]] = {"single process": [], "one distributed worker": []}
    reports: dict[str, Path] = {}
    for round_no in range(args.repeat):
        order = list(runs) if round_no % 2 == 0 else list(runs)[::-1]
        for name in order:
            distributed = name != "single process"
            if distributed:
                redis.cli("flushall")
            report = work / f"pages-{len(reports)}.jsonl"
            history = work / f"pages-{round_no}-{distributed}.sqlite3"
            extra = ["-s", f"SITEMAPAUDIT_DISTRIBUTED={redis.url}"] if distributed else []
            measured = run_measured(
                audit_command(scrapy, origin, report, history, *extra),
                cwd=ROOT,
                log_dir=work / "logs",
                name=f"pages-{round_no}-{'dist' if distributed else 'single'}",
                timeout=args.timeout,
            )
            if measured.returncode != 0:
                raise SystemExit(f"{name} failed: {measured.stderr()[-2000:]}")
            runs[name].append({"wall_s": measured.wall_s, "cpu_s": measured.cpu_s})
            reports[name] = report
            log(f"pages, {name}: {measured.wall_s:.2f} s wall, {measured.cpu_s:.2f} s CPU")
    medians = {
        name: {
            "wall_s": statistics.median(r["wall_s"] for r in rows),
            "cpu_s": statistics.median(r["cpu_s"] for r in rows),
        }
        for name, rows in runs.items()
    }
    same = url_records(reports["single process"]) == url_records(reports["one distributed worker"])
    return {"runs": runs, "medians": medians, "same_url_records": same}


def measure_inventory(
    args: argparse.Namespace, origin: str, redis_binary: str, work: Path
) -> dict[str, Any]:
    scrapy = Path(args.venv) / "bin" / "scrapy"
    no_fetch = ("-a", "fetch_urls=no")
    single_report = work / "inventory-single.jsonl"
    single = run_measured(
        [*audit_command(scrapy, origin, single_report, work / "inv-single.sqlite3"), *no_fetch],
        cwd=ROOT,
        log_dir=work / "logs",
        name="inventory-single",
        timeout=args.timeout,
    )
    if single.returncode != 0:
        raise SystemExit(f"the single-process inventory failed: {single.stderr()[-2000:]}")
    log(f"inventory, single process: {single.wall_s:.2f} s")
    redis = Redis(redis_binary)
    redis.start()
    try:
        started = time.perf_counter()
        workers = []
        for n in range(2):
            command = audit_command(
                scrapy,
                origin,
                work / f"inventory-worker{n}.jsonl",
                work / f"inv-worker{n}.sqlite3",
                "-s",
                f"SITEMAPAUDIT_DISTRIBUTED={redis.url}",
            )
            out = (work / "logs" / f"inventory-worker{n}.log").open("wb")
            workers.append(
                subprocess.Popen(
                    [*command, *no_fetch], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
                )
            )
        codes = [w.wait(args.timeout) for w in workers]
        wall = time.perf_counter() - started
        peak = redis.peak_memory()
    finally:
        redis.stop()
    if any(codes):
        raise SystemExit(f"a worker of the distributed inventory failed: exit {codes}")
    written = [
        p
        for p in (work / "inventory-worker0.jsonl", work / "inventory-worker1.jsonl")
        if p.exists() and p.stat().st_size
    ]
    same = len(written) == 1 and url_records(written[0]) == url_records(single_report)
    log(f"inventory, two workers: {wall:.2f} s, Redis peak {peak / 2**20:.0f} MB")
    return {
        "single_wall_s": single.wall_s,
        "two_workers_wall_s": wall,
        "redis_peak_bytes": peak,
        "same_url_records": same,
    }


def table(result: dict[str, Any]) -> str:
    pages, inventory = result["pages"], result["inventory"]
    single, worker = pages["medians"]["single process"], pages["medians"]["one distributed worker"]
    n = result["args"]["pages"]
    lines = [
        f"Machine: {os.cpu_count()} CPUs; {result['started_at']}; "
        f"`python3 bench/distributed.py {' '.join(result['argv'])}`".rstrip(),
        "",
        "| measurement | single process | distributed | distributed / single |",
        "|---|---|---|---|",
        f"| {n:,} pages, one worker, median CPU s ({result['args']['repeat']} rounds) | "
        f"{single['cpu_s']:.2f} | {worker['cpu_s']:.2f} | "
        f"{worker['cpu_s'] / single['cpu_s']:.2f} |",
        f"| {n:,} pages, one worker, median wall s | {single['wall_s']:.2f} | "
        f"{worker['wall_s']:.2f} | {worker['wall_s'] / single['wall_s']:.2f} |",
        f"| inventory of {result['args']['urls']:,} URLs, two workers, wall s | "
        f"{inventory['single_wall_s']:.2f} | {inventory['two_workers_wall_s']:.2f} | "
        f"{inventory['two_workers_wall_s'] / inventory['single_wall_s']:.2f} |",
        f"| the same, Redis `used_memory_peak` | - | "
        f"{inventory['redis_peak_bytes'] / 2**20:.0f} MB | - |",
        "",
        "Same URL records as the single process: "
        f"pages {'yes' if pages['same_url_records'] else 'NO'}, "
        f"inventory {'yes' if inventory['same_url_records'] else 'NO'}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--venv", default="/work/venv")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args(argv)
    redis_binary = ensure_redis()
    (HERE / ".work").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="distributed-", dir=HERE / ".work"))
    work.chmod(0o755)  # nginx's worker runs as another user
    started = datetime.now(UTC)
    pages_port, inv_port = free_port(), free_port()
    pages_origin, inv_origin = f"http://127.0.0.1:{pages_port}", f"http://127.0.0.1:{inv_port}"
    write_page_site(work / "www" / "pages", pages_origin, args.pages, "small")
    write_inventory_site(work / "www" / "inv", inv_origin, args.urls, 20)
    nginx = Nginx(
        prefix=work / "nginx",
        servers=[
            Server(name="pages", root=work / "www" / "pages", port=pages_port),
            Server(name="inv", root=work / "www" / "inv", port=inv_port),
        ],
    )
    nginx.start()
    redis = Redis(redis_binary)
    redis.start()
    try:
        pages = measure_pages(args, pages_origin, redis, work)
    finally:
        redis.stop()
    try:
        inventory = measure_inventory(args, inv_origin, redis_binary, work)
    finally:
        nginx.stop()
    result = {
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "argv": sys.argv[1:] if argv is None else argv,
        "args": vars(args),
        "pages": pages,
        "inventory": inventory,
    }
    result["table"] = table(result)
    out = HERE / "results" / f"{started.strftime('%Y%m%dT%H%M%SZ')}-distributed.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    print(result["table"])
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
