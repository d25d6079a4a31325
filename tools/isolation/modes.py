"""Which sandbox backend `run_python` uses here, from SANDBOX_MODE and what this machine allows (probed once).

- `auto` (default): bubblewrap when user namespaces work; else Landlock + seccomp; else `run_python`
  is unavailable and the registry says why (a Docker Space may refuse namespaces).
- `bwrap`, `landlock`: that backend or nothing (fail closed). `strict` is an alias of `bwrap`.
- `degraded`: like `auto`, then, only when the app runs as root, rlimits with a uid of the call's
  own and a scrubbed environment (no filesystem or network isolation), labelled in every result.
  Refused otherwise: as the app's own uid such a child could read the app's environment and kill it.
"""

from __future__ import annotations

import os

from config import Settings
from tools.core.errors import MissingDependency
from tools.isolation.landlock_backend import probe_landlock
from tools.isolation.launcher import missing_binaries, probe_namespaces
from tools.isolation.spawn import Backend

_TOOLS = ["run_python"]


def _bwrap_problem() -> str | None:
    problem = probe_namespaces(os.geteuid() == 0)
    if problem is None:
        return None
    fix = ("install bubblewrap and util-linux (apt-get install bubblewrap util-linux)" if missing_binaries()
           else "allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or docker run "
                "--security-opt seccomp=unconfined)")
    return f"bubblewrap cannot isolate the child here ({problem}); {fix}"


def _landlock_problem() -> str | None:
    if not os.access("/usr/bin/prlimit", os.X_OK):
        return "prlimit is missing: install util-linux (apt-get install util-linux)"
    problem = probe_landlock(os.geteuid() == 0)
    return None if problem is None else (
        f"Landlock + seccomp cannot confine the child here ({problem}); it needs Linux >= 6.12 (Landlock ABI 6) with "
        "Landlock enabled (lsm=...,landlock) on x86_64")


def choose_backend(settings: Settings) -> Backend:
    """The backend SANDBOX_MODE selects on this machine; MissingDependency (with every reason) when none may run."""
    mode = settings.SANDBOX_MODE
    if mode == "bwrap":
        if (problem := _bwrap_problem()) is not None:
            raise MissingDependency(_TOOLS, f"{problem}. Or set SANDBOX_MODE=auto to fall back to Landlock.")
        return "bwrap"
    if mode == "landlock":
        if (problem := _landlock_problem()) is not None:
            raise MissingDependency(_TOOLS, problem + ".")
        return "landlock"
    if mode == "degraded" and os.geteuid() != 0:
        raise MissingDependency(_TOOLS, "SANDBOX_MODE=degraded is refused: the app does not run as root, so a "
                                        "degraded child would share its uid (read its environment, signal it). "
                                        "Use SANDBOX_MODE=auto (bubblewrap, else Landlock + seccomp).")
    if (bwrap := _bwrap_problem()) is None:
        return "bwrap"
    if (landlock := _landlock_problem()) is None:
        return "landlock"
    if mode == "degraded":
        if not os.access("/usr/bin/prlimit", os.X_OK) or not os.access("/usr/bin/setpriv", os.X_OK):
            raise MissingDependency(_TOOLS, "prlimit or setpriv is missing: install util-linux.")
        return "degraded"
    raise MissingDependency(_TOOLS, f"no sandbox can run here: {bwrap}; {landlock}.")
