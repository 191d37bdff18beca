"""Run a command as a subprocess and measure its wall time and peak memory.

Peak memory is reported two ways, both read from /proc every ``poll`` seconds:

* ``peak_rss_tree``: the largest sum of RSS (VmRSS) over the process and all its descendants;
* ``peak_hwm``: the largest VmHWM of any single process of the tree. VmHWM is the kernel's
  high-water mark of that process's RSS since its exec, so spikes between samples count.

``peak_rss`` is the larger of the two. ``maxrss_kernel`` (``ru_maxrss`` from ``wait4()``) is kept
for reference only: Linux carries the spawning process's own high-water mark across fork and
exec into it, so it can report the runner's memory instead of the tool's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")
_HZ = os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    cmd: list[str]
    returncode: int
    wall_s: float
    peak_rss_tree: int
    peak_hwm: int
    maxrss_kernel: int
    stdout_path: str
    stderr_path: str
    timed_out: bool = False
    samples: int = 0
    cpu_s: float = 0.0
    system_busy_s: float = 0.0
    loadavg_before: str = ""
    loadavg_after: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def peak_rss(self) -> int:
        return max(self.peak_rss_tree, self.peak_hwm)

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["peak_rss"] = self.peak_rss
        return data

    def stdout(self) -> str:
        return Path(self.stdout_path).read_text(errors="replace")

    def stderr(self) -> str:
        return Path(self.stderr_path).read_text(errors="replace")


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.extend(int(x) for x in fh.read().split())
        except OSError:
            continue
    return found


def _rss_hwm(pid: int) -> tuple[int, int]:
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return rss, hwm


def system_busy_s() -> float:
    """Seconds of CPU time spent non-idle by the whole machine since boot, all CPUs."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / _HZ


def process_cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            rest = fh.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / _HZ
    except (OSError, IndexError, ValueError):
        return 0.0


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return ""


def tree_rss(pid: int) -> tuple[int, int]:
    """(sum of VmRSS, largest VmHWM) over ``pid`` and its descendants."""
    total = 0
    hwm = 0
    stack = [pid]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        rss, high = _rss_hwm(current)
        total += rss
        hwm = max(hwm, high)
        stack.extend(children_of(current))
    return total, hwm


def run_measured(
    cmd: list[str],
    *,
    cwd: str | Path,
    log_dir: Path,
    name: str,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    poll: float = 0.02,
) -> Measured:
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path = log_dir / f"{name}.stdout"
    err_path = log_dir / f"{name}.stderr"
    load_before = loadavg()
    busy_before = system_busy_s()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(c) for c in cmd],
            cwd=str(cwd),
            env=env,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        done: dict[str, object] = {}

        def reap() -> None:
            _, status, usage = os.wait4(proc.pid, 0)
            done["end"] = time.perf_counter()
            done["status"] = status
            done["maxrss"] = usage.ru_maxrss * 1024
            done["cpu"] = usage.ru_utime + usage.ru_stime

        waiter = threading.Thread(target=reap, daemon=True)
        waiter.start()
        peak = 0
        peak_hwm = 0
        samples = 0
        timed_out = False
        while waiter.is_alive():
            rss, hwm = tree_rss(proc.pid)
            peak = max(peak, rss)
            peak_hwm = max(peak_hwm, hwm)
            samples += 1
            if timeout is not None and time.perf_counter() - start > timeout:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                waiter.join(10)
                if waiter.is_alive():
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                break
            waiter.join(poll)
        waiter.join()
        status = int(done["status"])  # type: ignore[call-overload]
        proc.returncode = os.waitstatus_to_exitcode(status)
    return Measured(
        cmd=[str(c) for c in cmd],
        returncode=proc.returncode,
        wall_s=float(done["end"]) - start,  # type: ignore[arg-type]
        peak_rss_tree=peak,
        peak_hwm=peak_hwm,
        maxrss_kernel=int(done["maxrss"]),  # type: ignore[call-overload]
        stdout_path=str(out_path),
        stderr_path=str(err_path),
        timed_out=timed_out,
        samples=samples,
        cpu_s=float(done["cpu"]),  # type: ignore[arg-type]
        system_busy_s=system_busy_s() - busy_before,
        loadavg_before=load_before,
        loadavg_after=loadavg(),
    )
