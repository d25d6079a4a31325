"""The Gradio app's building blocks: pure renderers (trace, tables, status) and per-tab logic.

`<tab>_tab.py` builders (one per tab) make the components and wire their events; `app.py` calls them.
Nothing here holds per-request state at module level.
"""

from ui.runtime import AgentUnavailable, Runtime
from ui.status import preload_status, progress_line
from ui.tables import RESULT_HEADERS, record_rows
from ui.trace_view import render_trace

__all__ = ["AgentUnavailable", "RESULT_HEADERS", "Runtime", "preload_status", "progress_line", "record_rows",
           "render_trace"]
