"""How a run solves and scores its tasks, as asked by the Batch tab or the CLI (`None`: not asked).

One declaration for the `RunConfig` the runner takes and the Batch tab's validated `BatchRequest`,
so an option added here reaches both; what a `None` resolves to is the runner's business (the
settings, or a resumed folder's own `run.json`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from config import Strategy


@dataclass
class RunOptions:
    """The run's pace, scoring and agent options; `None` for one: from the settings (or the resumed folder)."""

    concurrency: int | None = None
    """Tasks solved at once; None = BATCH_CONCURRENCY."""
    question_delay: float | None = None
    """Minimum seconds between task starts when concurrency is 1; None = BATCH_QUESTION_DELAY."""
    use_rag: bool = True
    scorer: str | None = None
    """The `SCORERS` name that scores each answer; None = the official one (with resume: the folder's own)."""
    max_iterations: int | None = None
    """The run's iteration cap (`--max-iterations`); None = the recorded one on resume, else MAX_ITERATIONS."""
    strategy: Strategy | None = None
    """`--strategy`; None = the folder's own on resume, else AGENT_STRATEGY."""
    attempts: int | None = None
    """Independent attempts per task, voted (`--attempts`); None = ATTEMPTS."""

    def options(self) -> dict[str, Any]:
        """The options by name, to build another holder from (`RunConfig(**request.options(), …)`)."""
        return {f.name: getattr(self, f.name) for f in fields(RunOptions)}
