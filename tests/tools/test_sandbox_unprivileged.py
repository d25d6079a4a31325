"""The app as an unprivileged user (as on a Docker Space): degraded refused, Landlock confines, environ unreadable.

Run for real: the test (root) starts the app-side code as a uid of its own with `setpriv`, using a
Python install that uid can read (the system one, with the venv's packages on sys.path).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from config import PROJECT_ROOT
from tests.support.xdist_groups import SANDBOXES
from tools.isolation.uids import lease

SYSTEM_PYTHON = "/usr/bin/python3"
SITE = next((p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)), "")


def _usable() -> bool:
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.access(SYSTEM_PYTHON, os.X_OK):
        return False
    version = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True)
    return version.stdout.strip() == str(sys.version_info[:2]) and os.stat(SITE).st_mode & 0o005 == 0o005


pytestmark = [pytest.mark.integration, SANDBOXES,
              pytest.mark.skipif(not _usable(), reason="needs root, setpriv and a system Python of the venv's version")]


@pytest.fixture
def uid():
    held = lease()
    yield held.uid
    held.release()


def _as(uid: int, *cmd: str, env: dict[str, str] | None = None, **kw) -> subprocess.Popen[str]:
    prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
              "--"]
    return subprocess.Popen(prefix + list(cmd), env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", **(env or {})},
                            cwd=PROJECT_ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


@pytest.mark.parametrize("hardened", [False, True])
def test_same_uid_process_reads_the_app_environment_only_when_not_hardened(uid, hardened):
    boot = f"import sys; sys.path[:0] = [{SITE!r}, '.']\n"
    boot += "from hardening import make_non_dumpable; make_non_dumpable()\n" if hardened else ""
    app = _as(uid, SYSTEM_PYTHON, "-c", boot + "print('ready', flush=True); import time; time.sleep(30)",
              env={"OPENAI_API_KEY": "sk-app-secret-4711"})
    try:
        assert app.stdout.readline().strip() == "ready"
        reader = _as(uid, "cat", f"/proc/{app.pid}/environ")
        out, err = reader.communicate(timeout=10)
        assert ("sk-app-secret-4711" in out) is not hardened, (out, err)
    finally:
        app.kill()
        app.communicate()


CODE = r"""
import os, socket
print("uid", os.getuid())
for what, act in [("environ", lambda: open(f"/proc/{os.getppid()}/environ").read()),
                  ("kill", lambda: os.kill(os.getppid(), 0)),
                  ("net", lambda: socket.create_connection(("127.0.0.1", 9), timeout=1)),
                  ("repo", lambda: open("config.py").read())]:
    try:
        act()
        print(what, "ESCAPED")
    except OSError as exc:
        print(what, "blocked", type(exc).__name__)
"""


def _call_run_python(uid: int, mode: str) -> str:
    script = (f"import sys; sys.path[:0] = [{SITE!r}, '.']\nfrom tools.__main__ import main\n"
              f"sys.exit(main(['call', 'run_python', '--args-json', {json.dumps(json.dumps({'code': CODE}))}]))")
    proc = _as(uid, SYSTEM_PYTHON, "-c", script, env={"SANDBOX_MODE": mode, "OPENAI_API_KEY": "sk-app-secret-4711",
                                                     "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"})
    out, err = proc.communicate(timeout=60)
    return out + err


def test_unprivileged_app_refuses_degraded(uid):
    out = _call_run_python(uid, "degraded")
    assert "run_python is unavailable" in out and "degraded is refused" in out
    assert "sk-app-secret" not in out


def test_unprivileged_app_confines_with_landlock(uid):
    out = _call_run_python(uid, "landlock")
    assert out.startswith("[sandbox: landlock+seccomp]"), out
    assert f"uid {uid}" in out and "ESCAPED" not in out and "sk-app-secret" not in out
    for what in ("environ", "kill", "net", "repo"):
        assert f"{what} blocked" in out, out


BOMB_SCRIPT = """
import sys, threading, time
sys.path[:0] = [{site!r}, '.']
from tools.isolation import Limits, run_sandboxed
limits = Limits(cpu_seconds=5, memory_mb=512)
forks = "import subprocess\\nprint([subprocess.run(['true']).returncode for _ in range(5)])"
assert run_sandboxed(forks, limits=limits, wall_seconds=5, backend={backend!r}).reason == "ok"  # leaves a spare
time.sleep(1)
bomb = "import os\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass"
ended = {{}}
thread = threading.Thread(target=lambda: ended.update(r=run_sandboxed(bomb, limits=limits, wall_seconds=3,
                                                                      backend={backend!r}, warm=False)))
thread.start()
time.sleep(1.5)
other = run_sandboxed(forks, limits=limits, wall_seconds=5, backend={backend!r})  # the spare started before the bomb
thread.join()
print("bomb", ended["r"].reason, "other", other.reason, other.stdout.strip())
"""


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_unprivileged_fork_bomb_leaves_a_concurrent_call_able_to_fork(uid, backend):
    proc = _as(uid, SYSTEM_PYTHON, "-c", BOMB_SCRIPT.format(site=SITE, backend=backend))
    out, err = proc.communicate(timeout=60)
    # The bomb ends at its deadline, or sooner at the whole-call memory cap; the other call forks either way.
    assert out.strip() in ("bomb timeout other ok [0, 0, 0, 0, 0]", "bomb memory other ok [0, 0, 0, 0, 0]"), \
        (out, err[-2000:])


def test_an_unprivileged_app_with_many_threads_can_start_both_backends(uid):
    """The app's own threads count against its uid; the sandbox's process budget must not include them."""
    script = (f"import sys, threading; sys.path[:0] = [{SITE!r}, '.']\n"
              "stop = threading.Event()\nthreads = [threading.Thread(target=stop.wait) for _ in range(100)]\n"
              "[t.start() for t in threads]\n"
              "from tools.isolation.landlock_backend import probe_landlock\n"
              "from tools.isolation.launcher import probe_namespaces\n"
              "print(probe_namespaces(False), probe_landlock(False))\nstop.set()")
    proc = _as(uid, SYSTEM_PYTHON, "-c", script)
    out, err = proc.communicate(timeout=60)
    assert out.strip() == "None None", (out, err[-1000:])


HOST_SCRIPT = """
import json, os, socket, sys, tempfile, threading, time, uuid
sys.path[:0] = [{site!r}, '.']
from tools.isolation import Limits, run_sandboxed
home = tempfile.mkdtemp()  # the app's own files (its uid's): a trace folder, a module, a socket
tag = uuid.uuid4().hex[:10]
marker = f"/dev/shm/app-marker-{{tag}}"
open(marker, "w").write("APP-SHM-" + tag)
module = os.path.join(home, "app.py")
open(module, "w").write("print('app')")
listener = socket.socket(socket.AF_UNIX)
listener.bind(os.path.join(home, "app.sock"))
listener.listen(4)
listener.setblocking(False)
tid = []
threading.Thread(target=lambda: (tid.append(threading.get_native_id()), time.sleep(60)), daemon=True).start()
time.sleep(0.2)
code = f'''
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, act):
    try:
        print(name, "ESCAPED" if act() is not False else "blocked")
    except OSError as e:
        print(name, "blocked", type(e).__name__)
attempt("shm_read", lambda: "APP-SHM" in open({{marker!r}}).read() or False)
attempt("shm_write", lambda: open("/dev/shm/from-call-{{tag}}", "w").write("x") and False)
attempt("chmod", lambda: os.chmod({{module!r}}, 0) or False)  # may "succeed" without effect: the host checks the mode
attempt("socket", lambda: socket.socket(socket.AF_UNIX).connect({{os.path.join(home, "app.sock")!r}}))
attempt("tkill", lambda: libc.syscall(200, {{tid[0]}}, 0) == 0 or False)
attempt("kill_app", lambda: libc.syscall(62, {{os.getpid()}}, 0) == 0 or False)
'''
report = {{}}
limits = Limits(cpu_seconds=10, memory_mb=512, disk_mb=64)
for backend in ("bwrap", "landlock"):
    r = run_sandboxed(code, limits=limits, wall_seconds=10, backend=backend, warm=False)
    bomb = run_sandboxed("for i in range(10):\\n    open(f'f{{i}}', 'wb').write(b'0' * (32 * 2**20))", limits=limits,
                         wall_seconds=10, backend=backend, warm=False)
    accepted = 0
    try:
        while listener.accept():
            accepted += 1
    except BlockingIOError:
        pass
    report[backend] = {{"out": r.stdout + r.stderr, "mode": oct(os.stat(module).st_mode & 0o777),
                        "shm_left": os.path.exists(f"/dev/shm/from-call-{{tag}}"), "accepted": accepted,
                        "bomb": bomb.reason, "bomb_detail": bomb.detail}}
os.unlink(marker)
print(json.dumps(report))
"""


def test_an_unprivileged_app_shares_nothing_with_its_calls_on_either_backend(uid):
    """The Space's case (non-root, same uid): host /dev/shm, the app's files, sockets and threads stay out of reach."""
    proc = _as(uid, SYSTEM_PYTHON, "-c", HOST_SCRIPT.format(site=SITE))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out.strip().splitlines()[-1])
    for backend, seen in report.items():
        lines = seen["out"].strip().splitlines()
        assert len(lines) == 6 and all(" blocked" in line for line in lines), (backend, seen["out"])
        assert seen["mode"] == "0o644" and not seen["shm_left"] and seen["accepted"] == 0, (backend, seen)
        # landlock: the disk watch (64 MiB); bwrap: its 128 MiB /tmp tmpfs fills (an OSError, exit code 1).
        assert seen["bomb"] == ("disk" if backend == "landlock" else "exit_code"), (backend, seen["bomb_detail"])
