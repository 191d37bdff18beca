"""Benchmark of the sitemapaudit spider against reference tools on a local nginx.

    python bench/run.py [--urls N] [--sitemaps K] [--pages P] [--page-size small|large]
                        [--million] [--only inventory,memory,throughput,bandwidth,validation]

See bench/README.md for what each row measures. Standard library only: any Python 3.11+ runs
it; the tools themselves run in /work/venv (the project) and bench/.venv-ref (advertools,
ultimate-sitemap-parser).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import Measured, run_measured  # noqa: E402
from nginx import Nginx, Server, ensure_nginx, free_port  # noqa: E402
from profile_summary import summarise  # noqa: E402
from sitegen import (  # noqa: E402
    Site,
    write_inventory_site,
    write_page_site,
    write_validation_sitemap,
)

SECTIONS = ("inventory", "memory", "throughput", "bandwidth", "validation")
MB = 1024 * 1024
PAGE_PREFIXES = ("/p/", "/px/", "/catalog/")

# The issue's targets.
T1_ADV_SPEED = 1.0
T1_ADV_MEMORY = 0.25
T1_USP_SPEED = 3.0
T2_PEAK = 200 * MB
T2_GROWTH = 50 * MB
T3A_RATIO = 0.90
T3B_RATIO = 1.5
T4_BYTES = 0.10
T4_SMALL_PAGES = 0.95
T5_SECONDS = 0.5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--urls", type=int, default=100_000, help="URLs of the inventory site")
    p.add_argument("--sitemaps", type=int, default=20, help="gzip sitemaps of the inventory site")
    p.add_argument("--pages", type=int, default=10_000, help="pages of the throughput site")
    p.add_argument(
        "--page-size",
        choices=("small", "large"),
        default="small",
        help="pages of the throughput site: small ~2 KB, large 200 KB (5 KB head)",
    )
    p.add_argument(
        "--large-pages", type=int, default=500, help="200 KB pages of the bandwidth site"
    )
    p.add_argument(
        "--million",
        action="store_true",
        help="also run the inventory at 1,000,000 URLs (20 sitemaps); the memory "
        "target compares it with the --urls run",
    )
    p.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections (default all): {','.join(SECTIONS)}",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="throughput runs per configuration (the median is reported)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=64,
        help="CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN of the audit and "
        "of both bare spiders",
    )
    p.add_argument(
        "--audit-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra -s setting for every audit run (also applied to the bare spider "
        "that copies the audit's settings)",
    )
    p.add_argument(
        "--bandwidth-limit-rate",
        default="",
        help="also measure bandwidth on a second site with this nginx limit_rate "
        "(e.g. 64k; nginx sends the first second's worth at once)",
    )
    p.add_argument(
        "--memory-full",
        action="store_true",
        help="memory: also run the full audit (every page fetched) on the inventory "
        "site(s); every /catalog/ URL is served one static 2 KB page",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="run every audit under py-spy (installed into the reference venv) and "
        "write collapsed stacks and a summary next to the results; the timings "
        "of profiled runs include py-spy's overhead",
    )
    p.add_argument("--project", default=str(HERE.parent), help="the sitemapaudit project")
    p.add_argument("--venv", default="/work/venv", help="the project's virtualenv")
    p.add_argument(
        "--ref-venv",
        default=str(HERE / ".venv-ref"),
        help="virtualenv of the reference tools (created if missing)",
    )
    p.add_argument("--workdir", default=str(HERE / ".work"), help="parent of the run's temp dir")
    p.add_argument("--results", default=str(HERE / "results"), help="where the JSON goes")
    p.add_argument("--keep", action="store_true", help="keep the generated sites and logs")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per tool run")
    args = p.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(args.only) - set(SECTIONS)
    if unknown:
        p.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    return args


# -- helpers ---------------------------------------------------------------------------------


def mb(n: float | int | None) -> str:
    return "-" if n is None else f"{n / MB:.0f}"


def fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def log(msg: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {msg}", flush=True)


def scrapy_stats(text: str) -> dict[str, Any]:
    """The numeric entries of the last 'Dumping Scrapy stats' block of a Scrapy log."""
    start = text.rfind("Dumping Scrapy stats:")
    if start < 0:
        return {}
    block = text[start : text.find("}", start) + 1]
    stats: dict[str, Any] = {}
    for key, value in re.findall(r"'([^']+)':\s*(-?\d+(?:\.\d+)?)(?=[,}\s])", block):
        stats[key] = ast.literal_eval(value)
    return stats


def traceback_tail(text: str, lines: int = 40) -> str:
    idx = text.rfind("Traceback (most recent call last)")
    chunk = text[idx:] if idx >= 0 else text
    return "\n".join(chunk.strip().splitlines()[-lines:])


def read_report(path: Path, *, keep_urls: bool) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    urls: dict[str, dict[str, Any]] = {}
    summary: dict[str, Any] | None = None
    fetched = 0
    issues: Counter[str] = Counter()
    if not path.exists():
        return {"exists": False}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            kind = rec.get("record")
            counts[kind] += 1
            if kind == "url":
                if rec.get("fetched"):
                    fetched += 1
                issues.update(rec.get("issues") or [])
                if not keep_urls:
                    continue
                urls[rec["url"]] = {
                    k: rec.get(k)
                    for k in (
                        "status",
                        "fetched",
                        "issues",
                        "noindex",
                        "canonical",
                        "final_url",
                        "last_modified",
                        "lastmod_delta_s",
                        "redirect_chain",
                    )
                }
            elif kind == "summary":
                summary = rec
    return {
        "exists": True,
        "records": dict(counts),
        "fetched": fetched,
        "urls": urls,
        "issues": dict(issues),
        "summary": summary,
    }


def norm_issues(value: Any) -> list[str]:
    return sorted(value or [])


def compare_expected(
    urls: dict[str, dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Compare a report's URL records with the facts the generator built into the pages."""
    bad: list[dict[str, Any]] = []
    for url, want in expected.items():
        got = urls.get(url)
        if got is None:
            bad.append({"url": url, "missing": True})
            continue
        diff = {}
        if got.get("status") != 200 or not got.get("fetched"):
            diff["status"] = got.get("status")
        if norm_issues(got.get("issues")) != want["issues"]:
            diff["issues"] = [norm_issues(got.get("issues")), want["issues"]]
        if sorted(got.get("noindex") or []) != want["noindex"]:
            diff["noindex"] = [got.get("noindex"), want["noindex"]]
        if got.get("canonical") != want["canonical"]:
            diff["canonical"] = [got.get("canonical"), want["canonical"]]
        if diff:
            bad.append({"url": url, **diff})
    return {"checked": len(expected), "mismatches": len(bad), "examples": bad[:5]}


def compare_reports(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    keys = (
        "status",
        "issues",
        "noindex",
        "canonical",
        "final_url",
        "last_modified",
        "lastmod_delta_s",
        "redirect_chain",
    )
    bad = []
    for url in sorted(set(a) | set(b)):
        ra, rb = a.get(url), b.get(url)
        if ra is None or rb is None:
            bad.append({"url": url, "only_in": "a" if rb is None else "b"})
            continue
        diff = {}
        for k in keys:
            va, vb = ra.get(k), rb.get(k)
            if k in ("issues", "noindex"):
                va, vb = sorted(va or []), sorted(vb or [])
            if va != vb:
                diff[k] = [va, vb]
        if diff:
            bad.append({"url": url, **diff})
    return {"compared": len(set(a) | set(b)), "mismatches": len(bad), "examples": bad[:5]}


def page_log_stats(entries: list[Any]) -> dict[str, Any]:
    pages = [e for e in entries if e.uri.startswith(PAGE_PREFIXES)]
    return {
        "requests": len(entries),
        "bytes_sent": sum(e.bytes_sent for e in entries),
        "page_requests": len(pages),
        "page_200": sum(1 for e in pages if e.status in (200, 206)),
        "page_bytes_sent": sum(e.bytes_sent for e in pages),
        "page_methods": dict(Counter(e.method for e in pages)),
        "page_ranges": sum(1 for e in pages if e.range not in ("", "-")),
    }


def machine_info(args: argparse.Namespace, nginx_bin: str | None) -> dict[str, Any]:
    def out(cmd: list[str]) -> str:
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
            return res.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "free_h": out(["free", "-h"]),
        "uname": platform.platform(),
        "cpu": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        ),
        "runner_python": sys.version.split()[0],
    }
    if nginx_bin:
        info["nginx"] = subprocess.run(
            [nginx_bin, "-v"], capture_output=True, text=True, check=False
        ).stderr.strip()
    venv_py = Path(args.venv) / "bin" / "python"
    info["project_versions"] = out(
        [
            str(venv_py),
            "-c",
            "import scrapy, lxml.etree as e, twisted, sys; "
            "print(f'python {sys.version.split()[0]}, scrapy {scrapy.__version__}, '"
            "f'lxml {e.__version__}, twisted {twisted.__version__}')",
        ]
    )
    ref_py = Path(args.ref_venv) / "bin" / "python"
    if ref_py.exists():
        info["ref_versions"] = out(
            [
                str(ref_py),
                "-c",
                "import importlib.metadata as m; "
                "print(', '.join(f'{p} {m.version(p)}' for p in "
                "('advertools', 'ultimate-sitemap-parser', 'pandas')))",
            ]
        )
    git = shutil.which("git")
    if git:
        info["project_commit"] = out([git, "-C", args.project, "rev-parse", "--short", "HEAD"])
        info["project_dirty_files"] = len(
            out([git, "-C", args.project, "status", "--porcelain"]).splitlines()
        )
    return info


def ensure_ref_venv(path: Path) -> Path:
    py = path / "bin" / "python"
    probe = [str(py), "-c", "import advertools, usp.tree"]
    if py.exists() and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return py
    log(f"creating {path} with advertools and ultimate-sitemap-parser")
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "advertools", "ultimate-sitemap-parser"], check=True
    )
    return py


# -- the benchmark -------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.project = Path(args.project).resolve()
        self.venv = Path(args.venv)
        self.scrapy = str(self.venv / "bin" / "scrapy")
        self.python = str(self.venv / "bin" / "python")
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix="run-", dir=args.workdir))
        for d in (Path(args.workdir), self.work):
            d.chmod(0o755)
        self.logs = self.work / "logs"
        self.reports = self.work / "reports"
        self.reports.mkdir()
        self.runs: list[dict[str, Any]] = []
        self.targets: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.sites: dict[str, Site] = {}
        self.nginx: Nginx | None = None
        self.ref_py: str | None = None
        self.audit_settings: dict[str, Any] = {}
        self.seq = 0
        self.py_spy: str | None = None
        self.audit_flags: list[str] = []
        self.known_settings: set[str] = set()

    # -- setup ---------------------------------------------------------------------------
    def unthrottled(self) -> list[str]:
        """The -s flags of every audit run: the shipped preset when the project has one
        (SITEMAPAUDIT_UNTHROTTLED), plus explicit values only where the preset does not give
        delays off and --concurrency; then --audit-set."""
        return list(self.audit_flags) + list(self.args.audit_set)

    def dump_settings(self, flags: list[str]) -> dict[str, Any]:
        res = subprocess.run(
            [self.python, str(HERE / "audit_settings.py"), *flags],
            cwd=self.project,
            capture_output=True,
            text=True,
            check=False,
        )
        if res.returncode != 0:
            self.errors.append(
                {"what": "reading the audit's settings", "stderr": res.stderr[-4000:]}
            )
            raise SystemExit(f"could not read the audit's settings:\n{res.stderr}")
        data: dict[str, Any] = json.loads(res.stdout)
        return data

    def choose_audit_flags(self) -> None:
        c = self.args.concurrency
        wanted = {
            "DOWNLOAD_DELAY": 0.0,
            "AUTOTHROTTLE_ENABLED": False,
            "CONCURRENT_REQUESTS": c,
            "CONCURRENT_REQUESTS_PER_DOMAIN": c,
        }
        flags: list[str] = []
        probe = self.dump_settings([])
        self.known_settings = set(probe["dropped"]) | set(probe["kept"])
        if "SITEMAPAUDIT_UNTHROTTLED" in probe["dropped"]:
            flags.append("SITEMAPAUDIT_UNTHROTTLED=true")
            probe = self.dump_settings(flags + list(self.args.audit_set))
        kept = probe["kept"]

        def same(name: str, value: Any) -> bool:
            got = kept.get(name)
            if isinstance(value, bool):
                return str(got).lower() in (("1", "true") if value else ("0", "false", "none"))
            try:
                return float(got) == float(value)
            except (TypeError, ValueError):
                return False

        for name, value in wanted.items():
            if not same(name, value):
                flags.append(f"{name}={int(value) if isinstance(value, bool) else value}")
        self.audit_flags = flags
        log(f"audit flags: {' '.join('-s ' + f for f in self.unthrottled())}")

    def setup(self) -> None:
        only = set(self.args.only)
        if only - {"validation"}:
            self.choose_audit_flags()
        servers: list[Server] = []
        www = self.work / "www"

        def site(name: str, make: Any, *, limit_rate: str = "", extra: str = "") -> None:
            port = free_port()
            origin = f"http://127.0.0.1:{port}"
            t0 = time.perf_counter()
            self.sites[name] = make(www / name, origin)
            log(f"generated {name} ({origin}) in {time.perf_counter() - t0:.1f}s")
            servers.append(
                Server(name=name, root=www / name, port=port, limit_rate=limit_rate, extra=extra)
            )

        catalog = (
            "        location /catalog/ {\n            try_files /page.html =404;\n        }\n"
        )
        a = self.args
        if only & {"inventory", "memory"}:
            site("inv", lambda r, o: write_inventory_site(r, o, a.urls, a.sitemaps), extra=catalog)
            if a.million:
                site(
                    "inv-1m", lambda r, o: write_inventory_site(r, o, 1_000_000, 20), extra=catalog
                )
                if "memory" in only:
                    per = -(-a.urls // 50_000)
                    site("inv-50k", lambda r, o: write_inventory_site(r, o, a.urls, per))
        if "throughput" in only:
            site("pages", lambda r, o: write_page_site(r, o, a.pages, a.page_size))
        if "bandwidth" in only:
            site("large", lambda r, o: write_page_site(r, o, a.large_pages, "large"))
            if a.bandwidth_limit_rate:
                site(
                    "large-rated",
                    lambda r, o: write_page_site(r, o, a.large_pages, "large"),
                    limit_rate=a.bandwidth_limit_rate,
                )
        if servers:
            self.nginx = Nginx(prefix=self.work / "nginx", servers=servers)
            self.nginx.start()
            log(f"nginx running (pid {self.nginx.proc.pid if self.nginx.proc else '?'})")
        if only & {"throughput", "bandwidth"}:
            self.write_profiles()

    def write_profiles(self) -> None:
        self.audit_settings = self.dump_settings(self.unthrottled())
        self.audit_settings["audit_flags"] = self.unthrottled()
        kept = {k: v for k, v in self.audit_settings["kept"].items() if k != "SETTINGS_MODULE"}
        profiles = self.work / "profiles"
        profiles.mkdir(exist_ok=True)
        c = self.args.concurrency
        (profiles / "bench_profile_audit.py").write_text(
            "import json\nglobals().update(json.loads(" + repr(json.dumps(kept)) + "))\n"
        )
        (profiles / "bench_profile_default.py").write_text(
            f"CONCURRENT_REQUESTS = {c}\nCONCURRENT_REQUESTS_PER_DOMAIN = {c}\n"
        )
        self.audit_settings["bare_default_profile"] = {
            "CONCURRENT_REQUESTS": c,
            "CONCURRENT_REQUESTS_PER_DOMAIN": c,
        }

    def close(self) -> None:
        if self.nginx:
            self.nginx.stop()
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)

    # -- one measured run ---------------------------------------------------------------
    def measure(
        self,
        section: str,
        tool: str,
        cmd: list[str],
        *,
        site: str | None,
        cwd: Path,
        env: dict[str, str] | None = None,
    ) -> tuple[Measured, dict[str, Any]]:
        self.seq += 1
        name = f"{self.seq:03d}-{section}-{tool}".replace(" ", "_").replace("/", "_")
        offset = self.nginx.log_offset(site) if (self.nginx and site) else 0
        nginx_cpu = self.nginx.cpu_s() if self.nginx else 0.0
        profile_out = None
        if self.args.profile and tool.startswith("sitemapaudit") and self.py_spy:
            profile_out = Path(self.args.results) / "profiles" / f"{name}.txt"
            profile_out.parent.mkdir(parents=True, exist_ok=True)
            cmd = [
                self.py_spy,
                "record",
                "--rate",
                "100",
                "--format",
                "raw",
                "--nonblocking",
                "-o",
                str(profile_out),
                "--",
                *cmd,
            ]
        m = run_measured(
            cmd, cwd=cwd, log_dir=self.logs, name=name, env=env, timeout=self.args.timeout
        )
        nginx_cpu = (self.nginx.cpu_s() if self.nginx else 0.0) - nginx_cpu
        ncpu = os.cpu_count() or 1
        other = max(0.0, m.system_busy_s - m.cpu_s - nginx_cpu)
        row: dict[str, Any] = {
            "section": section,
            "tool": tool,
            "site": site,
            "cmd": " ".join(cmd),
            "wall_s": m.wall_s,
            "peak_rss": m.peak_rss,
            "peak_rss_tree": m.peak_rss_tree,
            "peak_hwm": m.peak_hwm,
            "maxrss_kernel": m.maxrss_kernel,
            "returncode": m.returncode,
            "timed_out": m.timed_out,
            "log": name,
            "cpu_s": m.cpu_s,
            "nginx_cpu_s": nginx_cpu,
            "other_cpu_pct": 100 * other / (m.wall_s * ncpu),
            "loadavg": [m.loadavg_before, m.loadavg_after],
        }
        if profile_out is not None:
            row["profiled"] = True
            if profile_out.exists():
                summary = summarise(str(profile_out), 30)
                profile_out.with_suffix(".summary.txt").write_text(summary)
                row["profile"] = str(profile_out)
        if self.nginx and site:
            time.sleep(0.3)
            row["nginx"] = page_log_stats(self.nginx.read_log(site, offset))
        if m.returncode != 0 or m.timed_out:
            err = {
                "section": section,
                "tool": tool,
                "returncode": m.returncode,
                "timed_out": m.timed_out,
                "traceback": traceback_tail(m.stderr()),
            }
            self.errors.append(err)
            row["error"] = err["traceback"][-2000:]
            log(f"  {tool}: FAILED (rc={m.returncode}); stderr tail:\n{err['traceback']}")
        self.runs.append(row)
        return m, row

    def env_plain(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "PYTHONPATH")
        }
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def audit(
        self, section: str, tool: str, site: Site, *, fetch: bool, extra: list[str] | None = None
    ) -> dict[str, Any]:
        out = self.reports / f"{self.seq + 1:03d}-{section}-{tool.replace(' ', '_')}.jsonl"
        cmd = [self.scrapy, "crawl", "audit", "-a", f"domain={site.origin}"]
        if not fetch:
            cmd += ["-a", "fetch_urls=no"]
        cmd += ["-O", str(out)]
        history = None
        if "SITEMAPAUDIT_HISTORY_PATH" in self.known_settings:
            history = self.work / "history" / f"{out.stem}.sqlite3"
            history.parent.mkdir(exist_ok=True)
            cmd += ["-s", f"SITEMAPAUDIT_HISTORY_PATH={history}"]
        for s in self.unthrottled() + list(extra or []):
            cmd += ["-s", s]
        m, row = self.measure(
            section, tool, cmd, site=site.name, cwd=self.project, env=self.env_plain()
        )
        report = read_report(out, keep_urls=site.expected_file is not None)
        stats = scrapy_stats(m.stderr())
        row["scrapy"] = {
            k: stats.get(k)
            for k in (
                "elapsed_time_seconds",
                "downloader/response_bytes",
                "downloader/request_count",
                "response_received_count",
                "item_scraped_count",
                "log_count/ERROR",
                "sitemapaudit/head_only/stopped_after_head",
                "sitemapaudit/head_only/stopped_after_headers",
                "sitemapaudit/head_only/stopped_unreadable",
            )
        }
        row["report"] = {k: report.get(k) for k in ("exists", "records", "fetched", "issues")}
        summary = report.get("summary") or {}
        row["report"]["urls_listed"] = summary.get("urls_listed")
        row["report"]["urls_fetched"] = summary.get("urls_fetched")
        row["urls_found"] = summary.get("urls_listed", (report.get("records") or {}).get("url"))
        if report.get("exists") and not summary:
            row["error"] = (row.get("error") or "") + " report has no summary line"
        row["_urls"] = report.get("urls") or {}
        if not self.args.keep:
            out.unlink(missing_ok=True)
            if history is not None:
                for path in history.parent.glob(history.name + "*"):
                    path.unlink(missing_ok=True)
        self.finish_rates(row)
        return row

    def bare(self, section: str, tool: str, site: Site, profile: str) -> dict[str, Any]:
        env = self.env_plain()
        env["SCRAPY_SETTINGS_MODULE"] = f"bench_profile_{profile}"
        env["PYTHONPATH"] = str(self.work / "profiles")
        assert site.urls_file is not None
        cmd = [
            self.scrapy,
            "runspider",
            str(HERE / "bare_spider.py"),
            "-a",
            f"urls={site.urls_file}",
        ]
        m, row = self.measure(section, tool, cmd, site=site.name, cwd=self.work, env=env)
        stats = scrapy_stats(m.stderr())
        row["scrapy"] = {
            k: stats.get(k)
            for k in (
                "elapsed_time_seconds",
                "downloader/response_bytes",
                "downloader/request_count",
                "response_received_count",
                "log_count/ERROR",
            )
        }
        row["profile"] = profile
        self.finish_rates(row)
        return row

    def finish_rates(self, row: dict[str, Any]) -> None:
        pages = (row.get("nginx") or {}).get("page_200")
        row["pages"] = pages
        if pages:
            row["pages_per_s"] = pages / row["wall_s"]
            elapsed = (row.get("scrapy") or {}).get("elapsed_time_seconds")
            if elapsed:
                row["pages_per_s_crawl"] = pages / elapsed
            if row.get("cpu_s"):
                row["pages_per_cpu_s"] = pages / row["cpu_s"]

    def script(
        self,
        *,
        section: str,
        tool: str,
        py: str,
        script: str,
        arg: str,
        site: Site | None,
        expect: int | None = None,
        extra: list[str] | None = None,
    ) -> dict[str, Any]:
        m, row = self.measure(
            section,
            tool,
            [py, str(HERE / script), arg, *(extra or [])],
            site=site.name if site else None,
            cwd=HERE,
            env=self.env_plain(),
        )
        try:
            data = json.loads(m.stdout().strip().splitlines()[-1])
        except (ValueError, IndexError):
            data = {}
        row["result"] = data
        row["urls_found"] = data.get("urls")
        if expect is not None and data.get("urls") != expect and "error" not in row:
            row["error"] = f"found {data.get('urls')} URLs, expected {expect}"
        return row

    # -- sections ------------------------------------------------------------------------
    def inventory(self, name: str) -> dict[str, dict[str, Any]]:
        site = self.sites[name]
        n = site.url_count
        log(f"inventory: {n:,} URLs in {site.sitemap_count} gzip sitemaps ({name})")
        out: dict[str, dict[str, Any]] = {}
        out["lxml floor"] = self.script(
            section="inventory",
            tool="lxml floor",
            py=self.python,
            script="floor_lxml.py",
            arg=site.index_url,
            site=site,
            expect=n,
        )
        log(f"  lxml floor {out['lxml floor']['wall_s']:.1f}s")
        lines = self.work / f"floor-lines-{name}.jsonl"
        out["lxml floor + lines"] = self.script(
            section="inventory",
            tool="lxml floor + a JSON line per URL",
            py=self.python,
            script="floor_lxml.py",
            arg=site.index_url,
            extra=[str(lines)],
            site=site,
            expect=n,
        )
        lines.unlink(missing_ok=True)
        log(f"  lxml floor + lines {out['lxml floor + lines']['wall_s']:.1f}s")
        row = self.audit("inventory", "sitemapaudit", site, fetch=False)
        if row.get("urls_found") != n and "error" not in row:
            row["error"] = f"found {row.get('urls_found')} URLs, expected {n}"
        out["sitemapaudit"] = row
        log(f"  sitemapaudit {row['wall_s']:.1f}s {mb(row['peak_rss'])} MB")
        if self.ref_py:
            out["advertools"] = self.script(
                section="inventory",
                tool="advertools",
                py=self.ref_py,
                script="ref_advertools.py",
                arg=site.index_url,
                site=site,
                expect=n,
            )
            log(f"  advertools {out['advertools']['wall_s']:.1f}s")
            out["usp"] = self.script(
                section="inventory",
                tool="ultimate-sitemap-parser",
                py=self.ref_py,
                script="ref_usp.py",
                arg=site.origin,
                site=site,
                expect=n,
            )
            log(f"  usp {out['usp']['wall_s']:.1f}s")
        for r in out.values():
            r["size"] = n
            if r.get("urls_found"):
                r["urls_per_s"] = r["urls_found"] / r["wall_s"]
        return out

    def run_inventory(self) -> None:
        results = {name: self.inventory(name) for name in ("inv", "inv-1m") if name in self.sites}
        self.inventory_results = results
        key = "inv-1m" if "inv-1m" in results else "inv"
        res = results[key]
        audit, adv, usp = res.get("sitemapaudit"), res.get("advertools"), res.get("usp")
        size = self.sites[key].url_count
        ok_audit = audit is not None and "error" not in audit

        def ratio(a: Any, b: Any, field: str) -> float | None:
            if not a or not b or "error" in a or "error" in b:
                return None
            return a[field] / b[field]

        r1 = ratio(audit, adv, "wall_s")
        r2 = ratio(audit, adv, "peak_rss")
        r3 = ratio(usp, audit, "wall_s")
        self.target(
            "1",
            f"inventory wall: sitemapaudit / advertools ({size:,} URLs)",
            r1,
            f"< {T1_ADV_SPEED}",
            None if r1 is None or not ok_audit else r1 < T1_ADV_SPEED,
        )
        self.target(
            "1",
            f"inventory peak RSS: sitemapaudit / advertools ({size:,} URLs)",
            r2,
            f"<= {T1_ADV_MEMORY}",
            None if r2 is None or not ok_audit else r2 <= T1_ADV_MEMORY,
        )
        self.target(
            "1",
            f"inventory wall: ultimate-sitemap-parser / sitemapaudit ({size:,} URLs)",
            r3,
            f">= {T1_USP_SPEED}",
            None if r3 is None or not ok_audit else r3 >= T1_USP_SPEED,
        )
        # What a tool that only parses and writes a line per URL would reach on the same site.
        floor = res.get("lxml floor + lines")
        note = "the least a tool that records every URL does, for comparison"
        self.target(
            "1 (bound)",
            f"inventory wall: lxml floor + a JSON line per URL / advertools ({size:,} URLs)",
            ratio(floor, adv, "wall_s"),
            "-",
            None,
            note=note,
        )
        self.target(
            "1 (bound)",
            f"inventory wall: ultimate-sitemap-parser / lxml floor + a JSON line per URL "
            f"({size:,} URLs)",
            ratio(usp, floor, "wall_s"),
            "-",
            None,
            note=note,
        )

    def run_memory(self) -> None:
        inv = getattr(self, "inventory_results", None)
        if inv is None:
            inv = {}
            for name in ("inv", "inv-1m"):
                if name in self.sites:
                    log(f"memory: inventory audit of {self.sites[name].url_count:,} URLs")
                    row = self.audit("memory", "sitemapaudit", self.sites[name], fetch=False)
                    row["size"] = self.sites[name].url_count
                    inv[name] = {"sitemapaudit": row}
        small = inv.get("inv", {}).get("sitemapaudit")
        big = inv.get("inv-1m", {}).get("sitemapaudit")
        alike = None
        if "inv-50k" in self.sites:
            site = self.sites["inv-50k"]
            log(
                f"memory: inventory audit of {site.url_count:,} URLs in {site.sitemap_count} "
                "sitemaps (the 1,000,000-URL site's sitemap size)"
            )
            alike = self.audit("memory", "sitemapaudit", site, fetch=False)
            alike["size"] = site.url_count
        self.memory_full: dict[str, dict[str, Any]] = {}
        if self.args.memory_full:
            for name in ("inv", "inv-1m"):
                if name in self.sites:
                    site = self.sites[name]
                    log(f"memory: full audit of {site.url_count:,} URLs (every page fetched)")
                    row = self.audit("memory", "sitemapaudit full audit", site, fetch=True)
                    row["size"] = site.url_count
                    self.memory_full[name] = row
                    log(
                        f"  {row['wall_s']:.0f}s {mb(row['peak_rss'])} MB "
                        f"{fmt(row.get('pages_per_s'), 0)} pages/s"
                    )
        ok = lambda r: r is not None and "error" not in r  # noqa: E731
        if big is not None:
            self.target(
                "2",
                "inventory audit peak RSS at 1,000,000 URLs (MB)",
                big["peak_rss"] / MB if ok(big) else None,
                "< 200",
                ok(big) and big["peak_rss"] < T2_PEAK,
            )
        else:
            self.target(
                "2",
                "inventory audit peak RSS at 1,000,000 URLs (MB)",
                None,
                "< 200",
                None,
                note="run with --million",
            )
        if big is not None and small is not None:
            per_sitemap = small["size"] // max(1, self.sites["inv"].sitemap_count)
            growth = big["peak_rss"] - small["peak_rss"]
            self.target(
                "2",
                f"peak RSS growth {small['size']:,} -> 1,000,000 URLs, inventory, sitemaps of "
                f"{per_sitemap:,} and 50,000 URLs (MB)",
                growth / MB,
                "< 50",
                ok(big) and ok(small) and growth < T2_GROWTH,
            )
        if big is not None and alike is not None:
            growth = big["peak_rss"] - alike["peak_rss"]
            self.target(
                "2",
                f"peak RSS growth {alike['size']:,} -> 1,000,000 URLs, inventory, sitemaps of "
                "50,000 URLs in both (MB)",
                growth / MB,
                "< 50",
                ok(big) and ok(alike) and growth < T2_GROWTH,
            )
        if big is None or small is None:
            self.target(
                "2",
                "peak RSS growth 100,000 -> 1,000,000 URLs, inventory (MB)",
                None,
                "< 50",
                None,
                note="run with --million",
            )
        fs, fb = self.memory_full.get("inv"), self.memory_full.get("inv-1m")
        if fb is not None:
            self.target(
                "2",
                "full audit peak RSS at 1,000,000 URLs (MB)",
                fb["peak_rss"] / MB,
                "< 200",
                ok(fb) and fb["peak_rss"] < T2_PEAK,
            )
        if fs is not None and fb is not None:
            growth = fb["peak_rss"] - fs["peak_rss"]
            self.target(
                "2",
                f"peak RSS growth {fs['size']:,} -> 1,000,000 URLs, full audit (MB)",
                growth / MB,
                "< 50",
                ok(fb) and ok(fs) and growth < T2_GROWTH,
            )

    def run_throughput(self) -> None:
        site = self.sites["pages"]
        head_only = "SITEMAPAUDIT_HEAD_ONLY" in self.audit_settings.get("dropped", {})
        configs: list[tuple[str, Any]] = [
            ("sitemapaudit", lambda: self.audit("throughput", "sitemapaudit", site, fetch=True)),
            (
                "bare, audit settings",
                lambda: self.bare("throughput", "bare spider, audit settings", site, "audit"),
            ),
            (
                "bare, Scrapy defaults",
                lambda: self.bare("throughput", "bare spider, Scrapy defaults", site, "default"),
            ),
        ]
        if head_only:
            configs.append(
                (
                    "sitemapaudit, head-only off",
                    lambda: self.audit(
                        "throughput",
                        "sitemapaudit, head-only off",
                        site,
                        fetch=True,
                        extra=["SITEMAPAUDIT_HEAD_ONLY=0"],
                    ),
                )
            )
        log(
            f"throughput: {site.url_count:,} {self.args.page_size} pages (~{site.page_bytes:,} B), "
            f"{self.args.concurrency} concurrent requests, {self.args.repeat} rounds"
        )
        rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in configs}
        for rnd in range(self.args.repeat):
            order = configs[rnd % len(configs) :] + configs[: rnd % len(configs)]
            for name, fn in order:
                row = fn()
                row["round"] = rnd + 1
                if name.startswith("sitemapaudit") and rnd == 0:
                    row["findings"] = compare_expected(row["_urls"], self._expected(site))
                row.pop("_urls", None)
                rows[name].append(row)
                log(
                    f"  round {rnd + 1} {name}: {row['wall_s']:.1f}s "
                    f"{fmt(row.get('pages_per_s'), 0)} pages/s {mb(row['peak_rss'])} MB"
                )
        med = {name: self._median(name, rs) for name, rs in rows.items()}
        self.throughput_median = med
        audit, same, default = (
            med["sitemapaudit"],
            med["bare, audit settings"],
            med["bare, Scrapy defaults"],
        )

        def rate_ratio(
            a: dict[str, Any], b: dict[str, Any], key: str = "pages_per_s"
        ) -> float | None:
            if a.get(key) and b.get(key):
                return a[key] / b[key]
            return None

        # The fastest round of each row: other work on a shared machine only slows a round
        # down, so best against best is the ratio least disturbed by it (reported beside the
        # medians, which decide).
        best = {
            name: {"pages_per_s": max((r.get("pages_per_s") or 0.0) for r in rs) or None}
            for name, rs in rows.items()
        }
        errors = any("error" in r for rs in rows.values() for r in rs)
        pages_ok = all(r.get("pages") == site.url_count for rs in rows.values() for r in rs)
        valid = not errors and pages_ok
        r3a = rate_ratio(audit, same)
        r3b = rate_ratio(audit, default)
        self.target(
            "3a",
            "full audit pages/s / bare spider pages/s, same settings",
            r3a,
            f">= {T3A_RATIO}",
            None if r3a is None else (valid and r3a >= T3A_RATIO),
            note=f"per CPU-second {fmt(rate_ratio(audit, same, 'pages_per_cpu_s'))}; "
            f"crawl-time {fmt(rate_ratio(audit, same, 'pages_per_s_crawl'))}; best rounds "
            f"{fmt(rate_ratio(best['sitemapaudit'], best['bare, audit settings']))}",
        )
        self.target(
            "3b",
            "full audit (shipped unthrottled settings) pages/s / bare spider on "
            "Scrapy defaults pages/s",
            r3b,
            f">= {T3B_RATIO}",
            None if r3b is None else (valid and r3b >= T3B_RATIO),
            note=f"per CPU-second {fmt(rate_ratio(audit, default, 'pages_per_cpu_s'))}; "
            f"crawl-time {fmt(rate_ratio(audit, default, 'pages_per_s_crawl'))}; best rounds "
            f"{fmt(rate_ratio(best['sitemapaudit'], best['bare, Scrapy defaults']))}",
        )
        if head_only and self.args.page_size == "small":
            off = med["sitemapaudit, head-only off"]
            best_off = best["sitemapaudit, head-only off"]
            r4c = rate_ratio(audit, off)
            self.target(
                "4",
                "small pages: audit pages/s with head-only on / off",
                r4c,
                f">= {T4_SMALL_PAGES}",
                None if r4c is None else (valid and r4c >= T4_SMALL_PAGES),
                note=f"per CPU-second {fmt(rate_ratio(audit, off, 'pages_per_cpu_s'))}; best "
                f"rounds {fmt(rate_ratio(best['sitemapaudit'], best_off))}",
            )
        first = rows["sitemapaudit"][0].get("findings")
        if first:
            self.target(
                "-",
                "throughput audit findings match the generated pages",
                first["mismatches"],
                "0 mismatches",
                first["mismatches"] == 0,
            )

    def _median(self, name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        good = [r for r in rows if "error" not in r and r.get("pages_per_s")]
        if not good:
            return {"tool": name}
        pick = sorted(good, key=lambda r: r["pages_per_s"])[len(good) // 2]
        return {
            "tool": name,
            "pages_per_s": statistics.median(r["pages_per_s"] for r in good),
            "pages_per_s_crawl": statistics.median(r.get("pages_per_s_crawl") or 0 for r in good),
            "pages_per_cpu_s": statistics.median(r.get("pages_per_cpu_s") or 0 for r in good),
            "other_cpu_pct": statistics.median(r.get("other_cpu_pct") or 0 for r in good),
            "wall_s": statistics.median(r["wall_s"] for r in good),
            "peak_rss": max(r["peak_rss"] for r in good),
            "pages": pick.get("pages"),
            "page_bytes_sent": (pick.get("nginx") or {}).get("page_bytes_sent"),
            "all_pages_per_s": [r["pages_per_s"] for r in rows if r.get("pages_per_s")],
        }

    def _expected(self, site: Site) -> dict[str, dict[str, Any]]:
        assert site.expected_file is not None
        data: dict[str, dict[str, Any]] = json.loads(site.expected_file.read_text())
        return data

    def run_bandwidth(self) -> None:
        head_only = "SITEMAPAUDIT_HEAD_ONLY" in self.audit_settings.get("dropped", {})
        self.bandwidth: dict[str, dict[str, Any]] = {}
        for name, label in (
            ("large", "loopback"),
            ("large-rated", f"limit_rate {self.args.bandwidth_limit_rate}"),
        ):
            if name not in self.sites:
                continue
            site = self.sites[name]
            log(
                f"bandwidth ({label}): {site.url_count} pages of ~{site.page_bytes:,} B, "
                f"head ~{site.head_bytes:,} B"
            )
            full = self.bare("bandwidth", f"bare spider full GET ({label})", site, "audit")
            audit = self.audit("bandwidth", f"sitemapaudit ({label})", site, fetch=True)
            audit["findings"] = compare_expected(audit["_urls"], self._expected(site))
            res = {"full_get": full, "audit": audit}
            if head_only:
                off = self.audit(
                    "bandwidth",
                    f"sitemapaudit head-only off ({label})",
                    site,
                    fetch=True,
                    extra=["SITEMAPAUDIT_HEAD_ONLY=0"],
                )
                off["findings"] = compare_expected(off["_urls"], self._expected(site))
                audit["same_as_full_read"] = compare_reports(audit["_urls"], off["_urls"])
                off.pop("_urls", None)
                res["audit_full_read"] = off
            audit.pop("_urls", None)
            self.bandwidth[name] = res
            fb = (full.get("nginx") or {}).get("page_bytes_sent")
            ab = (audit.get("nginx") or {}).get("page_bytes_sent")
            fs = (full.get("scrapy") or {}).get("downloader/response_bytes")
            as_ = (audit.get("scrapy") or {}).get("downloader/response_bytes")
            ok = "error" not in full and "error" not in audit
            findings_ok = audit["findings"]["mismatches"] == 0 and (
                audit.get("same_as_full_read", {}).get("mismatches", 0) == 0
            )
            log(
                f"  full GET {mb(fb)} MB sent, audit {mb(ab)} MB sent; findings mismatches "
                f"{audit['findings']['mismatches']}"
            )
            r = ab / fb if ab is not None and fb else None
            self.target(
                "4",
                f"bytes sent by nginx for the pages ({label}): audit / full GET",
                r,
                f"< {T4_BYTES}",
                None if r is None else (ok and findings_ok and r < T4_BYTES),
                note=f"{mb(ab)} MB vs {mb(fb)} MB",
            )
            rs = as_ / fs if as_ is not None and fs else None
            self.target(
                "4",
                f"response bytes read by Scrapy ({label}): audit / full GET",
                rs,
                f"< {T4_BYTES}",
                None if rs is None else (ok and findings_ok and rs < T4_BYTES),
                note="downloader/response_bytes",
            )
            detail = f"{audit['findings']['mismatches']} vs generated facts"
            if "same_as_full_read" in audit:
                detail += f", {audit['same_as_full_read']['mismatches']} vs head-only off"
            self.target(
                "4",
                f"findings identical to a full read ({label})",
                audit["findings"]["mismatches"]
                + audit.get("same_as_full_read", {}).get("mismatches", 0),
                "0 mismatches",
                findings_ok,
                note=detail,
            )

    def run_validation(self) -> None:
        path = self.work / "validate-50k.xml"
        size = write_validation_sitemap(path, "https://www.example.com")
        log(f"validation: one 50,000-URL sitemap ({size / MB:.1f} MB)")
        env = self.env_plain()
        env["PYTHONPATH"] = str(self.project)
        m, row = self.measure(
            "validation",
            "validate_document",
            [self.python, str(HERE / "validate_bench.py"), str(path), "3"],
            site=None,
            cwd=self.project,
            env=env,
        )
        try:
            row["result"] = json.loads(m.stdout().strip().splitlines()[-1])
        except (ValueError, IndexError):
            row["result"] = {}
        res = row["result"]
        first = res.get("first_call_s")
        self.target(
            "5",
            "validate_document(), one 50,000-URL sitemap, first call incl. schema load (s)",
            first,
            f"< {T5_SECONDS}",
            None if first is None else first < T5_SECONDS,
            note=f"warm {fmt(res.get('warm_median_s'))} s; bare lxml XMLSchema "
            f"{fmt(res.get('bare_lxml_xmlschema_s'))} s",
        )
        if (self.project / "sitemapaudit" / "commands" / "validate.py").exists():
            tiny = self.work / "validate-1.xml"
            write_validation_sitemap(tiny, "https://www.example.com", 1)
            # Alternating rounds (--repeat), compared by their medians: one run of each is at
            # the mercy of whatever else the machine does in that second.
            walls: dict[str, list[float]] = {"1 URL": [], "50,000 URLs": []}
            for round_no in range(1, self.args.repeat + 1):
                for label, file in (("1 URL", tiny), ("50,000 URLs", path)):
                    m2, row2 = self.measure(
                        "validation",
                        f"scrapy validate ({label})",
                        [self.scrapy, "validate", str(file)],
                        site=None,
                        cwd=self.project,
                        env=self.env_plain(),
                    )
                    with open(m2.stdout_path, "rb") as fh:
                        lines = sum(1 for _ in fh)
                    row2["result"] = {"stdout_lines": lines, "exit": m2.returncode}
                    row2["round"] = round_no
                    if m2.returncode == 1 and "error" in row2:
                        row2.pop("error")
                        self.errors.pop()
                    if m2.returncode in (0, 1):
                        walls[label].append(m2.wall_s)
            if all(walls.values()):
                startup = statistics.median(walls["1 URL"])
                whole = statistics.median(walls["50,000 URLs"])
                extra = whole - startup
                self.target(
                    "5",
                    "`scrapy validate FILE`: 50,000-URL file minus 1-URL file "
                    "(start-up excluded), medians (s)",
                    extra,
                    f"< {T5_SECONDS}",
                    extra < T5_SECONDS,
                    note=f"whole command {whole:.2f} s, start-up {startup:.2f} s, "
                    f"{len(walls['1 URL'])} round(s)",
                )

    # -- output ------------------------------------------------------------------------------
    def target(
        self,
        target: str,
        what: str,
        value: float | int | None,
        threshold: str,
        ok: bool | None,
        *,
        note: str = "",
    ) -> None:
        self.targets.append(
            {
                "target": target,
                "what": what,
                "value": value,
                "threshold": threshold,
                "result": verdict(ok),
                "note": note,
            }
        )

    def runs_table(self) -> str:
        return runs_table(self.runs)

    def targets_table(self) -> str:
        return targets_table(self.targets)

    def write_results(self, info: dict[str, Any], started: datetime) -> Path:
        results = Path(self.args.results)
        results.mkdir(parents=True, exist_ok=True)
        for r in self.runs:
            r.pop("_urls", None)
        data = {
            "started_at": started.isoformat(timespec="seconds"),
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "argv": sys.argv[1:],
            "args": {k: v for k, v in vars(self.args).items()},
            "machine": info,
            "sites": {k: v.as_dict() for k, v in self.sites.items()},
            "audit_settings": self.audit_settings,
            "targets": self.targets,
            "runs": self.runs,
            "errors": self.errors,
            "tables": {"runs": self.runs_table(), "targets": self.targets_table()},
        }
        text = json.dumps(data, indent=1, default=str)
        stamp = started.strftime("%Y%m%dT%H%M%SZ")
        mode = "million" if self.args.million else "default"
        if sorted(self.args.only) != sorted(SECTIONS):
            mode += "-" + "-".join(self.args.only)
        if self.args.memory_full:
            mode += "-memory-full"
        (results / f"{stamp}-{mode}.json").write_text(text)
        latest = results / "latest.json"
        latest.write_text(text)
        (results / f"latest-{mode}.json").write_text(text)
        return latest


def runs_table(runs: list[dict[str, Any]]) -> str:
    lines = [
        "| section | tool | site | URLs/pages | wall s | URLs/s or pages/s | CPU s | "
        "other load | peak RSS MB | bytes sent | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        count = (
            r.get("urls_found")
            if r["section"] in ("inventory", "memory") and not (r.get("pages"))
            else r.get("pages")
        )
        rate = r.get("pages_per_s") or r.get("urls_per_s")
        ng = r.get("nginx") or {}
        nb = ng.get("page_bytes_sent") if ng.get("page_requests") else ng.get("bytes_sent")
        notes = []
        if r.get("round"):
            notes.append(f"round {r['round']}")
        if r.get("pages_per_s_crawl"):
            notes.append(f"{r['pages_per_s_crawl']:.0f}/s crawl time")
        if r.get("pages_per_cpu_s"):
            notes.append(f"{r['pages_per_cpu_s']:.0f} pages per CPU-s")
        if r.get("profiled"):
            notes.append("profiled")
        if r["section"] == "validation" and r.get("result"):
            res = r["result"]
            if "first_call_s" in res:
                notes.append(
                    f"first call {res['first_call_s']:.3f}s, warm "
                    f"{res['warm_median_s']:.3f}s, import {res['import_s']:.2f}s"
                )
        if "error" in r:
            notes.append("ERROR: " + r["error"].strip().splitlines()[-1][:120])
        lines.append(
            f"| {r['section']} | {r['tool']} | {r.get('site') or '-'} | "
            f"{'-' if count is None else f'{count:,}'} | {r['wall_s']:.2f} | "
            f"{'-' if not rate else f'{rate:,.0f}'} | {r.get('cpu_s', 0):.1f} | "
            f"{r.get('other_cpu_pct', 0):.0f}% | {mb(r['peak_rss'])} | "
            f"{'-' if nb is None else f'{nb / MB:.1f} MB'} | {'; '.join(notes)} |"
        )
    return "\n".join(lines)


def targets_table(targets: list[dict[str, Any]]) -> str:
    lines = [
        "| target | measure | value | threshold | result | notes |",
        "|---|---|---|---|---|---|",
    ]
    for t in targets:
        v = t["value"]
        value = "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
        lines.append(
            f"| {t['target']} | {t['what']} | {value} | {t['threshold']} | "
            f"**{t['result']}** | {t['note']} |"
        )
    return "\n".join(lines)


def render(path: str) -> int:
    data = json.loads(Path(path).read_text())
    m = data.get("machine", {})
    print(f"Machine: {m.get('nproc')} CPUs ({m.get('cpu', '')}); {m.get('project_versions', '')}")
    print(
        f"Run: {' '.join(data.get('argv') or []) or '(defaults)'}, "
        f"{data.get('started_at')} to {data.get('finished_at')}"
    )
    print()
    print(runs_table(data["runs"]))
    print()
    print(targets_table(data["targets"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--render"]:
        return render(argv[1] if len(argv) > 1 else str(HERE / "results" / "latest.json"))
    args = parse_args(argv)
    started = datetime.now(UTC)
    nginx_bin = ensure_nginx() if set(args.only) - {"validation"} else None
    bench = Bench(args)
    if set(args.only) & {"inventory"} or args.profile:
        bench.ref_py = str(ensure_ref_venv(Path(args.ref_venv)))
    if args.profile:
        spy = Path(args.ref_venv) / "bin" / "py-spy"
        if not spy.exists():
            subprocess.run(
                [
                    str(Path(args.ref_venv) / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "py-spy",
                ],
                check=True,
            )
        bench.py_spy = str(spy)
    info = machine_info(args, nginx_bin)
    log(f"work dir {bench.work}; {info['nproc']} CPUs; {info.get('project_versions', '')}")
    try:
        bench.setup()
        for section in SECTIONS:
            if section not in args.only:
                continue
            try:
                getattr(bench, f"run_{section}")()
            except Exception as exc:
                tb = traceback.format_exc()
                bench.errors.append({"section": section, "bench_error": tb})
                log(f"section {section} failed: {exc!r}\n{tb}")
    finally:
        bench.close()
    path = bench.write_results(info, started)
    print()
    print(f"Machine: {info['nproc']} CPUs ({info['cpu']}); {info.get('project_versions', '')}")
    print()
    print(bench.runs_table())
    print()
    print(bench.targets_table())
    print()
    if bench.errors:
        print(f"{len(bench.errors)} error(s); details in {path}")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
