"""The tabs' forms as typed data: what a visitor (or an API client) typed, validated into a request.

Each tab's handler turns its components' values into one form dataclass at once; nothing past the
handler passes ten positional values. Numbers are never adjusted silently: an empty field, a fraction
where a whole number belongs, or a value out of range is refused with the field's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from config import Strategy
from evaluation.run_options import RunOptions
from evaluation.scorer import DEFAULT_SCORER, SCORERS
from evaluation.selection import TaskSelection

Source = Literal["local", "hub", "api"]
"""Where a batch's (or the task picker's) tasks come from."""
SOURCE_LABELS: dict[Source, str] = {"local": "Local GAIA folder", "hub": "Hugging Face hub",
                                    "api": "Unit 4 scoring API"}
"""The radio's labels, which are also the values API clients send."""
SOURCES: tuple[Source, ...] = get_args(Source)
LEVELS = ["All", "1", "2", "3"]
SPLITS = ("validation", "test")
MAX_CONCURRENCY = 16
"""Tasks at once from the app's form (the CLI allows up to BATCH_CONCURRENCY's limit)."""


class FormError(ValueError):
    """A form value that cannot be used; the message names the field."""


def source_of(value: str) -> Source:
    """The Source a radio label (or a key) names; FormError for anything else."""
    for key, label in SOURCE_LABELS.items():
        if value in (key, label):
            return key
    raise FormError(f"Source must be one of {', '.join(SOURCE_LABELS.values())}, not {value!r}.")


def _number(value: Any, name: str, minimum: float, maximum: float | None = None, whole: bool = False,
            empty: str = "") -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise FormError(f"{name} is empty: {empty or f'enter a number (at least {minimum:g})'}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise FormError(f"{name} must be a number, not {value!r}.") from None
    if number != number or number < minimum:  # NaN or too small
        raise FormError(f"{name} must be at least {minimum:g}, not {value!r}.")
    if maximum is not None and number > maximum:
        raise FormError(f"{name} must be at most {maximum:g}, not {value!r}.")
    if whole and number != int(number):
        raise FormError(f"{name} must be a whole number, not {value!r}.")
    return number


def parse_level(level: Any) -> int | None:
    """'All' / None → None; '1'…'3' → int; FormError otherwise."""
    text = str(level or "All").strip()
    if text not in LEVELS:
        raise FormError(f"Level must be one of {', '.join(LEVELS)}, not {level!r}.")
    return None if text == "All" else int(text)


def _split(split: Any) -> str:
    if split not in SPLITS:
        raise FormError(f"Split must be 'validation' or 'test', not {split!r}.")
    return str(split)


@dataclass(kw_only=True)
class BatchRequest(TaskSelection, RunOptions):
    """What the batch form asks for, validated: which tasks, from where, and how.

    The `RunOptions`' None: a resumed run keeps its own scorer, and its own cap and strategy.
    """

    source: Source
    data_dir: str = ""
    """The local GAIA folder's path as typed (only for the 'local' source)."""
    username: str = ""
    """The Hugging Face user the Unit 4 scoring API submits for (only for the 'api' source)."""
    rerun_of: str | None = None
    """A finished run folder whose failures this run re-runs, its tool calls replayed (evaluation.rerun)."""


@dataclass
class BatchForm:
    """The Batch tab's raw values, in the order of its components (and of `/evaluate`'s parameters)."""

    source: str
    split: str = "validation"
    data_dir: str = ""
    level: Any = "All"
    max_samples: Any = 0
    task_ids: str = ""
    concurrency: Any = 1
    question_delay: Any = 0
    use_rag: bool = True
    username: str = ""
    scorer: str = DEFAULT_SCORER
    max_iterations: int | None = None
    """Already clamped by the tab (ui.run_fields.run_iterations); None: MAX_ITERATIONS."""
    strategy: Strategy | None = None
    """Already checked by the tab (ui.strategy_field.run_strategy); None: AGENT_STRATEGY."""
    attempts: int | None = None
    """Already clamped by the tab (ui.run_fields.run_attempts); None: ATTEMPTS."""

    def request(self, parse_ids: Callable[[str], list[str]]) -> BatchRequest:
        """Validate into a BatchRequest; FormError naming the first unusable field."""
        if self.scorer not in SCORERS:
            raise FormError(f"Scorer must be one of {', '.join(SCORERS)}, not {self.scorer!r}.")
        max_n = _number(self.max_samples, "Max samples", 0, whole=True, empty="enter 0 for all tasks")
        return BatchRequest(
            source=source_of(self.source), split=_split(self.split), data_dir=(self.data_dir or "").strip(),
            level=parse_level(self.level), max_samples=int(max_n) or None, task_ids=parse_ids(self.task_ids or ""),
            concurrency=int(_number(self.concurrency, "Concurrency", 1, MAX_CONCURRENCY, whole=True)),
            question_delay=_number(self.question_delay, "Delay between task starts", 0, empty="enter 0 for none"),
            use_rag=bool(self.use_rag), username=(self.username or "").strip(), scorer=self.scorer,
            max_iterations=self.max_iterations, strategy=self.strategy, attempts=self.attempts)


@dataclass
class PickForm:
    """The Debug tab's task picker: where to load a split from."""

    source: str
    split: str = "validation"
    level: Any = "All"
    data_dir: str = ""

    def batch_form(self) -> BatchForm:
        """The same selection as a batch form (all tasks, so the picker lists them)."""
        return BatchForm(source=self.source, split=self.split, data_dir=self.data_dir or "", level=self.level)


@dataclass
class AskForm:
    """The Debug tab's question: its text, the upload, the picked task and the RAG switch."""

    question: str
    file: Any = None
    task: Any = None
    use_rag: bool = True
