"""Summarise a py-spy ``--format raw`` (collapsed stacks) file: the functions with the most
samples, inclusive and self.

    python bench/profile_summary.py PROFILE.txt [N]
"""

from __future__ import annotations

import sys
from collections import Counter


def summarise(path: str, top: int = 25) -> str:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            total += n
            frames = [f.strip() for f in stack.split(";") if f.strip()]
            for frame in set(frames):
                inclusive[frame] += n
            if frames:
                own[frames[-1]] += n
    out = [f"{total} samples", "", "inclusive:"]
    for frame, n in inclusive.most_common(top):
        out.append(f"  {100 * n / max(total, 1):5.1f}%  {frame}")
    out += ["", "self:"]
    for frame, n in own.most_common(top):
        out.append(f"  {100 * n / max(total, 1):5.1f}%  {frame}")
    return "\n".join(out)


if __name__ == "__main__":
    print(summarise(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25))
