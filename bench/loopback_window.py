"""Why target 4 cannot be met on loopback: what nginx sends when a client stops after the head.

    python3 bench/loopback_window.py [--pages 20]

Serves large pages of the benchmark (200 KB, 5 KB head) from the bench's nginx on 127.0.0.1 and
fetches each with a plain socket that reads only until ``</head>`` and then closes, as a
head-only download does, once with the kernel's default receive buffer and once with each
smaller ``SO_RCVBUF`` (set before ``connect``, so the advertised window is clamped from the
SYN on). It prints the bytes the client read and the bytes nginx logged as sent
(``$bytes_sent``), as shares of the page. Standard library only.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nginx import Nginx, Server, free_port
from sitegen import write_page_site

BUFFERS = (0, 65536, 16384, 4096)
"""0: the kernel's default (autotuned) receive buffer."""


def head_only(port: int, path: str, rcvbuf: int) -> int:
    """GET ``path``, read until ``</head>``, close; returns the bytes read."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    seen = b""
    while b"</head>" not in seen:
        chunk = sock.recv(16384)
        if not chunk:
            break
        seen += chunk
    sock.close()
    return len(seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path(__file__).resolve().parent) as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # nginx's worker reads the pages as another user
        port = free_port()
        site = write_page_site(work / "large", f"http://127.0.0.1:{port}", args.pages, "large")
        server = Server("large", site.root, port)
        nginx = Nginx(work / "nginx", [server])
        nginx.start()
        try:
            paths = [
                url.removeprefix(site.origin)
                for url in site.urls_file.read_text().split()  # type: ignore[union-attr]
            ]
            print(f"{args.pages} pages of {site.page_bytes:,} bytes, head {site.head_bytes:,}")
            print("| SO_RCVBUF | client read / page | nginx sent / page |")
            print("|---|---|---|")
            for rcvbuf in BUFFERS:
                offset = nginx.log_offset("large")
                read = sum(head_only(port, path, rcvbuf) for path in paths)
                time.sleep(0.5)  # nginx logs a request once its connection is done
                entries = [e for e in nginx.read_log("large", offset) if e.uri in paths]
                sent = sum(e.bytes_sent for e in entries)
                whole = site.page_bytes * len(paths)
                label = "default" if rcvbuf == 0 else f"{rcvbuf:,}"
                print(
                    f"| {label} | {read / whole:.3f} | {sent / whole:.3f} ({len(entries)} logged) |"
                )
        finally:
            nginx.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
