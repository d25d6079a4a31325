"""Isolation: the Python sandbox and the budgeted worker (`limited_job`) that parses hostile files.

The sandbox: `run_python` executes model-written code in a confined child process.

Three backends behind one interface (`run_sandboxed`): bubblewrap namespaces (`launcher.py`),
Landlock + seccomp where namespaces are refused (`landlock_backend.py`, `landlock.py`, `seccomp.py`),
and, for root only, a labelled degraded mode. `modes.py` picks one from SANDBOX_MODE; `spawn.py`
starts and ends a child; `runner.py` is the parent side (deadline, output caps, exit reasons);
`pool.py` keeps warm spares; `uids.py` gives each call its own uid when the app is root;
`hardening.py` (import-light, called by the app and the CLIs at start) keeps same-uid
processes from reading the app's environment or tracing it.
"""

from typing import Any

from tools.isolation.landlock_backend import probe_landlock
from tools.isolation.launcher import Limits, probe_namespaces
from tools.isolation.modes import choose_backend
from tools.isolation.runner import SandboxResult, run_sandboxed
from tools.isolation.spawn import Backend

_TOOL_NAMES = ("DEGRADED_LABEL", "LANDLOCK_LABEL", "make_sandbox_tools")


def __getattr__(name: str) -> Any:
    # The tool side (LangChain) loads on first use: the budgeted worker (`limited_job`) is imported by the visitor
    # gate, which must not load the agent's libraries to refuse a request.
    if name in _TOOL_NAMES:
        from tools.isolation import tool

        return getattr(tool, name)
    raise AttributeError(name)


__all__ = ["DEGRADED_LABEL", "LANDLOCK_LABEL", "Backend", "Limits", "SandboxResult", "choose_backend",
           "make_sandbox_tools", "probe_landlock", "probe_namespaces", "run_sandboxed"]
