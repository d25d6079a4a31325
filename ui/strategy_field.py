"""The Strategy field of the Debug and Batch tabs (issue 32): `react` or `team` for one run.

A visitor's pick is untrusted: anything but the two names means "the default" (AGENT_STRATEGY).
"""

from __future__ import annotations

from typing import Any, get_args

from config import Strategy

STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


def run_strategy(value: Any) -> Strategy | None:
    """The field's value as a run's strategy (None: not one of STRATEGIES, AGENT_STRATEGY applies)."""
    return next((name for name in STRATEGIES if name == value), None)
