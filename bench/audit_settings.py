"""Print, as JSON, the Scrapy settings the audit spider runs with, in Scrapy's order: project
settings, ``-s NAME=VALUE`` overrides from argv, then the spider's own update_settings. Left
out: what only makes sense for the audit itself (its pipelines, feeds, spider modules,
SITEMAPAUDIT_* and components from the sitemapaudit package). Run with cwd = the project."""

from __future__ import annotations

import json
import sys
from typing import Any

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.misc import load_object
from scrapy.utils.project import get_project_settings

DROP = {
    "BOT_NAME",
    "SPIDER_MODULES",
    "NEWSPIDER_MODULE",
    "COMMANDS_MODULE",
    "FEEDS",
    "ITEM_PIPELINES",
    "SPIDER_LOADER_CLASS",
    "SPIDER_LOADER_WARN_ONLY",
}
COMPONENT_DICTS = {
    "DOWNLOADER_MIDDLEWARES",
    "SPIDER_MIDDLEWARES",
    "EXTENSIONS",
    "DOWNLOAD_HANDLERS",
    "ADDONS",
    "ITEM_PIPELINES",
    "FEED_STORAGES",
    "FEED_EXPORTERS",
}


def _path(value: Any) -> Any:
    if isinstance(value, type) or callable(value):
        return f"{value.__module__}.{value.__qualname__}"
    return value


def _plain(value: Any) -> Any:
    if hasattr(value, "copy_to_dict"):
        return {str(_path(k)): _plain(v) for k, v in value.copy_to_dict().items()}
    if isinstance(value, dict):
        return {str(_path(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return _path(value)


def _replaced(components: dict[str, Any]) -> set[str]:
    """The import paths of the classes the audit's own components subclass."""
    bases: set[str] = set()
    for path in components:
        try:
            cls = load_object(path)
        except (ImportError, NameError, ValueError):
            continue
        if isinstance(cls, type):
            bases.update(f"{b.__module__}.{b.__qualname__}" for b in cls.__mro__[1:])
    return bases


def main() -> None:
    settings = get_project_settings()
    for arg in sys.argv[1:]:
        name, _, value = arg.partition("=")
        settings.set(name, value, priority="cmdline")
    spider_cls = get_spider_loader(settings).load("audit")
    spider_cls.update_settings(settings)
    floor = SETTINGS_PRIORITIES["project"]
    kept: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for name in sorted(settings.attributes):
        if settings.getpriority(name) < floor and not name.endswith("_BASE"):
            continue
        if name.endswith("_BASE"):
            continue
        value = _plain(settings.get(name))
        own_component = isinstance(value, str) and value.startswith("sitemapaudit.")
        if name in DROP or name.startswith(("SITEMAPAUDIT_", "FEED_")) or own_component:
            dropped[name] = value
            continue
        if name in COMPONENT_DICTS and isinstance(value, dict):
            own = {
                k: v
                for k, v in value.items()
                if str(k).startswith("sitemapaudit") or str(v).startswith("sitemapaudit")
            }
            # A Scrapy component the audit swaps for its own subclass stays on for the copy.
            own.update({k: v for k, v in value.items() if v is None and k in _replaced(own)})
            if own:
                dropped[name] = own
            value = {k: v for k, v in value.items() if k not in own}
        kept[name] = value
    print(json.dumps({"kept": kept, "dropped": dropped}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
