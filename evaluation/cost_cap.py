"""A batch run's cost cap: what the run spent (every session), and whether a new task may start.

The total lives in the run folder's `run.json` (`cost_usd`, kept by `RunFolder`), updated as each task
is recorded, so a resume counts what its earlier sessions spent. The cap in force is the current invocation's
(`--max-cost-usd`, else BATCH_MAX_COST_USD; 0 = none): a resume with a higher cap, or none, goes on.
Once the total reaches the cap no new task starts; running tasks finish and are recorded; the rest
stay unstarted, resumable.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluation.run_folder import RunFolder


class CostCap:
    """The run's spending against its cap; thread-safe (tasks finish on several threads)."""

    def __init__(self, folder: RunFolder, cap_usd: float) -> None:
        self.folder = folder
        self.cap_usd = max(0.0, cap_usd)
        self.spent_usd = folder.spent_usd()
        """Spent so far over every session of the run."""
        self._lock = threading.Lock()
        folder.record_cost(cap_usd=self.cap_usd)

    @property
    def reached(self) -> bool:
        """True once the run's total cost is at or over the cap (never without a cap)."""
        return self.cap_usd > 0 and self.spent_usd >= self.cap_usd

    def may_start(self) -> bool:
        """Whether a new task may start now."""
        with self._lock:
            return not self.reached

    def add(self, cost_usd: float) -> None:
        """Count a recorded task's cost and keep the total in run.json."""
        with self._lock:
            self.spent_usd = round(self.spent_usd + max(0.0, cost_usd), 8)
            self.folder.record_cost(spent_usd=self.spent_usd)

    def reason(self) -> str | None:
        """Why tasks were left unstarted, or None when the cap did not stop the run."""
        if not self.reached:
            return None
        return (f"cost cap reached: the run has spent ${self.spent_usd:.4f} of its ${self.cap_usd:.4f} "
                "(BATCH_MAX_COST_USD / --max-cost-usd); resume with a higher cap, or none, to finish it")
