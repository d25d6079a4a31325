"""What every `python -m …` command shares: a hardened process, and a bad input as one line and status 2.

Import-light (config and hardening only), so a command can call it before its heavy imports.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from config import ConfigError
from hardening import make_non_dumpable


class UsageError(ValueError):
    """An argument the command cannot use (e.g. a missing file): reported like bad configuration."""


def run_command(command: Callable[[], int], expected: tuple[type[Exception], ...] = ()) -> int:
    """Run `command` non-dumpable (see hardening.py); bad configuration, usage or an `expected` error → 2."""
    make_non_dumpable()
    reported: tuple[type[Exception], ...] = (ConfigError, UsageError, *expected)
    try:
        return command()
    except reported as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
