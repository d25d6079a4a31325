"""The Python sandbox: `run_python` executes model-written code in a confined child process.

See `launcher.py` for what is enforced where (prlimit, bubblewrap namespaces, setpriv),
`runner.py` for the parent side (deadline, output caps, exit reasons) and `pool.py` for the warm
spares that hide the sandbox's start-up time.
"""

from tools.sandbox.launcher import Limits, probe_namespaces
from tools.sandbox.runner import SandboxResult, run_sandboxed
from tools.sandbox.tool import DEGRADED_LABEL, make_sandbox_tools, sandbox_mode

__all__ = ["DEGRADED_LABEL", "Limits", "SandboxResult", "make_sandbox_tools", "probe_namespaces",
           "run_sandboxed", "sandbox_mode"]
