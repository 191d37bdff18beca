"""How the project's commands refuse to run: one line on standard error, exit status 2."""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

logger = logging.getLogger(__name__)

_Command = TypeVar("_Command", bound=ScrapyCommand)
_Run = Callable[[_Command, list[str], argparse.Namespace], None]


def refusing_in_one_line(run: _Run[_Command]) -> _Run[_Command]:
    """A command's ``run`` whose refusals (a :class:`UsageError` with a message) end the
    command with one line on standard error and exit status 2, rather than Scrapy's usage
    lines before it: a cron log or a job log shows the reason alone. (Options that Scrapy's
    own parser refuses, before ``run``, keep Scrapy's usage lines.)

    When the log goes to a file (``LOG_FILE``, as scrapyd gives each job), the line is also
    logged there as an error: the job's log would otherwise stop after Scrapy's version
    banner without saying why. On a terminal the log is standard error: it is written once.
    """

    @functools.wraps(run)
    def refusing(command: _Command, args: list[str], opts: argparse.Namespace) -> None:
        try:
            run(command, args, opts)
        except UsageError as exc:
            if not str(exc):  # (Scrapy prints the command's help)
                raise
            refuse(command, str(exc))

    return refusing


def refuse(command: ScrapyCommand, message: str) -> None:
    """End ``command`` with ``message``, one line on standard error, and exit status 2."""
    if sys.stdout is not None:  # (closed when the command started: ``>&-``)
        sys.stdout.flush()
    sys.stderr.write(f"scrapy: error: {message}\n")
    sys.stderr.flush()
    settings = command.settings
    if (
        command.crawler_process is not None  # (Scrapy set its log up)
        and settings is not None
        and settings.get("LOG_FILE")
        and settings.getbool("LOG_ENABLED")
    ):
        logger.error("%s", message)
    command.exitcode = 2


@contextmanager
def path_refused(what: str) -> Iterator[None]:
    """A path that the system refuses to look up (a name too long, a loop of links) ends the
    command as a :class:`UsageError`: ``what`` (which path), and why."""
    try:
        yield
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror or exc}", print_help=False) from None


def report_file(text: str) -> Path:
    """The report file named ``text``; a :class:`UsageError` saying why it is none."""
    path = Path(text)
    with path_refused(f"not a report file: {text}"):
        if path.is_file():
            return path
        if path.is_dir():
            raise UsageError(f"not a report file: {text} is a directory", print_help=False)
        if path.exists():
            raise UsageError(f"not a report file: {text} is not a regular file", print_help=False)
    raise UsageError(f"no such report file: {text}", print_help=False)


def check_log_file(command: ScrapyCommand) -> None:
    """Create the directory of ``LOG_FILE`` (``--logfile``) if need be, as the audit creates
    the directories of its reports; a log file that cannot be opened ends the command with one
    line and exit status 2 (Scrapy would stop on a traceback, with exit status 1, before any
    command runs). For a command's ``process_options``, after Scrapy's own."""
    settings = command.settings
    if settings is None or not settings.getbool("LOG_ENABLED"):
        return
    name = settings.get("LOG_FILE")
    if not name:
        return
    path = Path(str(name))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding=settings.get("LOG_ENCODING") or "utf-8"):
            pass
    except (OSError, LookupError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if sys.stdout is not None:
            sys.stdout.flush()
        sys.stderr.write(f"scrapy: error: LOG_FILE={str(name)!r} cannot be used: {reason}\n")
        sys.stderr.flush()
        raise SystemExit(2) from None
