"""The budget fields of the Debug and Batch tabs: an iteration cap per run, attempts per task, what a run cost.

A visitor's number is untrusted: it is clamped to 1 … `iteration_ceiling` (the larger of MAX_ITERATIONS
and `ITERATIONS_CEILING`), so the field cannot buy an unbounded run on the owner's key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gradio as gr

from config import Settings

if TYPE_CHECKING:
    from evaluation.run_summary import RunSummary

ITERATIONS_CEILING = 50
"""Most assistant turns a tab's field may ask for (GAIA's longest annotated task took 44 steps)."""
ATTEMPTS_CEILING = 5
"""Most attempts per task the Batch tab's field may ask for (each one costs a whole solve; pass@3 is the usual)."""


def iteration_ceiling(settings: Settings) -> int:
    """The largest iteration cap the tabs accept."""
    return max(ITERATIONS_CEILING, settings.MAX_ITERATIONS)


def iterations_field(settings: Settings, *, label: str, elem_id: str) -> gr.Number:
    """The iteration-cap field: MAX_ITERATIONS to start with, 1 … `iteration_ceiling` in the browser too."""
    return gr.Number(value=settings.MAX_ITERATIONS, precision=0, minimum=1, maximum=iteration_ceiling(settings),
                     label=label, elem_id=elem_id)


def _clamped(value: Any, ceiling: int) -> int | None:
    """A number field's value as an integer in 1 … `ceiling`; None when it is empty or unreadable."""
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        return None
    return min(max(1, number), ceiling)


def run_iterations(value: Any, settings: Settings) -> int | None:
    """The field's value as a run's iteration cap (None: empty or unreadable, MAX_ITERATIONS applies)."""
    return _clamped(value, iteration_ceiling(settings))


def attempts_ceiling(settings: Settings) -> int:
    """The largest number of attempts per task the Batch tab accepts."""
    return max(ATTEMPTS_CEILING, settings.ATTEMPTS)


def run_attempts(value: Any, settings: Settings) -> int | None:
    """The field's value as attempts per task, clamped to 1 … `attempts_ceiling` (None: empty, ATTEMPTS applies)."""
    return _clamped(value, attempts_ceiling(settings))


def cost_line(summary: RunSummary) -> str:
    """`Cost: $0.0123 ($0.0041 per task)` for a run's summary; '' when the prices are unknown (all zero)."""
    cost = summary.cost_usd
    total = float(summary.meta.get("cost_usd") or cost.get("total") or 0.0)
    if not total:
        return ""
    return f"Cost: ${total:.4f} (${float(cost.get('per_task') or 0.0):.4f} per task)"
