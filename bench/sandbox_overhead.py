"""Overhead of the Python sandbox: `run_python` of print(1) vs a bare `python -c` subprocess, same run.

Goal (issue 3): <= 1.3x. Runs are interleaved and the median is reported, so the shared machine's
noise hits both sides alike. Two sandbox figures: "cold" starts the whole wrapper chain for the call
(prlimit -> bwrap -> setpriv -> python); "warm" is the tool as the agent uses it, where an idle spare
sandbox was started after the previous call (in the agent a model call separates two tool calls, so
the bench waits until the spare is ready, as the agent would). Usage: `python bench/sandbox_overhead.py [--runs 40]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from config import load_settings  # noqa: E402
from tools.executor import run_tool  # noqa: E402
from tools.sandbox import Limits, make_sandbox_tools, run_sandboxed  # noqa: E402
from tools.sandbox.pool import SPARES  # noqa: E402


def _bare() -> None:
    out = subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, check=True)
    assert out.stdout == b"1\n"


def main() -> int:
    """Measure and print medians (ms) and the ratios to the bare subprocess."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    settings = load_settings(SANDBOX_MODE="strict")
    start = time.perf_counter()
    tool = make_sandbox_tools(settings)[0]  # includes the one-off namespace probe
    build_ms = (time.perf_counter() - start) * 1000
    limits = Limits(cpu_seconds=30, memory_mb=settings.SANDBOX_MEMORY_MB)

    def cold() -> None:
        r = run_sandboxed("print(1)", limits=limits, wall_seconds=30, warm=False)
        assert r.stdout == "1\n", r

    def via_tool() -> None:
        out = run_tool(tool, {"code": "print(1)"}, settings, config={"configurable": {"attachments": []}})
        assert out.output == "1\n", out

    def spare_ready() -> None:
        deadline = time.monotonic() + 2
        while not SPARES.spare_pids() and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(0.02)  # let the spare's interpreter finish starting (it then blocks on stdin)

    # Every case waits for the background spare first, so its start-up never overlaps a measurement.
    cases = {"bare python -c": (_bare, spare_ready), "run_sandboxed cold": (cold, spare_ready),
             "run_python warm": (via_tool, spare_ready)}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn, prepare in cases.values():  # warm caches (page cache, .pyc) before measuring
        fn()
    for _ in range(args.runs):
        for name, (fn, prepare) in cases.items():
            if prepare is not None:
                prepare()
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    base = statistics.median(times["bare python -c"])
    print(f"tool build (incl. namespace probe): {build_ms:.1f} ms")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<18} median {med:6.2f} ms  p10 {sorted(ts)[len(ts) // 10]:6.2f} ms  ratio {med / base:4.2f}x")
    warm = statistics.median(times["run_python warm"]) / base
    cold_ratio = statistics.median(times["run_sandboxed cold"]) / base
    print(f"ratio run_python / bare python -c: {warm:.2f}x warm, {cold_ratio:.2f}x cold (goal <= 1.30x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
