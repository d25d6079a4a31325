"""Secrets out of every event a run yields: each text field, and strings nested in dicts and lists, masked."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from agent.events import Event
from config import Settings, redact

_E = TypeVar("_E", bound=Event)


def redacted(event: _E, settings: Settings) -> _E:
    """The event with every secret value of `settings` masked in its text fields."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, str):
            clean = redact(value, settings)
            if clean != value:
                changes[f.name] = clean
        elif isinstance(value, (dict, list)):
            text = repr(value)
            if redact(text, settings) != text:
                changes[f.name] = _redact_deep(value, settings)
    return dataclasses.replace(event, **changes) if changes else event


def _redact_deep(value: Any, settings: Settings) -> Any:
    if isinstance(value, str):
        return redact(value, settings)
    if isinstance(value, dict):
        return {k: _redact_deep(v, settings) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_deep(v, settings) for v in value]
    return value
