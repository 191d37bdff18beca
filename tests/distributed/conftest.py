"""A real Redis for the distributed tests.

``SITEMAPAUDIT_TEST_REDIS_URL`` names a running server (CI starts Debian's redis-server and
sets it); otherwise a private ``redis-server`` is started on a free port for the session.
Without either, the tests are skipped, saying why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ping(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def start_redis(port: int, directory: Path) -> subprocess.Popen[bytes]:
    """A private ``redis-server`` on ``port`` that keeps its data in ``directory`` (an
    append-only file written at once), so that it can be stopped and started again with it."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("this test starts a Redis server of its own: install redis-server")
    directory.mkdir(parents=True, exist_ok=True)
    options = ["--save", "", "--appendonly", "yes", "--appendfsync", "always"]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", *options, "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while not _ping(url):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"redis-server could not be started on port {port}")
        time.sleep(0.05)
    return process


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    configured = os.environ.get("SITEMAPAUDIT_TEST_REDIS_URL")
    if configured:
        if not _ping(configured):
            pytest.fail(f"SITEMAPAUDIT_TEST_REDIS_URL={configured} does not answer")
        yield configured
        return
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "the distributed tests need a Redis server: install Debian's redis-server "
            "(apt-get install redis-server) or set SITEMAPAUDIT_TEST_REDIS_URL"
        )
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _ping(url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"redis-server could not be started on port {port}")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
