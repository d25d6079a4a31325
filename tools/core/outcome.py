"""What one tool call gave back: the observation the model sees, and how it came about.

Import-light (the trace's `ToolResult` event is this plus the call's name and id).
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.core.errors import ErrorKind


@dataclass(kw_only=True)
class ToolOutcome:
    """The observation handed back to the model (already truncated / converted from an error), and its facts."""

    output: str
    ok: bool
    duration_s: float
    truncated_chars: int = 0
    error_kind: ErrorKind | None = None
    """None when ok; else why it failed (tools.core.errors.ErrorKind)."""
    thumbnail: str | None = None
    """A small JPEG data URL of the page a browser step saw (trace and downloads only, never the model)."""
    replayed: bool = False
    """Answered from a recorded run's tool cache (`--replay`), not live (tools.core.replay_cache)."""
