"""Headless Chromium for the HTML report tests: ``--dump-dom`` and a small DevTools client.

The DevTools client speaks just enough of the WebSocket protocol (RFC 6455: client handshake,
masked text frames, fragmented and control frames) to send DevTools commands to one page and
read their results. Chromium runs with networking features off and a fresh profile.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = Path("/usr/bin/chromium")

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
)


def available() -> bool:
    return CHROMIUM.exists()


def dump_dom(page: Path, profile: Path, *, timeout: float = 60) -> str:
    """The DOM of ``page`` after its scripts ran, serialised by Chromium."""
    result = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return result.stdout


class WebSocket:
    """A blocking WebSocket client for one ``ws://`` URL."""

    def __init__(self, url: str, *, timeout: float = 30) -> None:
        parts = urlsplit(url)
        assert parts.scheme == "ws"
        assert parts.hostname
        assert parts.port
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        self.reader = self.sock.makefile("rb")
        key = base64.b64encode(os.urandom(16)).decode("ascii")
        request = (
            f"GET {parts.path or '/'} HTTP/1.1\r\n"
            f"Host: {parts.hostname}:{parts.port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode("ascii"))
        status = self.reader.readline()
        if b" 101 " not in status:
            raise ConnectionError(f"WebSocket handshake refused: {status!r}")
        while self.reader.readline() not in (b"\r\n", b""):
            pass

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        size = len(payload)
        if size < 126:
            header += bytes([0x80 | size])
        elif size < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", size)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", size)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._send_frame(0x1, text.encode("utf-8"))

    def _read(self, size: int) -> bytes:
        data = self.reader.read(size)
        if len(data) != size:
            raise ConnectionError("WebSocket closed")
        return data

    def recv(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            fin, opcode = first & 0x80, first & 0x0F
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", self._read(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if second & 0x80 else b""
            payload = self._read(size)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise ConnectionError("WebSocket closed by the browser")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if fin:
                return message.decode("utf-8")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._send_frame(0x8, b"")
        self.reader.close()
        self.sock.close()


class Page:
    """One browser tab driven through the DevTools protocol."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 15) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(expression)
            time.sleep(0.05)

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def type_text(self, selector: str, text: str) -> None:
        """Focuses the element and types ``text`` into it as a user would."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)


class Browser:
    """A headless Chromium with remote debugging on a free local port, and its first tab."""

    def __init__(self, profile: Path, *, timeout: float = 30) -> None:
        self.profile = profile
        profile.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                str(CHROMIUM),
                *FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port = self._port(timeout)
            targets = json.loads(
                urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout).read()
            )
            url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
            self.page = Page(WebSocket(url, timeout=timeout))
        except BaseException:
            self.close()
            raise

    def _port(self, timeout: float) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            if marker.exists():
                lines = marker.read_text().splitlines()
                if lines and lines[0].isdigit():
                    return int(lines[0])
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port")

    def close(self) -> None:
        page = getattr(self, "page", None)
        if page is not None:
            page.ws.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
