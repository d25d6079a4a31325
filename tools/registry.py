"""The tool registry: which tools are active, in which tier, and why any is missing.

Each tool module exposes factories `make_*(settings) -> list[BaseTool]` that check their
prerequisites when called (optional package, binary on PATH, API key) and raise
`MissingDependency` naming the fix. A missing prerequisite removes those tools, never the agent.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Literal

from langchain_core.tools import BaseTool

from config import Settings

Tier = Literal["base", "extension", "rag"]


class MissingDependency(Exception):
    """A factory's prerequisite is absent; `tools` are the names it would have provided."""

    def __init__(self, tools: list[str], reason: str) -> None:
        super().__init__(reason)
        self.tools = tools
        self.reason = reason


# (tier, "module:factory"). Order is the order tools are offered to the model.
FACTORIES: list[tuple[Tier, str]] = [
    ("base", "tools.web:make_web_tools"),
    ("base", "tools.files:make_file_tools"),
    ("base", "tools.calculator:make_calculator_tools"),
    ("base", "tools.sandbox:make_sandbox_tools"),
    ("extension", "tools.pdf:make_pdf_tools"),
    ("extension", "tools.excel:make_excel_tools"),
    ("extension", "tools.vision:make_ocr_tools"),
    ("extension", "tools.vision:make_vision_tools"),
    ("extension", "tools.audio:make_audio_tools"),
    ("rag", "tools.rag_search:make_rag_tools"),
]


@dataclass
class ToolRegistry:
    """Active tools by tier, and the reasons for the missing ones."""

    tools: list[BaseTool] = field(default_factory=list)
    tiers: dict[str, list[str]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    """Tool (or factory) name -> why it is missing and how to fix it."""

    def get(self, name: str) -> BaseTool | None:
        """The active tool called `name`, if any."""
        return next((t for t in self.tools if t.name == name), None)

    @property
    def names(self) -> list[str]:
        """Names of the active tools."""
        return [t.name for t in self.tools]

    def describe(self) -> str:
        """Human-readable listing (used by `python -m tools list` and the app's status line)."""
        lines = []
        for tier, names in self.tiers.items():
            lines.append(f"[{tier}] " + (", ".join(names) if names else "(none)"))
        for name, why in self.missing.items():
            lines.append(f"missing {name}: {why}")
        return "\n".join(lines)


def _load(spec: str) -> Callable[[Settings], list[BaseTool]]:
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


def build_registry(settings: Settings, factories: list[tuple[Tier, str]] | None = None) -> ToolRegistry:
    """Call every factory; collect active tools and the reasons for missing ones."""
    registry = ToolRegistry()
    for tier, spec in factories or FACTORIES:
        registry.tiers.setdefault(tier, [])
        try:
            made = _load(spec)(settings)
        except MissingDependency as exc:
            for name in exc.tools:
                registry.missing[name] = exc.reason
            continue
        except ImportError as exc:
            # The module itself needs an optional package that is not installed.
            registry.missing[spec.split(":")[1]] = f"{exc}; install it with `pip install -r requirements.txt`"
            continue
        for tool in made:
            registry.tools.append(tool)
            registry.tiers[tier].append(tool.name)
    return registry
