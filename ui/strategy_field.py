"""The Strategy field of the Debug and Batch tabs (issue 32): `react` or `team` for one run.

A visitor's pick is untrusted: anything but the two names means "the default" (AGENT_STRATEGY).
"""

from __future__ import annotations

from typing import Any, get_args

import gradio as gr

from config import Settings, Strategy

STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


def strategy_field(settings: Settings, *, label: str, elem_id: str) -> gr.Dropdown:
    """The Strategy dropdown, AGENT_STRATEGY picked to start with."""
    return gr.Dropdown(list(STRATEGIES), value=settings.AGENT_STRATEGY, label=label, elem_id=elem_id)


def run_strategy(value: Any) -> Strategy | None:
    """The field's value as a run's strategy (None: not one of STRATEGIES, AGENT_STRATEGY applies)."""
    return next((name for name in STRATEGIES if name == value), None)
