"""The URL inventory of a distributed audit, in Redis: the shared counterpart of
:class:`sitemapaudit.inventory.Inventory`.

Keys (under the audit's prefix):

- ``ids`` url -> id, ``urls`` id -> ``[url, lastmod, lastmod_format, rules(, order)]`` (the greatest
  lastmod of its listings, the rules any of them broke, as in the local inventory), ``new``:
  ids not handed out yet;
- ``listings`` id -> ``{sitemap id: [read, count]}``. Each read of a sitemap has its own
  number (``reads``), and only counts of a sitemap's last finished read are believed: a
  sitemap read again after its reader died is not counted twice;
- ``sitemaps`` / ``sitemap_urls``: sitemap url <-> id; ``pending`` the sitemaps still to read,
  ``refs`` how to request them, ``facts`` the finished ones;
- ``outcomes`` id -> what became of the URL; ``retry``: ids queued again after a worker left.

Each worker also knows the URLs it holds: taken from ``new``, or whose page request it took
from the shared queue, and whose outcome it has not sent. A worker that stops hands them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast

import redis

from sitemapaudit.facts import NOT_REQUESTED_JSON
from sitemapaudit.inventory import Inventory, Listing, NewEntry, lastmod_order

# KEYS: ids, urls, listings, new, seq. ARGV: sitemap id, read number, then (url, meta) pairs.
_ADD = """
local sid, read = ARGV[1], ARGV[2]
local added = 0
for i = 3, #ARGV, 2 do
  local url = ARGV[i]
  local id = redis.call('HGET', KEYS[1], url)
  if not id then
    id = tostring(redis.call('INCR', KEYS[5]))
    redis.call('HSET', KEYS[1], url, id)
    redis.call('HSET', KEYS[2], id, ARGV[i + 1])
    redis.call('RPUSH', KEYS[4], id)
    added = added + 1
  else
    -- Listed again: the greatest lastmod of the listings (a non-empty one over none), the
    -- same whatever order the sitemaps are read in (as in the local inventory).
    -- And the rules any of its listings broke (out_of_scope depends on the sitemap).
    local new = cjson.decode(ARGV[i + 1])
    local old = cjson.decode(redis.call('HGET', KEYS[2], id))
    local changed = false
    -- (Compared by their order keys: the 5th field where there is one, see lastmod_order.)
    local newer = new[2] ~= cjson.null
    if newer and old[2] ~= cjson.null then newer = (old[5] or old[2]) < (new[5] or new[2]) end
    if newer then
      old[2], old[3], old[5] = new[2], new[3], new[5]
      changed = true
    end
    for _, rule in ipairs(new[4]) do
      local known = false
      for _, had in ipairs(old[4]) do
        if had == rule then known = true end
      end
      if not known then
        table.insert(old[4], rule)
        changed = true
      end
    end
    if changed then
      redis.call('HSET', KEYS[2], id, cjson.encode(old))
    end
  end
  local raw = redis.call('HGET', KEYS[3], id)
  local listed = {}
  if raw then listed = cjson.decode(raw) end
  local entry = listed[sid]
  if entry and entry[1] == read then
    entry[2] = entry[2] + 1
  else
    listed[sid] = {read, 1}
  end
  redis.call('HSET', KEYS[3], id, cjson.encode(listed))
end
return added
"""

# Hand back the URLs a stopping worker held, those still without an outcome, to be requested
# again; nothing once the audit is finished (its keys are gone).
# KEYS: outcomes, retry, new, finished. ARGV: the ids.
_RELEASE = """
if redis.call('EXISTS', KEYS[4]) == 1 then
  return 0
end
local released = 0
for i = 1, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    redis.call('SADD', KEYS[2], ARGV[i])
    redis.call('RPUSH', KEYS[3], ARGV[i])
    released = released + 1
  end
end
return released
"""

# The stored outcome of a URL settled without a request, as written by ``finish_many``, and
# the one object it is read back as (records are built faster from that very object).
_NOT_REQUESTED = {
    json.dumps(stored): stored
    for stored in (
        {"blocked": False, "outcome": NOT_REQUESTED_JSON},
        {"blocked": True, "outcome": NOT_REQUESTED_JSON},
    )
}


class SharedInventory:
    """Sitemaps, listings and per-URL outcomes of one distributed audit."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._add = client.register_script(_ADD)
        self._release = client.register_script(_RELEASE)
        self._reads: dict[str, str] = {}
        self.retries: set[int] = set()
        # The URLs this worker holds (see the module docstring).
        self.held: set[int] = set()
        # hreflang notes, gathered by the worker that writes the report.
        self.notes: Inventory | None = None

    def key(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    def close(self) -> None:
        self.client.close()

    # -- listings ------------------------------------------------------------------------------
    def finished(self) -> bool:
        """A shared audit keeps its state in Redis, not in a work directory: there is no
        finished work directory to start afresh from."""
        return False

    def mark_finished(self) -> None:
        return None

    def sitemap_id(self, url: str) -> int:
        found = self.client.hget(self.key("sitemaps"), url)
        if found is None:
            candidate = int(self.client.incr(self.key("sitemap_seq")))
            if self.client.hsetnx(self.key("sitemaps"), url, candidate):
                self.client.hset(self.key("sitemap_urls"), str(candidate), url)
                return candidate
            found = self.client.hget(self.key("sitemaps"), url)
        return int(cast(str, found))

    def sitemap_reading(self, url: str) -> None:
        """A sitemap is about to be read: its listings from now on count, earlier ones not."""
        read = self.client.hincrby(self.key("reads"), url, 1)
        self._reads[url] = str(read)

    def add_entries(self, sitemap_url: str, entries: Iterable[NewEntry], batch: int = 1000) -> int:
        sid = str(self.sitemap_id(sitemap_url))
        read = self._reads.get(sitemap_url) or "1"
        keys = [self.key(k) for k in ("ids", "urls", "listings", "new", "url_seq")]
        count = 0
        args: list[str] = [sid, read]
        for entry in entries:
            args.append(entry.loc)
            meta = [entry.loc, entry.lastmod, entry.lastmod_format, entry.rules]
            if entry.lastmod is not None:
                order = lastmod_order(entry.lastmod, entry.lastmod_format)
                if order != entry.lastmod:  # (an RSS pubDate: kept only where it differs)
                    meta.append(order)
            args.append(json.dumps(meta))
            count += 1
            if len(args) >= 2 + 2 * batch:
                self._add(keys=keys, args=args)
                args = [sid, read]
        if len(args) > 2:
            self._add(keys=keys, args=args)
        return count

    # -- sitemaps ------------------------------------------------------------------------------
    def sitemap_pending(self, url: str, ref: dict[str, Any]) -> None:
        pipe = self.client.pipeline()
        pipe.hset(self.key("refs"), url, json.dumps(ref))
        pipe.sadd(self.key("pending"), url)
        pipe.execute()

    def sitemap_done(self, url: str, facts: dict[str, Any]) -> None:
        pipe = self.client.pipeline()
        pipe.hset(self.key("facts"), url, json.dumps(facts))
        pipe.hset(self.key("final_reads"), url, self._reads.get(url, "0"))
        pipe.srem(self.key("pending"), url)
        pipe.incr(self.key("progress"))
        pipe.execute()

    def pending_count(self) -> int:
        return int(self.client.scard(self.key("pending")))

    def sitemaps_done(self) -> int:
        return int(self.client.hlen(self.key("facts")))

    def is_settled(self, url: str) -> bool:
        """Whether a sitemap is pending or done (known to the audit either way)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.sismember(self.key("pending"), url)
        pipe.hexists(self.key("facts"), url)
        pending, done = pipe.execute()
        return bool(pending) or bool(done)

    def pending_sitemaps(self) -> list[dict[str, Any]]:
        urls = sorted(cast(set[str], self.client.smembers(self.key("pending"))))
        if not urls:
            return []
        refs = cast(list[str | None], self.client.hmget(self.key("refs"), urls))
        return [json.loads(ref) for ref in refs if ref is not None]

    def done_sitemaps(self) -> Iterator[dict[str, Any]]:
        facts = cast(dict[str, str], self.client.hgetall(self.key("facts")))
        ids = cast(dict[str, str], self.client.hgetall(self.key("sitemaps")))
        for url in sorted(facts, key=lambda u: (int(ids.get(u, 1 << 62)), u)):
            yield json.loads(facts[url])

    def sitemap_urls(self) -> list[str]:
        """Sitemaps of an interrupted local audit: a shared audit is never resumed that way."""
        return []

    def sitemap_redirected(self, target: str, source: str, parent: str | None) -> None:
        """Nothing to keep: the cluster's sitemap tree knows the redirects it followed."""

    def sitemap_redirects(self) -> list[tuple[str, str, str | None]]:
        """Redirects of an interrupted local audit: a shared audit is never resumed that way."""
        return []

    def set_identity(self, identity: str) -> None:
        """Nothing to keep: a shared audit's keys are those of its origin already."""

    def record_start(self, started_at: str) -> None:
        """Nothing to keep: a shared audit is never resumed from a work directory."""

    def listings_complete(self) -> None:
        """Nothing to index: the listings of each URL are kept together."""

    # -- handing URLs out ------------------------------------------------------------------------
    def take_new(self, limit: int) -> list[tuple[int, str, tuple[str, ...], str | None]]:
        popped = cast(list[str] | None, self.client.lpop(self.key("new"), limit))
        if not popped:
            return []
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(self.key("urls"), popped)
        pipe.smismember(self.key("retry"), popped)
        pipe.incr(self.key("progress"))
        metas, retried, _ = pipe.execute()
        result = []
        for raw_id, meta, again in zip(popped, metas, retried, strict=True):
            url, lastmod, _fmt, rules = json.loads(meta)[:4]
            if again:
                self.retries.add(int(raw_id))
            self.held.add(int(raw_id))
            result.append((int(raw_id), str(url), tuple(rules), lastmod))
        return result

    def has_new(self) -> bool:
        return bool(self.client.llen(self.key("new")))

    def has_done(self) -> bool:
        return False

    def finish(self, url_id: int, outcome: dict[str, Any] | None) -> None:
        self.finish_many([(url_id, outcome)])

    def finish_many(self, items: Sequence[tuple[int, dict[str, Any] | None]]) -> None:
        """Record the outcomes of URLs in one round trip (the URLs settled without a request
        come by the thousand in an inventory: one round trip each took most of its time)."""
        if not items:
            return
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(
            self.key("outcomes"),
            mapping={str(url_id): json.dumps(outcome) for url_id, outcome in items},
        )
        pipe.incr(self.key("progress"))
        pipe.execute()
        for url_id, _ in items:
            self.retries.discard(url_id)
            self.held.discard(url_id)

    def release(self, chunk: int = 1000) -> int:
        """Hand back the URLs this worker holds (it stops): those without an outcome are
        handed out again, marked to be requested again. How many were."""
        held = sorted(self.held)
        keys = [self.key(k) for k in ("outcomes", "retry", "new", "finished")]
        released = 0
        for start in range(0, len(held), chunk):
            args = [str(url_id) for url_id in held[start : start + chunk]]
            released += int(cast(int, self._release(keys=keys, args=args)))
        self.held.clear()
        return released

    def url_count(self) -> int:
        return int(cast(str | None, self.client.get(self.key("url_seq"))) or 0)

    def outcome_count(self) -> int:
        return int(self.client.hlen(self.key("outcomes")))

    def without_outcome(self, chunk: int = 5000) -> Iterator[int]:
        """Ids that were handed out but have no outcome (their worker left)."""
        total = self.url_count()
        for start in range(1, total + 1, chunk):
            ids = [str(i) for i in range(start, min(start + chunk, total + 1))]
            for raw_id, found in zip(
                ids, self.client.hmget(self.key("outcomes"), ids), strict=True
            ):
                if found is None:
                    yield int(raw_id)

    def requeue(self, url_ids: Sequence[int]) -> None:
        """Hand these ids out again (their earlier requests are lost with a gone worker)."""
        if url_ids:
            values = [str(i) for i in url_ids]
            pipe = self.client.pipeline()
            pipe.sadd(self.key("retry"), *values)
            pipe.rpush(self.key("new"), *values)
            pipe.execute()

    def outcomes(self, url_ids: Sequence[int]) -> list[dict[str, Any] | None]:
        raw = cast(
            list[str | None], self.client.hmget(self.key("outcomes"), [str(i) for i in url_ids])
        )
        known = _NOT_REQUESTED
        return [None if value is None else known.get(value) or json.loads(value) for value in raw]

    # -- what the sitemaps say -------------------------------------------------------------------
    def listings(self, url_ids: Sequence[int]) -> list[Listing]:
        if not url_ids:
            return []
        keys = [str(i) for i in url_ids]
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(self.key("urls"), keys)
        pipe.hmget(self.key("listings"), keys)
        metas, listed = pipe.execute()
        decoded = [json.loads(raw) if raw else {} for raw in listed]
        sids = sorted({sid for entry in decoded for sid in entry})
        names = dict(zip(sids, self.client.hmget(self.key("sitemap_urls"), sids), strict=True))
        urls = [names[sid] for sid in sids]
        finals = dict(zip(sids, self.client.hmget(self.key("final_reads"), urls), strict=True))
        result = []
        for url_id, meta, entry in zip(url_ids, metas, decoded, strict=True):
            url, lastmod, fmt, rules = json.loads(meta)[:4]
            counted = sorted(
                (str(names[sid]), int(count))
                for sid, (read, count) in entry.items()
                if finals[sid] in (None, read)
            )
            result.append(
                Listing(
                    url_id=url_id,
                    url=str(url),
                    lastmod=lastmod,
                    lastmod_format=str(fmt),
                    rules=tuple(rules),
                    sitemaps=tuple(s for s, _ in counted),
                    times_listed=sum(c for _, c in counted),
                )
            )
        return result

    def mark_emitted(self, items: Sequence[tuple[int, dict[str, Any] | None]]) -> None:
        """Records are built once, by the worker that writes the report: nothing to mark."""

    def url_notes(self, url: str) -> list[str]:
        return self.notes.url_notes(url) if self.notes is not None else []

    def counts(self) -> dict[str, int]:
        pipe = self.client.pipeline(transaction=False)
        pipe.get(self.key("url_seq"))
        pipe.llen(self.key("new"))
        pipe.hlen(self.key("outcomes"))
        total, new, done = pipe.execute()
        return {"urls": int(total or 0), "new": int(new), "done": int(done), "emitted": 0}
