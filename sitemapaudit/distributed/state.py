"""The state of one distributed audit in Redis, apart from the URL inventory.

Keys live under ``sitemapaudit:<origin>:<n>``, where ``n`` numbers the audits of an origin:
workers started while audit ``n`` is unfinished join it; the first worker started after it
finished opens ``n + 1``. Everything here is plain redis-py (no Scrapy).
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from sitemapaudit.errors import ConfigError

# Join the unfinished audit of an origin, or open the next one, keeping what it audits.
# KEYS[1]: the origin's base key. ARGV[1]: what the audit audits (see ``audit_identity``).
_JOIN = """
local base = KEYS[1]
local current = redis.call('GET', base .. ':current')
if current and redis.call('EXISTS', base .. ':' .. current .. ':finished') == 0 then
  return {current, 0}
end
local n = redis.call('INCR', base .. ':seq')
redis.call('SET', base .. ':current', n)
redis.call('SET', base .. ':' .. n .. ':audit', ARGV[1])
return {tostring(n), 1}
"""

# Keep a lock only if this worker holds it. KEYS[1]: lock; ARGV: owner, milliseconds.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# A worker leaves: its heartbeat goes, and the report is free to write if it held it.
# KEYS: its heartbeat, the workers set, the writer lock. ARGV: the worker.
_LEAVE = """
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[1] then
  redis.call('DEL', KEYS[3])
end
return 1
"""

# A worker starts its part of the audit: the audit's first start, and its resumes. The worker is
# live at once (a heartbeat), so that of two workers started together one sees the other. It
# resumes the audit when the audit had started before and no other worker is live: every one
# stopped (or died more than a worker timeout ago).
# KEYS: started_at, resumed_at, the workers set. ARGV: now, the worker, the heartbeat key
# prefix, the heartbeat's milliseconds. Returns {the first start, the resumes}.
_START = """
local first = redis.call('GET', KEYS[1])
if not first then
  redis.call('SET', KEYS[1], ARGV[1])
  first = ARGV[1]
else
  local live = false
  for _, worker in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    if worker ~= ARGV[2] and redis.call('EXISTS', ARGV[3] .. worker) == 1 then
      live = true
      break
    end
  end
  if not live then
    redis.call('RPUSH', KEYS[2], ARGV[1])
  end
end
redis.call('SET', ARGV[3] .. ARGV[2], 'busy', 'PX', ARGV[4])
return {first, redis.call('LRANGE', KEYS[2], 0, -1)}
"""

# Keep the sitemaps the homepage named until robots.txt is read; 0 if it is read already.
# KEYS: flags, held list. ARGV: the encoded (url, via) pairs.
_HOLD = """
if redis.call('HEXISTS', KEYS[1], 'robots_done') == 1 then
  return 0
end
for i = 1, #ARGV do
  redis.call('RPUSH', KEYS[2], ARGV[i])
end
return 1
"""


_RUN_ID_RE = re.compile(r"^run_id:(\w+)", re.MULTILINE)


class _SameServer:
    """A check on every connection the client opens: that the server is the one it first
    reached. redis-py opens a new connection when the server closed the last one, and a
    server restarted meanwhile (its state gone, or an older copy of it) would otherwise be
    used as if nothing had happened; this makes that a connection error (see
    :func:`unreachable`)."""

    def __init__(self) -> None:
        self.run_id: str | None = None

    def __call__(self, connection: Any) -> None:
        connection.on_connect()
        connection.send_command("INFO", "server")
        info = connection.read_response()
        text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
        found = _RUN_ID_RE.search(text)
        run_id = found.group(1) if found else ""
        if self.run_id is None:
            self.run_id = run_id
        elif run_id != self.run_id:
            connection.disconnect()
            raise redis.ConnectionError(
                "Redis restarted since this worker joined the audit: its state there is gone "
                "or older"
            )


def connect(url: str) -> redis.Redis:
    """A client for ``SITEMAPAUDIT_DISTRIBUTED``; an unreachable server fails at start. A
    connection to the server after a restart fails (see :class:`_SameServer`)."""
    try:
        # No retry on a broken connection either: it would hide the failure.
        client = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_timeout=30,
            socket_connect_timeout=10,
            retry=Retry(NoBackoff(), 0),
            redis_connect_func=_SameServer(),
        )
        client.ping()
    except (redis.RedisError, ValueError) as exc:
        raise ConfigError(f"SITEMAPAUDIT_DISTRIBUTED: cannot use Redis at {url!r}: {exc}") from exc
    return client


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says Redis cannot be reached: down, restarting, still loading its data
    (a subclass), or too slow to answer. Other errors of Redis (a refused command) are not."""
    return isinstance(exc, (redis.ConnectionError, redis.TimeoutError))


def audit_identity(
    origin: str, sitemaps: list[str], fetch_urls: bool, settings: dict[str, Any]
) -> str:
    """What a distributed audit audits, kept when it is opened: a worker joins only the audit
    of the same sitemap arguments, ``fetch_urls`` and settings that shape the report."""
    return json.dumps(
        {
            "origin": origin,
            "sitemaps": sorted(sitemaps),
            "fetch_urls": fetch_urls,
            "settings": {k: v for k, v in settings.items() if k != "fetch_urls"},
        },
        sort_keys=True,
    )


def check_joinable(client: redis.Redis, origin: str, identity: str) -> None:
    """Raise :class:`ConfigError` when the unfinished audit of ``origin`` that a worker would
    join audits something else than ``identity``, naming both."""
    base = f"sitemapaudit:{origin}"
    current = cast(str | None, client.get(f"{base}:current"))
    if current is None or client.exists(f"{base}:{current}:finished"):
        return
    stored = cast(str | None, client.get(f"{base}:{current}:audit"))
    if stored is None or stored == identity:
        return
    theirs, mine = json.loads(stored), json.loads(identity)
    differences = [
        f"{name} {_shown(theirs, name)} there, {_shown(mine, name)} here"
        for name in ("sitemaps", "fetch_urls")
        if theirs.get(name) != mine.get(name)
    ]
    theirs_settings, mine_settings = theirs.get("settings", {}), mine.get("settings", {})
    differences += [
        f"{name} {theirs_settings.get(name)!r} there, {mine_settings.get(name)!r} here"
        for name in sorted({*theirs_settings, *mine_settings})
        if theirs_settings.get(name) != mine_settings.get(name)
    ]
    raise ConfigError(
        f"the unfinished distributed audit {base}:{current} audits something else than this "
        f"worker would ({'; '.join(differences)}): start the worker with the same arguments "
        "and settings as the others, or drop that audit (README, Distributed audits)"
    )


def _shown(identity: dict[str, Any], name: str) -> str:
    value = identity.get(name)
    if name == "sitemaps":
        return ", ".join(value or []) or "(discovered sitemaps)"
    return "yes" if value else "no"


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True, slots=True)
class ClusterView:
    """What the cluster is doing, as seen by one worker's sweep check."""

    live: dict[str, str]
    gone: list[str]
    queued_requests: int
    new_urls: int
    progress: int

    @property
    def quiet(self) -> bool:
        """No live worker holds work and nothing is queued."""
        return (
            all(state == "idle" for state in self.live.values())
            and self.queued_requests == 0
            and self.new_urls == 0
        )


class SharedAudit:
    """One distributed audit: its keys and every shared fact other than the inventory."""

    def __init__(
        self, client: redis.Redis, origin: str, worker: str | None = None, identity: str = ""
    ) -> None:
        self.client = client
        self.base = f"sitemapaudit:{origin}"
        number, created = cast(list[Any], client.eval(_JOIN, 1, self.base, identity))
        self.number = int(number)
        self.created = bool(int(created))
        self.prefix = f"{self.base}:{self.number}"
        self.worker = worker or worker_name()
        self._renew = client.register_script(_RENEW)
        self._hold = client.register_script(_HOLD)
        self._leave = client.register_script(_LEAVE)
        self._start = client.register_script(_START)
        # Once the worker left, its heartbeat thread sends no more beats (one could otherwise
        # bring it back as live, holding work, until the worker timeout).
        self._left = False
        self._beat_lock = threading.Lock()
        client.sadd(self.key("workers"), self.worker)

    def key(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    # -- discovery ------------------------------------------------------------------------------
    def claim(self, name: str) -> bool:
        """Whether this worker is the first to claim ``name`` (discovery, common paths...)."""
        return bool(self.client.hsetnx(self.key("claims"), name, self.worker))

    def release(self, name: str) -> None:
        self.client.hdel(self.key("claims"), name)

    def flag(self, name: str) -> None:
        self.client.hset(self.key("flags"), name, "1")

    def flags(self) -> dict[str, str]:
        return cast(dict[str, str], self.client.hgetall(self.key("flags")))

    def set_value(self, name: str, value: str) -> None:
        """A word on the audit that any worker may need (``value`` reads it)."""
        self.client.hset(self.key("values"), name, value)

    def value(self, name: str) -> str | None:
        return cast(str | None, self.client.hget(self.key("values"), name))

    def add_found(self, count: int) -> None:
        if count:
            self.client.hincrby(self.key("flags"), "found", count)

    def hold_homepage_sitemaps(self, found: list[tuple[str, str]]) -> bool:
        """Keep the sitemaps the homepage named until robots.txt is read (``True``), or
        ``False`` when it is read already (any worker's): the caller registers them now. With
        ``take_held_sitemaps`` after the ``robots_done`` flag, none is registered twice or
        lost, whichever worker reads which answer first."""
        if not found:
            return False
        keys = [self.key("flags"), self.key("homepage_held")]
        return bool(self._hold(keys=keys, args=[json.dumps(list(pair)) for pair in found]))

    def take_held_sitemaps(self) -> list[tuple[str, str]]:
        """The sitemaps the homepage named before robots.txt was read (once: they are gone)."""
        pipe = self.client.pipeline()
        pipe.lrange(self.key("homepage_held"), 0, -1)
        pipe.delete(self.key("homepage_held"))
        held, _ = pipe.execute()
        return [(str(url), str(via)) for url, via in map(json.loads, held)]

    def store_robots(self, status: int | None, body: bytes, url: str) -> None:
        data = {"status": status, "body": base64.b64encode(body).decode(), "url": url}
        self.client.set(self.key("robots"), json.dumps(data))

    def robots(self) -> tuple[int | None, bytes, str] | None:
        raw = self.client.get(self.key("robots"))
        if raw is None:
            return None
        data = json.loads(cast(str, raw))
        return data["status"], base64.b64decode(data["body"]), str(data["url"])

    def add_note(self, note: str) -> None:
        self.client.sadd(self.key("notes"), note)

    def notes(self) -> list[str]:
        return sorted(cast(set[str], self.client.smembers(self.key("notes"))))

    # -- the sitemap tree -----------------------------------------------------------------------
    def seen_by(self, key: str) -> str | None:
        """Who registered a sitemap URL first (``""`` for discovery), ``None`` if nobody."""
        return cast(str | None, self.client.hget(self.key("seen"), key))

    def uncount_scheduled(self) -> None:
        self.client.decr(self.key("scheduled"))

    def register_sitemap(self, key: str, parent: str | None) -> str | None:
        """Register a sitemap URL (normalized) as seen; ``None`` if new, else who saw it first."""
        marker = parent or ""
        if self.client.hsetnx(self.key("seen"), key, marker):
            return None
        return cast(str | None, self.client.hget(self.key("seen"), key))

    def add_cycle(self, index: str, child: str) -> None:
        """``index`` (normalized) lists ``child``, which redirects back to it or above it."""
        self.client.rpush(self.key("cycles"), json.dumps([index, child]))

    def cycles(self) -> dict[str, list[str]]:
        """The children of each index (normalized) that redirect back to it or above it."""
        found: dict[str, list[str]] = {}
        for item in cast(list[str], self.client.lrange(self.key("cycles"), 0, -1)):
            index, child = json.loads(item)
            found.setdefault(index, []).append(child)
        return found

    def count_scheduled(self, limit: int) -> bool:
        """Count one more sitemap against the cap; ``False`` (and not counted) past it."""
        if int(self.client.incr(self.key("scheduled"))) <= limit:
            return True
        self.client.decr(self.key("scheduled"))
        return False

    def sitemaps_seen(self) -> int:
        return int(self.client.hlen(self.key("seen")))

    # -- hreflang alternates, replayed by the worker that writes the report --------------------
    def add_alternates(self, rows: list[str]) -> None:
        if rows:
            self.client.rpush(self.key("hreflang"), *rows)

    def alternates(self, chunk: int = 5000) -> Iterator[tuple[str, list[tuple[str, str]], str]]:
        start = 0
        while True:
            rows = cast(
                list[str], self.client.lrange(self.key("hreflang"), start, start + chunk - 1)
            )
            for row in rows:
                loc, alternates, sitemap = json.loads(row)
                yield loc, [(a[0], a[1]) for a in alternates], sitemap
            if len(rows) < chunk:
                return
            start += chunk

    # -- workers --------------------------------------------------------------------------------
    def heartbeat(self, state: str, ttl: float) -> None:
        with self._beat_lock:
            if self._left:
                return
            pipe = self.client.pipeline(transaction=False)
            pipe.set(self.key(f"worker:{self.worker}"), state, px=int(ttl * 1000))
            pipe.sadd(self.key("workers"), self.worker)
            # Left behind by a late heartbeat after the audit's keys were removed: gone in a day.
            pipe.expire(self.key("workers"), 86_400)
            pipe.execute()

    def leave(self) -> None:
        """This worker stops: it is no longer live (nor gone), and the report, if it was
        writing it, is free for another worker to write at once."""
        with self._beat_lock:
            self._left = True
            keys = [self.key(f"worker:{self.worker}"), self.key("workers"), self.key("writer")]
            self._leave(keys=keys, args=[self.worker])

    def view(self, queue_key: str) -> ClusterView:
        workers = sorted(cast(set[str], self.client.smembers(self.key("workers"))))
        pipe = self.client.pipeline(transaction=False)
        for worker in workers:
            pipe.get(self.key(f"worker:{worker}"))
        pipe.zcard(queue_key)
        pipe.llen(self.key("new"))
        pipe.get(self.key("progress"))
        *states, queued, new, progress = pipe.execute()
        live = {w: s for w, s in zip(workers, states, strict=True) if s is not None}
        gone = [w for w, s in zip(workers, states, strict=True) if s is None]
        return ClusterView(live, gone, int(queued), int(new), int(progress or 0))

    def forget(self, workers: Iterable[str]) -> None:
        names = list(workers)
        if names:
            self.client.srem(self.key("workers"), *names)

    def bump(self) -> None:
        """Something moved (the sweep waits for the cluster to stand still)."""
        self.client.incr(self.key("progress"))

    # -- locks: the sweep, and the worker that writes the report --------------------------------
    def lock(self, name: str, ttl: float) -> bool:
        return bool(self.client.set(self.key(name), self.worker, nx=True, px=int(ttl * 1000)))

    def renew(self, name: str, ttl: float) -> bool:
        return bool(self._renew(keys=[self.key(name)], args=[self.worker, int(ttl * 1000)]))

    def start(self, now: str, ttl: float) -> tuple[str | None, list[str]]:
        """This worker starts at ``now`` (UTC, as the summary; live from now on for ``ttl``
        seconds, until its heartbeat): when the audit's first worker started (``None`` when
        that is ``now``: this worker is the first), and each time a worker started the audit
        again after every worker had stopped, this one included if it does."""
        keys = [self.key("started_at"), self.key("resumed_at"), self.key("workers")]
        args: list[str | int] = [now, self.worker, self.key("worker:"), int(ttl * 1000)]
        first, resumes = cast(list[Any], self._start(keys=keys, args=args))
        return (None if first == now else str(first)), [str(r) for r in resumes]

    def finished(self) -> bool:
        return bool(self.client.exists(self.key("finished")))

    def finish(self) -> None:
        """Mark the audit finished and drop its data (the flag itself expires after a day)."""
        self.client.set(self.key("finished"), self.worker, ex=86_400)
        keep = {self.key("finished")}
        batch: list[str] = []
        for key in self.client.scan_iter(match=f"{_glob_escape(self.prefix)}:*", count=1000):
            if key not in keep:
                batch.append(cast(str, key))
            if len(batch) >= 500:
                self.client.unlink(*batch)
                batch = []
        if batch:
            self.client.unlink(*batch)


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
