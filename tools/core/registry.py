"""The tool registry: which tools are active, in which tier, and why any is missing.

Each tool module exposes factories `make_*(settings, **deps) -> list[BaseTool]` that check their
prerequisites when called (optional package, binary on PATH, API key) and raise
`MissingDependency` naming the fix; heavy imports happen inside the factory. Factories are
registered by importing them (rename and find-usages see them); adding a tool is one module and one
line in `FACTORIES`. A missing prerequisite removes those tools, never the agent; a factory that
breaks (a bug) is left out, logged and reported.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.tools import BaseTool

from config import Settings, redact
from tools.browser import make_browser_tools
from tools.compute.calculator import make_calculator_tools
from tools.compute.rag_search import make_rag_tools
from tools.core.errors import MissingDependency
from tools.documents.excel import make_excel_tools
from tools.documents.files import make_file_tools
from tools.documents.pdf import make_pdf_tools
from tools.isolation import make_sandbox_tools
from tools.media.audio import make_audio_tools
from tools.media.video import make_video_tools
from tools.media.vision import make_ocr_tools, make_vision_tools
from tools.web import make_arxiv_tools, make_wayback_tools, make_web_tools, make_wikipedia_tools
from tools.web.maps import make_map_tools
from tools.web.scholarly import make_orcid_tools, make_scholarly_tools

log = logging.getLogger(__name__)

ToolTier = Literal["base", "extension", "rag"]
ToolFactory = Callable[..., list[BaseTool]]
"""`factory(settings, **deps)`: the tools it provides; deps are injected only when it declares them."""

# Order is the order tools are offered to the model.
FACTORIES: list[tuple[ToolTier, ToolFactory]] = [
    ("base", make_web_tools),
    ("base", make_wikipedia_tools),
    ("base", make_wayback_tools),
    ("base", make_arxiv_tools),
    ("base", make_scholarly_tools),
    ("base", make_orcid_tools),
    ("base", make_map_tools),
    ("base", make_file_tools),
    ("base", make_calculator_tools),
    ("base", make_sandbox_tools),
    ("extension", make_pdf_tools),
    ("extension", make_excel_tools),
    ("extension", make_ocr_tools),
    ("extension", make_vision_tools),
    ("extension", make_audio_tools),
    ("extension", make_video_tools),
    ("extension", make_browser_tools),
    ("rag", make_rag_tools),
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

    def tier_of(self, name: str) -> str | None:
        """The tier an active tool belongs to."""
        return next((tier for tier, names in self.tiers.items() if name in names), None)

    def describe(self) -> str:
        """Human-readable listing (used by `python -m tools list` and the app's status line)."""
        lines = []
        for tier, names in self.tiers.items():
            lines.append(f"[{tier}] " + (", ".join(names) if names else "(none)"))
        for name, why in self.missing.items():
            lines.append(f"missing {name}: {why}")
        return "\n".join(lines)


def call_factory(factory: ToolFactory, settings: Settings, deps: dict[str, Any] | None = None) -> list[BaseTool]:
    """`factory(settings, ...)` with the injected dependencies it declares as keyword parameters."""
    accepted = inspect.signature(factory).parameters
    return factory(settings, **{k: v for k, v in (deps or {}).items() if k in accepted})


def build_registry(settings: Settings, factories: list[tuple[ToolTier, ToolFactory]] | None = None,
                   deps: dict[str, Any] | None = None) -> ToolRegistry:
    """Call every factory; collect active tools and the reasons for missing ones."""
    registry = ToolRegistry()
    for tier, factory in FACTORIES if factories is None else factories:
        registry.tiers.setdefault(tier, [])
        try:
            made = call_factory(factory, settings, deps)
        except MissingDependency as exc:
            for name in exc.tools:
                registry.missing[name] = exc.reason
            continue
        except ImportError as exc:  # an optional package the factory imports is not installed
            registry.missing[factory.__name__] = f"{exc}; install it with `pip install -r requirements.txt`"
            continue
        except Exception as exc:  # a bug in one tool module must not take every tool down
            log.exception("tool factory %s failed", factory.__name__)
            registry.missing[factory.__name__] = redact(f"failed to load: {type(exc).__name__}: {exc}", settings)
            continue
        for made_tool in made:
            registry.tools.append(made_tool)
            registry.tiers[tier].append(made_tool.name)
            # A tool that works without some of its parts says which in metadata["limited"] (part -> why).
            for part, why in ((made_tool.metadata or {}).get("limited") or {}).items():
                registry.missing[f"{made_tool.name} ({part})"] = why
    return registry
