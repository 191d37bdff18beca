"""The benchmark's own nginx instance on 127.0.0.1: install, configure, start, read its logs."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from measure import children_of, process_cpu_s

HERE = Path(__file__).resolve().parent
_LINE = re.compile(
    r"^(?P<msec>[\d.]+) (?P<status>\d+) (?P<bytes_sent>\d+) (?P<body>\d+) "
    r'"(?P<method>\S+) (?P<uri>[^"]*)" "(?P<range>[^"]*)" "(?P<ua>[^"]*)"$'
)


def find_nginx() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )


def ensure_nginx() -> str:
    found = find_nginx()
    if found:
        return found
    if os.geteuid() != 0:
        raise SystemExit("nginx is not installed; run: sudo apt-get install -y nginx")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("installing nginx: apt-get update && apt-get install -y nginx", flush=True)
    subprocess.run(["apt-get", "update"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "nginx"], check=True, env=env)
    found = find_nginx()
    if not found:
        raise SystemExit("apt-get installed nginx but no nginx binary was found")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    name: str
    root: Path
    port: int
    limit_rate: str = ""
    extra: str = ""

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class LogEntry:
    status: int
    bytes_sent: int
    body_bytes: int
    method: str
    uri: str
    range: str
    user_agent: str


@dataclass
class Nginx:
    prefix: Path
    servers: list[Server]
    workers: int = 1
    gzip: bool = False
    binary: str = field(default_factory=ensure_nginx)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def conf_path(self) -> Path:
        return self.prefix / "nginx.conf"

    def log_path(self, name: str) -> Path:
        return self.prefix / "logs" / f"access-{name}.log"

    def write_config(self) -> None:
        for sub in ("logs", "tmp"):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        server_tmpl = (HERE / "nginx.server.tmpl").read_text()
        blocks = []
        for server in self.servers:
            block = server_tmpl
            for key, value in {
                "@@PORT@@": str(server.port),
                "@@NAME@@": server.name,
                "@@ROOT@@": str(server.root),
                "@@PREFIX@@": str(self.prefix),
                "@@LIMIT_RATE@@": f"limit_rate {server.limit_rate};" if server.limit_rate else "",
                "@@EXTRA@@": server.extra,
            }.items():
                block = block.replace(key, value)
            blocks.append(block)
        conf = (HERE / "nginx.conf.tmpl").read_text()
        for key, value in {
            "@@WORKERS@@": str(self.workers),
            "@@PREFIX@@": str(self.prefix),
            "@@GZIP@@": "on" if self.gzip else "off",
            "@@SERVERS@@": "\n".join(blocks),
        }.items():
            conf = conf.replace(key, value)
        self.conf_path.write_text(conf)

    def start(self) -> None:
        self.write_config()
        check = subprocess.run(
            [self.binary, "-t", "-p", str(self.prefix), "-c", str(self.conf_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if check.returncode != 0:
            raise SystemExit(f"nginx config test failed:\n{check.stderr}")
        self.proc = subprocess.Popen(
            [self.binary, "-p", str(self.prefix), "-c", str(self.conf_path)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.prefix / "logs" / "stderr.log", "wb"),  # noqa: SIM115
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        for server in self.servers:
            while True:
                try:
                    with urllib.request.urlopen(server.origin + "/robots.txt", timeout=2) as r:
                        r.read()
                    break
                except OSError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        err = (self.prefix / "logs" / "error.log").read_text(errors="replace")
                        self.stop()
                        raise SystemExit(f"nginx did not serve {server.origin}:\n{err}") from None
                    time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(10)
        self.proc = None

    def cpu_s(self) -> float:
        """CPU seconds used so far by the master and worker processes."""
        if self.proc is None:
            return 0.0
        pids = [self.proc.pid, *children_of(self.proc.pid)]
        return sum(process_cpu_s(p) for p in pids)

    def log_offset(self, name: str) -> int:
        path = self.log_path(name)
        return path.stat().st_size if path.exists() else 0

    def read_log(self, name: str, offset: int) -> list[LogEntry]:
        path = self.log_path(name)
        entries: list[LogEntry] = []
        if not path.exists():
            return entries
        with open(path, "rb") as fh:
            fh.seek(offset)
            for raw in fh:
                m = _LINE.match(raw.decode("latin-1").rstrip("\n"))
                if not m:
                    continue
                entries.append(
                    LogEntry(
                        status=int(m["status"]),
                        bytes_sent=int(m["bytes_sent"]),
                        body_bytes=int(m["body"]),
                        method=m["method"],
                        uri=m["uri"],
                        range=m["range"],
                        user_agent=m["ua"],
                    )
                )
        return entries
