"""One question as the caller of `Pipeline.stream()` / `solve()` asked it, with the options of its run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import Strategy
from tools.core.replay_cache import ToolCache


@dataclass(frozen=True)
class RunRequest:
    """One question as the caller asked it."""

    question: str
    file_path: str | None
    task_id: str | None
    history: list[dict[str, Any]] | None
    use_rag: bool
    confine: bool
    readable: tuple[Path, ...]
    max_iterations: int | None = None
    """This run's iteration cap (None: MAX_ITERATIONS)."""
    spent_tokens: int = 0
    """Tokens earlier attempts at the same task spent (they count against MAX_TOKENS_PER_TASK)."""
    strategy: Strategy | None = None
    """This run's strategy (None: AGENT_STRATEGY)."""
    tool_cache: ToolCache | None = None
    """The run's tool-result cache (record and replay, tools.core.replay_cache); None: every call live, none kept."""
