"""Which tasks a run takes: one split, filtered by level and task ids, cut to a number of samples.

The one owner of the selection: the Batch tab's request, the runner's `RunConfig` and the folder's
recorded `RunInfo` all are a `TaskSelection`, and every place that picks tasks calls `choose()`.
Where the tasks come from (a local folder or the hub) is not part of it: its type differs by holder
(a `Path` to load from, the string `run.json` keeps, the form's text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, TypeVar

from evaluation.dataset import DatasetError


class Selectable(Protocol):
    """What a selection looks at in a task (a `Sample`)."""

    @property
    def task_id(self) -> str:
        """The GAIA task id."""

    @property
    def level(self) -> int:
        """The GAIA level (1-3)."""


T = TypeVar("T", bound=Selectable)


class SelectionError(DatasetError):
    """A selection that cannot be used (an unknown task id, a sample count under 1); the message says which."""


@dataclass
class TaskSelection:
    """A split and the filters on it; empty filters take every task of the split."""

    split: str = "validation"
    level: int | None = None
    max_samples: int | None = None
    task_ids: list[str] = field(default_factory=list)
    """Only these tasks (dataset order is kept); every id must exist at the chosen level."""

    @property
    def where(self) -> str:
        """`split 'validation' level 2`, for messages."""
        return f"split {self.split!r}" + (f" level {self.level}" if self.level else "")

    def choose(self, samples: Sequence[T]) -> list[T]:
        """The selected samples in dataset order; SelectionError for an unknown id or a count under 1."""
        chosen = [s for s in samples if self.level is None or s.level == self.level]
        if self.task_ids:
            known = {s.task_id for s in chosen}
            if unknown := [t for t in self.task_ids if t not in known]:
                raise SelectionError(f"Unknown task id(s) for {self.where}: {', '.join(unknown)}")
            wanted = set(self.task_ids)
            chosen = [s for s in chosen if s.task_id in wanted]
        if self.max_samples is not None:
            if self.max_samples < 1:
                raise SelectionError(f"max_samples must be at least 1, not {self.max_samples}")
            chosen = chosen[: self.max_samples]
        return chosen

    def fields(self) -> dict[str, Any]:
        """The selection's fields by name, to build another holder from (`RunConfig(**s.fields(), …)`)."""
        return {f.name: getattr(self, f.name) for f in fields(TaskSelection)}

    def filled_from(self, recorded: TaskSelection) -> dict[str, Any]:
        """This selection's fields, each left unset here taken from `recorded` (a resumed folder's run.json)."""
        return {"split": recorded.split,
                "level": self.level if self.level is not None else recorded.level,
                "max_samples": self.max_samples if self.max_samples is not None else recorded.max_samples,
                "task_ids": list(self.task_ids or recorded.task_ids)}
