"""The Gradio app's building blocks: pure renderers (trace, tables, status) and per-tab logic.

`<tab>_tab.py` builders (one per tab) make the components and wire their events; `app.py` calls them.
Nothing here holds per-request state at module level.

Names resolve on first use (PEP 562): `ui.budget_worker`, the subprocess every visitor preview and
task load runs in, is inside this package and must not import the agent (seconds of CPU per job) to
refuse a bomb; the imports under TYPE_CHECKING are the same names, for editors and type checkers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # `X as X` marks an explicit re-export (PEP 484) of the lazily loaded names below.
    from ui.runtime import AgentUnavailable as AgentUnavailable
    from ui.runtime import Runtime as Runtime
    from ui.status import preload_status as preload_status
    from ui.status import progress_line as progress_line
    from ui.tables import RESULT_HEADERS as RESULT_HEADERS
    from ui.tables import record_rows as record_rows
    from ui.trace_view import render_trace as render_trace

_EXPORTS: dict[str, str] = {
    "AgentUnavailable": "runtime", "Runtime": "runtime",
    "preload_status": "status", "progress_line": "status",
    "RESULT_HEADERS": "tables", "record_rows": "tables",
    "render_trace": "trace_view",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ui' has no attribute {name!r}")
    value = getattr(import_module(f"ui.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
