"""A small threaded HTTP server that serves a test site from a table of routes.

Routes map a path (with its query string) to a :class:`Page`. Bodies may contain ``{base}``,
replaced by the server's own origin when it starts, so sitemaps can list absolute URLs.
Every request is recorded, so tests can assert what was (and was not) requested.
"""

from __future__ import annotations

import gzip
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Page:
    status: int = 200
    body: bytes | str = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str | None = "text/html; charset=utf-8"
    gzip_encoding: bool = False
    drop: bool = False
    # Send the body in chunks of this many bytes with a pause between them, the way a body
    # arrives over a real network (on loopback a whole body lands in the socket at once).
    trickle: tuple[int, float] | None = None
    # Seconds to wait before answering at all (before the status line).
    delay: float = 0.0
    # Send the headers and this many bytes of the body, then reset the connection (TCP RST).
    reset_after: int | None = None
    # The Content-Length to announce instead of the body's real length; the connection is
    # closed after the body, so a longer announced length leaves the client short of bytes.
    content_length: int | None = None
    # Send the body with Transfer-Encoding: chunked (no Content-Length: a length unknown
    # until the end, as dynamic pages and compressing servers send it).
    chunked: bool = False


Route = Page | Callable[["TestSite", str], Page]


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up mid-body (a stopped download) is normal here."""


class TestSite:
    """Serve ``routes`` on 127.0.0.1 (a free port) in a background thread."""

    __test__ = False

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self._hits: Counter[str] = Counter()
        self._request_headers: dict[str, dict[str, str]] = {}
        self.log: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                site._record(self.path, {k.lower(): v for k, v in self.headers.items()})
                route = site.routes.get(self.path)
                if route is None:
                    page = Page(status=404, body="not found")
                elif callable(route):
                    page = route(site, self.path)
                else:
                    page = route
                if page.delay:
                    time.sleep(page.delay)
                if page.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                body = page.body.encode() if isinstance(page.body, str) else page.body
                body = body.replace(b"{base}", site.base.encode())
                if page.gzip_encoding:
                    body = gzip.compress(body)
                self.send_response(page.status)
                if page.content_type:
                    self.send_header("Content-Type", page.content_type)
                if page.gzip_encoding:
                    self.send_header("Content-Encoding", "gzip")
                for name, value in page.headers:
                    self.send_header(name, value.replace("{base}", site.base))
                if page.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self._send_chunked(body, page.trickle)
                    return
                length = len(body) if page.content_length is None else page.content_length
                self.send_header("Content-Length", str(length))
                self.end_headers()
                if page.reset_after is not None:
                    self.wfile.write(body[: page.reset_after])
                    self.wfile.flush()
                    self._reset()
                    return
                if page.content_length is not None:
                    self.close_connection = True
                if page.trickle is None:
                    self.wfile.write(body)
                    return
                size, pause = page.trickle
                for start in range(0, len(body), size):
                    self.wfile.write(body[start : start + size])
                    self.wfile.flush()
                    time.sleep(pause)

            def _send_chunked(self, body: bytes, trickle: tuple[int, float] | None) -> None:
                size, pause = trickle or (len(body) or 1, 0.0)
                try:
                    for start in range(0, len(body), size):
                        piece = body[start : start + size]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                        time.sleep(pause)
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # a stopped download
                    self.close_connection = True

            def _reset(self) -> None:
                """Close the connection with a TCP RST instead of an orderly FIN."""
                self.close_connection = True
                linger = struct.pack("ii", 1, 0)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                self.rfile.close()
                self.wfile.close()
                self.connection.close()

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _record(self, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self._hits[path] += 1
            self._request_headers[path] = headers
            self.log.append((time.monotonic(), path))

    # The server's threads record requests while a test reads them: a test gets a copy.
    @property
    def hits(self) -> Counter[str]:
        """Requests per path so far."""
        with self._lock:
            return Counter(self._hits)

    @property
    def request_headers(self) -> dict[str, dict[str, str]]:
        """The headers of the last request of each path (names in lower case)."""
        with self._lock:
            return dict(self._request_headers)

    def __enter__(self) -> TestSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
