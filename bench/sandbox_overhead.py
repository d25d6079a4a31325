"""Overhead of the Python sandbox: `run_python` of print(1) vs a bare `python -c` subprocess, same run, per backend.

Goal (issue 3): <= 1.3x. Runs are interleaved and the median is reported, so the shared machine's
noise hits both sides alike. Two figures per backend (bwrap; landlock + seccomp): "cold" starts the
whole wrapper chain for the call (prlimit -> bwrap -> setpriv -> python, or prlimit -> setpriv ->
python that confines itself); "warm" is the tool as the agent uses it, where an idle spare sandbox was
started after the previous call (in the agent a model call separates two tool calls, so the bench
waits until the spare is ready, as the agent would). Usage: `python bench/sandbox_overhead.py [--runs 40]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.tools import BaseTool  # noqa: E402

from config import Settings, load_settings  # noqa: E402
from tools.core.executor import run_tool  # noqa: E402
from tools.isolation import Limits, make_sandbox_tools, run_sandboxed  # noqa: E402
from tools.isolation.pool import SPARES  # noqa: E402


def _bare() -> None:
    out = subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, check=True)
    assert out.stdout == b"1\n"


def main() -> int:
    """Measure and print medians (ms) and the ratios to the bare subprocess."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    cases: dict[str, tuple[Callable[[], None], Callable[[], None]]] = {}

    def spare_ready() -> None:
        deadline = time.monotonic() + 2
        while not SPARES.spare_pids() and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(0.02)  # let the spare's interpreter finish starting (it then blocks on stdin)

    cases["bare python -c"] = (_bare, spare_ready)
    for backend in ("bwrap", "landlock"):
        settings = load_settings(SANDBOX_MODE=backend)
        start = time.perf_counter()
        tool = make_sandbox_tools(settings)[0]  # includes the one-off probe
        print(f"{backend} tool build (incl. probe): {(time.perf_counter() - start) * 1000:.1f} ms")
        limits = Limits(cpu_seconds=30, memory_mb=settings.SANDBOX_MEMORY_MB)

        def cold(backend: str = backend, limits: Limits = limits) -> None:
            r = run_sandboxed("print(1)", limits=limits, wall_seconds=30,
                              backend=backend, warm=False)  # type: ignore[arg-type]
            assert r.stdout == "1\n", r

        def via_tool(tool: BaseTool = tool, settings: Settings = settings) -> None:
            out = run_tool(tool, {"code": "print(1)"}, settings, config={"configurable": {"attachments": []}})
            assert out.output.endswith("1\n"), out

        # Every case waits for the background spare first, so its start-up never overlaps a measurement.
        cases[f"{backend} cold"] = (cold, spare_ready)
        cases[f"{backend} warm"] = (via_tool, spare_ready)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn, _prepare in cases.values():  # warm caches (page cache, .pyc) before measuring
        fn()
    for _ in range(args.runs):
        for name, (fn, prepare) in cases.items():
            prepare()
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    base = statistics.median(times["bare python -c"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<18} median {med:6.2f} ms  p10 {sorted(ts)[len(ts) // 10]:6.2f} ms  ratio {med / base:4.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
