"""Without SITEMAPAUDIT_DISTRIBUTED the Redis components stay out of the way, silently."""

from __future__ import annotations

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from sitemapaudit.distributed.worker import DistributedWorker


@pytest.mark.parametrize("component", [DistributedWorker])
def test_redis_components_are_off_without_a_message(component: type) -> None:
    with pytest.raises(NotConfigured) as raised:
        component.from_crawler(get_crawler(settings_dict={}))
    # Scrapy logs a warning for a NotConfigured that carries a message.
    assert raised.value.args == ()
