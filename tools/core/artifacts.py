"""What a tool's reply carries beside the text the model reads (LangChain's content-and-artifact replies).

A tool declared `@tool(response_format="content_and_artifact")` (or `@context_tool(...)`) returns
`(text, ToolArtifact(...))`; the executor invokes it as a tool call, so the artifact comes back on the
ToolMessage, and puts it into the trace. The model's context only ever holds the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

CONTENT_AND_ARTIFACT: Final[Literal["content_and_artifact"]] = "content_and_artifact"


@dataclass(frozen=True)
class ToolArtifact:
    """For the trace only."""

    thumbnail: str | None = None
    """A small data-URL image of what the tool saw (a browser step's page)."""


Reply = tuple[str, ToolArtifact]
"""A content-and-artifact tool's return value."""
