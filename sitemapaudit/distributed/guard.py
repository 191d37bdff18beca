"""A worker's request callbacks guarded against the loss of Redis."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from sitemapaudit.distributed.run import SharedAuditRun

_Callback = TypeVar("_Callback", bound=Callable[..., Any])


class _Spider(Protocol):
    @property
    def shared(self) -> SharedAuditRun | None: ...

    def redis_lost(self, exc: BaseException) -> bool: ...


def until_redis_lost(callback: _Callback) -> _Callback:
    """A request callback or errback of the spider. In a distributed audit, its Redis lost
    while it runs stops the worker (see ``AuditSpider.redis_lost``) instead of being a
    spider error, and once Redis is lost it does nothing: a response that still arrives is
    not read (nor is a request failed for it, by the cluster's pace, taken for the site's
    failure), and its URL is requested again by the workers that go on with the audit."""

    @functools.wraps(callback)
    def guarded(self: _Spider, result: Any) -> Any:
        shared = self.shared
        if shared is None:
            return callback(self, result)
        if shared.lost is not None:
            return []
        try:
            # (All of it now: a generator's Redis errors would come after this returned.)
            return list(callback(self, result))
        except Exception as exc:
            if not self.redis_lost(exc):
                raise
            return []

    return cast(_Callback, guarded)
