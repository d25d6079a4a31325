"""run_python abuse suite: escapes and resource attacks must fail, leave the host untouched and leave no process.

Each payload prints ESCAPED only if the forbidden action succeeded; the suite asserts it never does.
Every payload runs on both backends, each forced with SANDBOX_MODE (bwrap; landlock + seccomp).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from config import PROJECT_ROOT
from tests.support.counting_listener import TCPListener
from tests.support.xdist_groups import SANDBOXES
from tests.tools.test_sandbox_support import BACKENDS, body, run, wait_no_leftovers

pytestmark = SANDBOXES

SECRET = "sk-test-SANDBOX-must-not-see-9f3a7c"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def _run(*argv: str, timeout: int | None = None) -> str:
    """A payload expression that runs `argv` as a process; it raises unless the process exits 0."""
    limit = f", timeout={timeout}" if timeout else ""
    return f"__import__('subprocess').run({list(argv)!r}, check=True, capture_output=True{limit})"


def _try(action: str) -> str:
    """A payload that prints ESCAPED plus what it got when `action` (an expression) succeeds."""
    return (f"try:\n    _r = {action}\n    print('ESCAPED', repr(_r)[:200])\n"
            "except BaseException as e:\n    print('blocked', type(e).__name__)")


READS = {
    "etc_shadow": "open('/etc/shadow').read()",
    "etc_passwd": "open('/etc/passwd').read()",
    "root_home": "[f for f in __import__('os').listdir('/root') if f != '.pyenv'] or 1/0",  # only the interpreter
    "root_bashrc": "open('/root/.bashrc').read()",
    "repo_config": f"open({str(PROJECT_ROOT / 'config.py')!r}).read()",
    "repo_listing": f"[f for f in __import__('os').listdir({str(PROJECT_ROOT)!r}) if f != '.venv'] or 1/0",
    "work_notes": "__import__('os').listdir('/work/notes')",
    "home": "__import__('os').listdir('/home')",
    "sys_fs": "__import__('os').listdir('/sys/class')",
    "host_root_via_pid1": "__import__('os').listdir('/proc/1/root/root')",
    "host_ssh_keys": "open('/etc/ssh/ssh_host_rsa_key').read()",
    "python_cache_of_root": "__import__('os').listdir('/root/.cache')",
    "dev_mem": "open('/dev/mem', 'rb').read(1)",
    "dev_disk": "__import__('os').listdir('/dev/disk')",
    "kernel_kallsyms_addr": "[l for l in open('/proc/kallsyms') if not l.startswith('0000000000000000')][:1] or 1/0",
}


@pytest.mark.parametrize("name", sorted(READS))
def test_files_outside_the_sandbox_are_not_readable(backend, name):
    out = run(backend=backend, code=_try(READS[name]))
    assert "ESCAPED" not in out.output, out.output
    assert "blocked" in out.output


def test_files_next_to_the_attachment_stay_hidden(backend, tmp_path):
    attachment = tmp_path / "task.csv"
    attachment.write_text("a\n1\n")
    (tmp_path / "answer_key.txt").write_text("the secret answer")
    listing = (f"import os\ntry:\n    print(os.listdir({str(tmp_path)!r}))\n"
               "except PermissionError:\n    print('listing refused')\n")
    out = run(backend=backend, code=listing + _try(f"open({str(tmp_path / 'answer_key.txt')!r}).read()") + "\n"
              + f"print(open({str(attachment)!r}).read().split())", attachments=[attachment])
    # bwrap shows the attachment alone in its folder; Landlock refuses to list the folder at all.
    assert ("['task.csv']" in out.output) != ("listing refused" in out.output), out.output
    assert "['a', '1']" in out.output and "ESCAPED" not in out.output and "secret answer" not in out.output


def test_a_directory_attachment_is_not_bound(backend, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "inside.txt").write_text("other session's file")
    out = run(backend=backend, code=_try(f"open({str(folder / 'inside.txt')!r}).read()"), attachments=[folder])
    assert "ESCAPED" not in out.output and "other session" not in out.output
    assert f"attachment {folder} is a directory" in out.output


def test_a_symlink_to_a_credential_file_is_not_bound(backend, tmp_path):
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}")
    link = tmp_path / "data.csv"
    link.symlink_to(tmp_path / ".env")
    out = run(backend=backend, code=_try(f"open({str(link)!r}).read()"), attachments=[link])
    assert SECRET not in out.output and "ESCAPED" not in out.output
    assert "system or credential file" in out.output


ENV_PAYLOADS = {
    "environ": "import os; print(dict(os.environ))",
    "environ_bytes": "import os; print(os.environb)",
    "proc_self_environ": "print(open('/proc/self/environ').read())",
    "proc_1_environ": _try("open('/proc/1/environ').read()"),
    "parent_environ": "import os\n" + _try("open(f'/proc/{os.getppid()}/environ').read()"),
    "every_visible_process": (
        "import os\nfor p in os.listdir('/proc'):\n    if p.isdigit():\n"
        "        for f in ('environ', 'cmdline'):\n            try: print(p, f, open(f'/proc/{p}/{f}', 'rb').read())\n"
        "            except OSError as e: print(p, f, type(e).__name__)"),
    "grep_visible_filesystem": (
        "import os\nfiles = [f'/proc/self/{n}' for n in ('environ', 'cmdline', 'auxv', 'status', 'mountinfo')]\n"
        "for top in ('/tmp', '/etc', '/dev/shm'):\n    for d, _, fs in os.walk(top):\n"
        "        files += [os.path.join(d, f) for f in fs]\n"
        "for path in files:\n    try:\n"
        f"        if {SECRET!r}.encode() in open(path, 'rb').read(1 << 20): print('ESCAPED', path)\n"
        "    except OSError: pass\nprint('walked', len(files))"),
    "subprocess_env": "import subprocess; print(subprocess.run(['env'], capture_output=True, text=True).stdout)",
}


@pytest.mark.parametrize("name", sorted(ENV_PAYLOADS))
def test_parent_secrets_are_invisible(backend, name, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HF_TOKEN", SECRET)
    out = run(backend=backend, code=ENV_PAYLOADS[name], OPENAI_API_KEY="sk-settings-value-kept-out")
    assert "confinement failed" not in out.output
    assert SECRET not in out.output and "sk-settings" not in out.output and "***" not in out.output
    assert "OPENAI_API_KEY" not in out.output and "ESCAPED" not in out.output, out.output
    # Landlock refuses /proc outright (PermissionError); bwrap shows its own, empty-handed /proc.
    assert out.ok or "blocked" in out.output or (backend == "landlock" and "PermissionError" in out.output), out.output


def test_environment_is_the_allowlist(backend):
    out = run(backend=backend, code="import os; print(sorted(os.environ))")
    allowed = {"PATH", "HOME", "TMPDIR", "LANG", "MPLBACKEND", "MPLCONFIGDIR", "OPENBLAS_NUM_THREADS",
               "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PWD", "LC_CTYPE"}
    assert set(eval(body(out))) <= allowed  # noqa: S307 - our own test's output, a list literal


WRITES = {
    "usr": "/usr/lib/pwned.txt",
    "usr_bin": "/usr/bin/pwned",
    "venv_site_packages": None,  # filled below: the venv is bound read-only
    "etc": "/etc/pwned",
    "etc_ld_cache": "/etc/ld.so.cache",
    "root": "/root/pwned",
    "repo": str(PROJECT_ROOT / "pwned.py"),
    "work": "/work/pwned",
    "proc_sysrq": "/proc/sysrq-trigger",
    "proc_sys": "/proc/sys/kernel/hostname",
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_outside_the_working_dir_fail_and_leave_the_host_unchanged(backend, name):
    import sys

    target = WRITES[name] or str(Path(sys.prefix) / "lib/python3.11/site-packages/pwned.py")
    before = Path(target).read_bytes() if Path(target).is_file() and not target.startswith("/proc") else None
    out = run(backend=backend, code=_try(f"open({target!r}, 'w').write('pwned')"))
    assert "ESCAPED" not in out.output, out.output
    if before is None and not target.startswith("/proc"):
        assert not Path(target).exists()
    elif before is not None:
        assert Path(target).read_bytes() == before


def test_host_tmp_is_not_the_sandbox_tmp(backend, tmp_path):
    host_file = tmp_path / "host.txt"
    host_file.write_text("host data")
    out = run(backend=backend, code=_try(f"open({str(host_file)!r}).read()") + "\n"
              + _try(f"open({str(host_file)!r}, 'w').write('x')"))
    assert "ESCAPED" not in out.output
    assert host_file.read_text() == "host data"


NETWORK = {
    "tcp_loopback_server": "__import__('socket').create_connection(('127.0.0.1', {port}), timeout=2)",
    "tcp_external": "__import__('socket').create_connection(('1.1.1.1', 80), timeout=2)",
    "dns": "__import__('socket').getaddrinfo('example.com', 80)",
    "udp_send": "__import__('socket').socket(2, 2).sendto(b'x', ('8.8.8.8', 53))",
    "raw_socket": "__import__('socket').socket(17, 3, 0)",
    "http_urllib": "__import__('urllib.request').request.urlopen('http://127.0.0.1:{port}/', timeout=2)",
    "ipv6_loopback": "__import__('socket').create_connection(('::1', {port}), timeout=2)",
    "unix_socket_of_host": "__import__('socket').socket(1, 1).connect('/run/systemd/private')",
    "curl_subprocess": _run("curl", "-sS", "http://127.0.0.1:{port}/"),
}


@pytest.mark.parametrize("name", sorted(NETWORK))
def test_network_is_unreachable(backend, name):
    server = TCPListener()
    try:
        out = run(backend=backend, code=_try(NETWORK[name].format(port=server.port)))
    finally:
        server.close()
    assert "ESCAPED" not in out.output, out.output
    assert server.accepted == 0


PROCESS_ESCAPES = {
    "setuid_root": "__import__('os').setuid(0)",
    "kill_host_pytest": f"__import__('os').kill({os.getpid()}, 0)",
    "kill_pid1": "__import__('os').kill(1, 9)",
    "ptrace_pid1": "open('/proc/1/mem', 'rb').read(1)",
    "mount_tmpfs": _run("mount", "-t", "tmpfs", "x", "/tmp"),
    "su_root": _run("su", "-c", "id", timeout=3),
    "userns_shadow": _run("unshare", "-r", "cat", "/etc/shadow"),
    "chroot": "__import__('os').chroot('/tmp')",
    "capabilities": "[l for l in open('/proc/self/status') if l.startswith('CapEff') and l.split()[1].strip('0')] "
                    "or 1/0",
    "os_system_shadow": "__import__('os').system('cat /etc/shadow') == 0 or 1/0",
    "subprocess_read_repo": _run("cat", str(PROJECT_ROOT / "config.py")),
}


@pytest.mark.parametrize("name", sorted(PROCESS_ESCAPES))
def test_privileged_process_operations_fail(backend, name):
    out = run(backend=backend, code=_try(PROCESS_ESCAPES[name]))
    assert "ESCAPED" not in out.output, out.output
    assert wait_no_leftovers() == []


def test_spawned_processes_are_confined_too(backend):
    out = run(backend=backend, code="import subprocess\nprint(subprocess.run(['sh', '-c', "
              "'id -u; ls -A /root 2>&1; cat /etc/shadow 2>&1; "
              "echo $HF_TOKEN'], capture_output=True, text=True).stdout)", HF_TOKEN=SECRET)
    assert out.ok
    lines = body(out).strip().splitlines()
    assert lines[0].isdigit() and lines[0] != "0"  # never root: the call's own uid, or 65534
    # bwrap's /root holds only the bound interpreter; Landlock refuses to list it.
    assert lines[1] == ".pyenv" or "Permission denied" in lines[1] or not os.path.isdir("/root/.pyenv")
    assert any("No such file" in ln or "Permission denied" in ln for ln in lines[1:])
    assert "root:" not in out.output and SECRET not in out.output


SANDBOX_OBJECT_WALKS = {
    "subclasses_to_os": ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()"
                         "._module.__builtins__['__import__']('os').popen('cat /etc/shadow').read() or 1 / 0"),
    "frame_walk": "__import__('sys')._getframe(0).f_globals['__builtins__'].open('/etc/shadow').read()",
    "format_string_attr": "'{0.__class__.__mro__[1].__subclasses__}'.format(()) and open('/root/.profile').read()",
    "gc_objects": "[o for o in __import__('gc').get_objects() if isinstance(o, dict) and 'OPENAI_API_KEY' in o][0]",
    "ctypes_unshare": "(__import__('ctypes').CDLL(None).unshare(0x10000000) == 0 or 1 / 0) "
                      "and open('/etc/shadow').read()",
}


@pytest.mark.parametrize("name", sorted(SANDBOX_OBJECT_WALKS))
def test_interpreter_tricks_reach_nothing(backend, name):
    out = run(backend=backend, code=_try(SANDBOX_OBJECT_WALKS[name]))
    assert "root:" not in out.output and "ESCAPED" not in out.output, out.output


RESOURCE_ATTACKS = {
    # A fork bomb ends at the deadline, or sooner at the whole-call memory cap: both are clear stops.
    "fork_bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
                  {"timeout", "memory"}),
    "shell_fork_bomb": ("import os; os.system(':(){ :|:& };:')\nwhile True: pass", {"timeout"}),
    "thread_bomb": ("import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(100,)).start()",
                    {"exit_code", "timeout"}),
    "infinite_loop": ("while True:\n    pass", {"timeout"}),
    "sleep_forever": ("import time; time.sleep(1000)", {"timeout"}),
    "memory_bytes": ("x = b' ' * (4 * 1024 ** 3)", {"memory"}),
    "memory_growth": ("l = []\nwhile True:\n    l.append(bytearray(10 ** 7))", {"memory"}),
    "memory_numpy": ("import numpy as np; a = np.ones(10 ** 10)", {"memory"}),
    "deep_recursion": ("def f(n):\n    return f(n + 1)\nf(0)", {"exit_code"}),
    "recursion_limit_lifted": ("import sys\nsys.setrecursionlimit(10 ** 8)\ndef f(n):\n    return f(n + 1)\nf(0)",
                               {"signal", "memory", "exit_code", "timeout"}),
    "disk_fill": ("open('big', 'wb').write(b'0' * (200 * 1024 ** 2))", {"file_size", "exit_code", "memory"}),
    # bwrap: its /tmp tmpfs fills up; landlock: the disk watch stops it at 10,000 files (or SANDBOX_DISK_MB).
    "many_small_files": ("i = 0\nwhile True:\n    open(f'f{i}', 'w').write('x' * 4096); i += 1",
                         {"exit_code", "timeout", "disk"}),
    "open_files": ("fs = [open('/dev/null') for _ in range(100000)]", {"exit_code"}),
    "giant_output": ("print('x' * 10 ** 9)", {"output_limit", "memory"}),
    "endless_stderr": ("import sys\nwhile True:\n    sys.stderr.write('e' * 4096)", {"output_limit"}),
    "orphan_busy_child": ("import subprocess\n"
                          "subprocess.Popen(['sh', '-c', 'while :; do :; done'], start_new_session=True)\n"
                          "import time; time.sleep(100)", {"timeout"}),
}


@pytest.mark.parametrize("name", sorted(RESOURCE_ATTACKS))
def test_resource_attacks_end_with_a_clear_reason_and_no_leftovers(backend, name):
    code, reasons = RESOURCE_ATTACKS[name]
    # An attack that may end at the deadline gets a short one (a busy machine only makes it end there); one
    # that must end at another cap gets room to reach it on a loaded machine (it ends sooner by itself).
    out = run(backend=backend, code=code, timeout=2 if "timeout" in reasons else 10, SANDBOX_MEMORY_MB=512)
    assert not out.ok and out.error_kind in reasons, (out.error_kind, out.output[:500])
    assert body(out).startswith("Error: run_python stopped:"), out.output[:300]  # its own stop, not the executor's
    assert wait_no_leftovers() == []
    assert body(run(backend=backend, code="print('still fine')")).strip() == "still fine"


def test_a_fork_bomb_does_not_starve_a_concurrent_call(backend):
    """Each call has its own process budget: a bomb running in one call leaves another call able to fork."""
    bomb_result: dict[str, object] = {}
    bomb = threading.Thread(target=lambda: bomb_result.update(out=run(backend=backend,
                                                                      code=RESOURCE_ATTACKS["fork_bomb"][0],
                                                                      timeout=4)))
    bomb.start()
    try:
        time.sleep(1.5)  # the bomb has used up its budget by now
        out = run(backend=backend, code="import subprocess\n"
                  "print([subprocess.run(['true']).returncode for _ in range(20)])\n"
                  "import multiprocessing as mp\nwith mp.Pool(4) as p:\n    print(sum(p.map(abs, range(-10, 0))))")
    finally:
        bomb.join()
    assert out.ok, out.output
    assert body(out).splitlines() == ["[" + ", ".join(["0"] * 20) + "]", "55"]
    assert bomb_result["out"].error_kind == "timeout"
    assert wait_no_leftovers() == []


def test_memory_is_capped_for_the_whole_call_not_per_process(backend):
    """Four processes of ~200 MiB each stay under the per-process cap (512 MiB) but not under the call's."""
    code = ("import os, time\npids = []\nfor _ in range(4):\n    pid = os.fork()\n    if pid == 0:\n"
            "        block = b'x' * (200 * 2**20)\n        time.sleep(30)\n        os._exit(0)\n    pids.append(pid)\n"
            "for pid in pids:\n    os.waitpid(pid, 0)\nprint('all held')")
    out = run(backend=backend, code=code, timeout=20, SANDBOX_MEMORY_MB=512)
    assert not out.ok and out.error_kind == "memory", out.output[:500]
    assert "for the whole call" in out.output
    assert wait_no_leftovers() == []
