"""run_python against what a Landlock sandbox shares with its host (issue 21): each payload on both backends.

The host (this test) leaves a marker in /dev/shm, listens on a pathname UNIX socket, owns files a
call could chmod, runs threads and other runs a call could signal. Every payload runs on bubblewrap
and on Landlock + seccomp (forced with SANDBOX_MODE; the test id names the backend); the verdict is
read on the host side (the marker unread, nothing new in /dev/shm, the socket never accepted, modes
and times unchanged, the thread and the other run alive), not from what the payload says.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.counting_listener import UnixListener
from tests.support.xdist_groups import SANDBOXES
from tests.tools.test_sandbox_support import BACKENDS, body, run, wait_no_leftovers
from tools.isolation.pool import SPARES

pytestmark = SANDBOXES


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def test_the_hosts_dev_shm_is_neither_read_nor_written(backend):
    tag = uuid.uuid4().hex[:12]
    marker, planted = Path(f"/dev/shm/host-marker-{tag}"), Path(f"/dev/shm/from-sandbox-{tag}")
    marker.write_text(f"HOST-SHM-{tag}")
    try:
        code = (f"import os\nfor act in (lambda: print(open({str(marker)!r}).read()),\n"
                f"            lambda: open({str(planted)!r}, 'w').write('x' * 2**20), "
                "lambda: print(os.listdir('/dev/shm'))):\n"
                "    try:\n        act()\n    except OSError as e:\n        print('blocked', type(e).__name__)")
        out = run(backend=backend, code=code)
    finally:
        marker.unlink()
    assert f"HOST-SHM-{tag}" not in out.output and f"host-marker-{tag}" not in out.output, out.output
    assert not planted.exists()
    assert wait_no_leftovers() == []


@pytest.fixture
def made_workdirs(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The run_python working directories this test process makes (other xdist workers make their own)."""
    made = set(SPARES.spare_workdirs())  # a spare made earlier may serve the call
    real = tempfile.mkdtemp

    def recording(*args: Any, **kwargs: Any) -> str:
        path = real(*args, **kwargs)
        if Path(path).name.startswith("run_python-"):
            made.add(path)
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    return made


def _left_workdirs(made: set[str], seconds: float = 5.0) -> set[str]:
    """Of the working directories this process made, those still there that are not an idle spare's."""
    deadline = time.monotonic() + seconds
    while True:
        left = {p for p in made if Path(p).exists()} - set(SPARES.spare_workdirs())
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@pytest.mark.parametrize("kept_open", [False, True], ids=["files", "deleted_but_open"])
def test_a_write_bomb_stops_at_the_calls_disk_cap_and_leaves_nothing(backend, kept_open, made_workdirs):
    keep = "    f.flush(); os.unlink(f'f{i}'); held.append(f)\n" if kept_open else "    f.close()\n"
    code = ("import os\nheld = []\nfor i in range(20):\n    f = open(f'f{i}', 'wb'); f.write(b'0' * (32 * 2**20))\n"
            + keep + "print('wrote 640 MiB')")
    out = run(backend=backend, code=code, timeout=20, SANDBOX_DISK_MB=100)
    assert not out.ok and "wrote 640 MiB" not in out.output, out.output[:400]
    if backend == "landlock":  # the runner's disk watch; bwrap's /tmp is a 128 MiB tmpfs (No space left)
        assert out.error_kind == "disk" and "disk limit of 100 MiB" in out.output, out.output[:400]
    else:
        assert "No space left" in out.output, out.output[:400]
    assert wait_no_leftovers() == []
    assert _left_workdirs(made_workdirs) == set()


def test_a_host_pathname_socket_is_unreachable(backend, tmp_path):
    listener = UnixListener(tmp_path / "host.sock")
    path = str(listener.path)
    attempts = {
        "stream": f"s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect({path!r})",
        "dgram": f"s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'x', {path!r})",
        "pair_dgram": f"a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.sendto(b'x', {path!r})",
        "pair_stream": f"a, b = socket.socketpair(); a.connect({path!r})",
    }
    code = "import socket\n" + "".join(
        f"try:\n    {act}\n    print('{name} ESCAPED')\n"
        f"except OSError as e:\n    print('{name} blocked', type(e).__name__)\n"
        for name, act in attempts.items())
    try:
        out = run(backend=backend, code=code)
        time.sleep(0.3)
    finally:
        listener.close()
    assert listener.accepted == 0 and "ESCAPED" not in out.output, out.output
    assert all(f"{name} blocked" in out.output for name in attempts), out.output


def test_chmod_utime_chown_and_xattrs_of_host_files_change_nothing(backend, tmp_path):
    target, folder = tmp_path / "app.py", tmp_path / "traces"
    target.write_text("print('app')")
    folder.mkdir()
    os.utime(target, (1_000_000, 1_000_000))
    before = [(os.stat(p).st_mode, os.stat(p).st_mtime, os.listxattr(p)) for p in (target, folder)]
    acts = [f"os.chmod({str(p)!r}, 0)" for p in (target, folder)] + [
        f"os.utime({str(target)!r}, (0, 0))", f"os.chown({str(target)!r}, 0, 0)",
        f"os.setxattr({str(target)!r}, 'user.pwned', b'1')"]
    code = "import os\n" + "".join(f"try:\n    {a}\nexcept OSError as e:\n    print(type(e).__name__)\n" for a in acts)
    out = run(backend=backend, code=code + "print('done')")
    assert "done" in body(out), out.output
    assert [(os.stat(p).st_mode, os.stat(p).st_mtime, os.listxattr(p)) for p in (target, folder)] == before
    assert target.read_text() == "print('app')"


HOST_THREADS = """
import os, threading, time
ready = threading.Event()
def worker():
    print(os.getpid(), threading.get_native_id(), flush=True)
    time.sleep(60)
threading.Thread(target=worker, daemon=True).start()
time.sleep(60)
"""


def test_signals_to_a_host_process_and_its_threads_fail(backend):
    host = subprocess.Popen([sys.executable, "-c", HOST_THREADS], stdout=subprocess.PIPE, text=True)
    try:
        pid, tid = (int(x) for x in host.stdout.readline().split())
        code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
                f"for name, args in [('tkill', (200, {tid}, 9)), ('tgkill', (234, {pid}, {tid}, 9)),\n"
                f"                   ('kill', (62, {pid}, 9)), ('kill_thread', (62, {tid}, 9)), "
                f"('kill_group', (62, -{pid}, 9)),\n"
                f"                   ('setaffinity', (203, {tid}, 8, ctypes.byref(ctypes.c_ulong(1)))),\n"
                f"                   ('prlimit', (302, {pid}, 7, None, ctypes.byref((ctypes.c_ulong * 2)())))]:\n"
                "    print(name, 'ESCAPED' if libc.syscall(*args) == 0 else 'blocked')")
        out = run(backend=backend, code=code)
        time.sleep(0.3)
        assert host.poll() is None, "the host process was killed"
        assert "ESCAPED" not in out.output and out.output.count("blocked") == 7, out.output
    finally:
        host.kill()
        host.wait()


def _pid_named(comm: str, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == comm:
                    return int(entry)
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no process named {comm}")


def test_one_run_cannot_signal_another_runs_process(backend):
    comm = f"victim{uuid.uuid4().hex[:8]}"
    victim_code = (f"import ctypes, time\nctypes.CDLL(None).prctl(15, {comm.encode()!r}, 0, 0, 0)\n"
                   "time.sleep(4)\nprint('victim alive')")
    result: dict[str, object] = {}
    victim = threading.Thread(target=lambda: result.update(out=run(backend=backend, code=victim_code, timeout=15)))
    victim.start()
    try:
        pid = _pid_named(comm)
        code = ("import ctypes, os, signal\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                f"for name, act in [('kill', lambda: os.kill({pid}, 9)), ('killpg', lambda: os.killpg({pid}, 9)),\n"
                f"                  ('tkill', lambda: libc.syscall(200, {pid}, 9) == 0 or 1 / 0),\n"
                f"                  ('tgkill', lambda: libc.syscall(234, {pid}, {pid}, 9) == 0 or 1 / 0),\n"
                f"                  ('probe', lambda: os.kill({pid}, 0)),\n"
                f"                  ('renice', lambda: os.setpriority(os.PRIO_PROCESS, {pid}, 19)),\n"
                f"                  ('affinity', lambda: os.sched_setaffinity({pid}, {{0}}))]:\n"
                "    try:\n        act()\n        print(name, 'ESCAPED')\n"
                "    except (OSError, ZeroDivisionError) as e:\n        print(name, 'blocked', type(e).__name__)")
        out = run(backend=backend, code=code)
    finally:
        victim.join()
    assert "ESCAPED" not in out.output and out.output.count("blocked") == 7, out.output
    victim_out = result["out"]
    assert victim_out.ok and "victim alive" in victim_out.output, victim_out.output
