"""Warm spares: used once, fresh every time, never stale for changed attachments, evicted and reaped cleanly."""

from __future__ import annotations

import os
import signal
import time

from tests.support.xdist_groups import SANDBOXES
from tests.tools.test_sandbox_support import run, wait_no_leftovers
from tools.isolation import Limits, run_sandboxed
from tools.isolation.launcher import python_paths
from tools.isolation.pool import SPARES, SparePool, attachment_key
from tools.isolation.spawn import spawn

pytestmark = SANDBOXES

LIMITS = Limits(cpu_seconds=10, memory_mb=1024)


def _wait_for_spare(pool: SparePool = SPARES, count: int = 1, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while len(pool.spare_pids()) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return pool.spare_pids()


def test_a_spare_is_used_once_and_starts_fresh():
    SPARES.clear()
    first = run_sandboxed("open('/tmp/left-behind', 'w').write('x'); open('here', 'w').write('y')",
                          limits=LIMITS, wall_seconds=10)
    assert first.reason == "ok"
    spare = _wait_for_spare()
    assert len(spare) == 1
    second = run_sandboxed("import os; print(sorted(os.listdir('/tmp')), os.listdir('.'))", limits=LIMITS,
                           wall_seconds=10)
    # Besides the work dir, /tmp shows only the mount points of a venv that itself lives under /tmp (a CI clone).
    under_tmp = {p.split("/")[2] for p in python_paths() if p.startswith("/tmp/")}
    assert second.stdout.strip() == f"{sorted({'work'} | under_tmp)} []"
    replacement = _wait_for_spare()
    assert replacement and replacement != spare  # the used spare was consumed, a new one replaced it
    SPARES.clear()
    assert wait_no_leftovers() == []


def test_a_changed_private_attachment_is_never_served_stale(tmp_path):
    data = tmp_path / "value.txt"
    data.write_text("1")
    data.chmod(0o600)  # copied into the sandbox (not bound), so a stale spare would show old content
    code = f"print(open({str(data)!r}).read())"
    assert run_sandboxed(code, limits=LIMITS, wall_seconds=10, attachments=[str(data)]).stdout.strip() == "1"
    _wait_for_spare()
    data.write_text("22")
    assert run_sandboxed(code, limits=LIMITS, wall_seconds=10, attachments=[str(data)]).stdout.strip() == "22"
    SPARES.clear()


def test_different_limits_or_attachments_get_different_spares(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("a")
    assert attachment_key([str(a)]) != attachment_key([])
    out = run("import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20)", SANDBOX_MEMORY_MB=700)
    assert out.output.strip() == "700"
    out = run("import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20)", SANDBOX_MEMORY_MB=900)
    assert out.output.strip() == "900"
    SPARES.clear()


def test_pool_evicts_the_oldest_and_skips_dead_spares():
    pool = SparePool(max_spares=2)
    keys = ["k1", "k2", "k3"]
    for key in keys:
        pool.request(key, lambda: spawn("bwrap", [], None, LIMITS))
        _wait_for_spare(pool, count=min(2, keys.index(key) + 1))
    time.sleep(0.1)
    assert pool.take("k1") is None  # evicted (and killed) when k3 arrived
    child = pool.take("k2")
    assert child is not None and child.proc.poll() is None
    child.close()
    dead = pool.take("k3")
    assert dead is not None
    os.killpg(dead.proc.pid, signal.SIGKILL)
    dead.proc.wait()
    pool._spares["k3"] = dead  # a spare that died while idle is discarded, not handed out
    assert pool.take("k3") is None
    pool.clear()
    assert wait_no_leftovers() == []
