"""A stretch of recognised speech: what transcription and a video's captions both produce.

Its own module so that the video tools (captions from YouTube) need not import the audio tools, which
import the video downloads in turn.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    """One stretch of recognised speech, in seconds from the start."""

    start: float
    end: float
    text: str
