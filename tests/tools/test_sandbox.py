"""run_python: benign programs print the right answers; limits, exit reasons and modes behave as documented."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from config import load_settings
from tests.support.xdist_groups import SANDBOXES
from tests.tools.test_sandbox_support import BACKENDS, body, run, wait_no_leftovers
from tools.core.errors import MissingDependency
from tools.core.registry import build_registry
from tools.isolation import DEGRADED_LABEL, LANDLOCK_LABEL, Limits, make_sandbox_tools, run_sandboxed
from tools.isolation import modes as sandbox_modes
from tools.isolation import tool as sandbox_tool

pytestmark = SANDBOXES

BENIGN = {
    "math": ("import math; print(math.factorial(10), math.isqrt(99), round(math.pi, 5))", "3628800 9 3.14159"),
    "statistics": ("import statistics as s; print(s.mean([1, 2, 3, 4]), s.median([5, 1, 3]), s.mode('aab'))",
                   "2.5 3 a"),
    "fractions": ("from fractions import Fraction as F; print(F(1, 3) + F(1, 6))", "1/2"),
    "decimal": ("from decimal import Decimal as D; print(D('0.1') + D('0.2'))", "0.3"),
    "re": ("import re; print(re.findall(r'\\d+', 'a1b22c333'))", "['1', '22', '333']"),
    "json": ("import json; print(json.dumps({'b': 1, 'a': [1, 2]}, sort_keys=True))", '{"a": [1, 2], "b": 1}'),
    "datetime": ("import datetime as d; print((d.date(2024, 3, 1) - d.date(2024, 2, 1)).days)", "29"),
    "collections": ("from collections import Counter; print(Counter('mississippi').most_common(2))",
                    "[('i', 4), ('s', 4)]"),
    "itertools": ("import itertools as it; print(len(list(it.permutations(range(5), 3))))", "60"),
    "functools": ("import functools; print(functools.reduce(lambda a, b: a * b, range(1, 7)))", "720"),
    "random": ("import random; random.seed(7); a = random.random(); random.seed(7); print(a == random.random())",
               "True"),
    "string": ("import string; print(string.ascii_lowercase[::5])", "afkpuz"),
    "numpy": ("import numpy as np; print(int(np.arange(1, 101).sum()), np.linalg.det(np.eye(3)))", "5050 1.0"),
    "pandas": ("import pandas as pd; df = pd.DataFrame({'x': [1, 2, 3]}); print(df.x.sum())", "6"),
    "final_expression": ("x = 6\nx * 7", "42"),
    "multiprocessing": ("import multiprocessing as mp\nwith mp.Pool(2) as p:\n    print(sum(p.map(abs, [-1, -2, -3])))",
                        "6"),
    "unicode": ("print('naïve café — 東京')", "naïve café — 東京"),
    "write_then_read": ("open('a.txt', 'w').write('hello'); print(open('a.txt').read())", "hello"),
    "scratch_tmp": ("import tempfile, os; p = tempfile.mkstemp()[1]; open(p, 'w').write('x'); "
                    "print(os.path.getsize(p))", "1"),
    "matplotlib": ("import matplotlib.pyplot as plt; plt.plot([1, 2]); plt.savefig('p.png'); import os; "
                   "print(os.path.getsize('p.png') > 1000)", "True"),
    # Landlock has no /dev/shm: these run on unnamed shared semaphores, socketpairs and no-op chmods.
    "process_pool_executor": ("from concurrent.futures import ProcessPoolExecutor as P\nwith P(2) as ex:\n"
                              "    print(list(ex.map(abs, [-1, -2])))", "[1, 2]"),
    "multiprocessing_queue": ("import multiprocessing as mp\nq = mp.Queue()\np = mp.Process(target=q.put, args=(5,))\n"
                              "p.start()\nprint(q.get())\np.join()", "5"),
    "asyncio": ("import asyncio\nprint(asyncio.run(asyncio.sleep(0, result=7)))", "7"),
    "shutil_copy": ("import shutil; open('a', 'w').write('x'); shutil.copy('a', 'b'); shutil.copy2('a', 'c'); "
                    "print(open('b').read() + open('c').read())", "xx"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(BENIGN))
def test_benign_program_prints_the_right_answer(name, backend):
    code, expected = BENIGN[name]
    out = run(code, backend=backend)
    assert out.ok, out.output
    assert body(out).strip() == expected


def _xlsx(path: Path) -> Path:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Item", "Qty", "Price"])
    for row in (("apple", 3, 0.5), ("pear", 4, 0.25), ("plum", 10, 0.1)):
        ws.append(row)
    wb.create_sheet("Other").append(["only", "one"])
    wb.save(path)
    return path


def test_pandas_reads_the_xlsx_attachment(tmp_path):
    book = _xlsx(tmp_path / "sales data.xlsx")
    code = (f"import pandas as pd\ndf = pd.read_excel({str(book)!r}, sheet_name='Sales')\n"
            "print(round(float((df.Qty * df.Price).sum()), 2))")
    out = run(code, attachments=[book])
    assert out.ok, out.output
    assert out.output.strip() == "3.5"


def test_openpyxl_reads_every_sheet_of_the_attachment(tmp_path):
    book = _xlsx(tmp_path / "book.xlsx")
    out = run(f"import openpyxl\nwb = openpyxl.load_workbook({str(book)!r})\n"
              "print(wb.sheetnames, wb['Sales']['A3'].value)",
              attachments=[book])
    assert out.output.strip() == "['Sales', 'Other'] pear"


def test_attachment_readable_even_when_only_root_may_read_it(tmp_path):
    private = tmp_path / "private.csv"
    private.write_text("a,b\n1,2\n3,4\n")
    private.chmod(0o600)
    out = run(f"import pandas as pd; print(pd.read_csv({str(private)!r}).b.sum())", attachments=[private])
    assert out.output.strip() == "6"


def test_attachment_is_read_only(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("original")
    out = run(f"open({str(data)!r}, 'w').write('changed')", attachments=[data])
    assert not out.ok
    assert "Read-only file system" in out.output or "Permission denied" in out.output
    assert data.read_text() == "original"


def test_each_call_starts_in_a_fresh_empty_directory():
    first = run("import os; open('left.txt', 'w').write('x'); print(sorted(os.listdir('.')))")
    second = run("import os; print(os.getcwd(), sorted(f for f in os.listdir('.') if not f.startswith('.')))")
    assert first.output.strip() == "['left.txt']"
    assert second.output.strip() == "/tmp/work []"


def test_no_output_is_explained():
    out = run("x = 1")
    assert out.ok and "no output" in out.output


def test_exception_returns_traceback_and_exit_reason():
    out = run("def f():\n    return 1 / 0\nprint('before')\nf()")
    assert not out.ok and out.error_kind == "exit_code"
    assert "exit code 1" in out.output and "ZeroDivisionError" in out.output
    assert "[stdout]\nbefore" in out.output
    assert 'File "<code>", line 2, in f' in out.output and "return 1 / 0" in out.output


def test_syntax_error_is_reported():
    out = run("print('a'")
    assert not out.ok and "SyntaxError" in out.output


def test_empty_code_is_rejected():
    out = run("   ")
    assert not out.ok and "no code" in out.output


def test_input_sees_end_of_file():
    out = run("input()")
    assert "EOFError" in out.output


def test_timeout_kills_the_whole_group():
    out = run("import subprocess\nsubprocess.Popen(['sleep', '300'])\nwhile True:\n    pass", timeout=1.5)
    assert not out.ok and out.error_kind == "timeout"
    assert "limit" in out.output  # the sandbox's own stop, not the executor giving up
    assert wait_no_leftovers() == []


def test_sleeping_child_does_not_outlive_the_run():
    out = run("import subprocess; subprocess.Popen(['sleep', '300'], start_new_session=True); print('bye')")
    assert out.output.strip() == "bye"
    assert wait_no_leftovers() == []


def test_memory_limit_is_reported():
    out = run("x = bytearray(3 * 1024 ** 3)", SANDBOX_MEMORY_MB=512)
    assert out.error_kind == "memory" and "512 MiB" in out.output


def test_giant_output_is_capped_and_stopped():
    out = run("while True:\n    print('spam' * 1000)")
    assert out.error_kind == "output_limit"  # stopped by the cap, not by the time limit
    assert len(out.output) <= load_settings().MAX_FILE_SIZE + 200


def test_large_but_finite_output_is_kept_and_paged():
    out = run("for i in range(100000):\n    print(i)")
    assert out.ok and "\n\n0\n1\n2\n" in out.output
    assert "Next: read_file(path=" in out.output  # the executor kept the whole output in the workspace


def test_control_characters_are_stripped():
    out = run("print('a\\x00b\\x1b[31mc\\x07d')")
    assert out.output.strip() == "ab[31mcd"


def test_invalid_utf8_is_replaced():
    out = run("import sys\n_ = sys.stdout.buffer.write(b'ok\\xff\\xfe!\\n')")
    assert out.output.strip() == "ok\ufffd\ufffd!"


def test_degraded_mode_is_labelled_and_scrubbed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-degraded-secret-123")
    limits = Limits(cpu_seconds=5, memory_mb=1024)
    r = run_sandboxed("import os; print(os.getuid(), sorted(os.environ), os.getcwd())", limits=limits,
                      wall_seconds=5, backend="degraded")
    assert r.reason == "ok", r.stderr
    uid, rest = r.stdout.split(" ", 1)
    assert int(uid) == r.uid and r.uid != 0  # a uid of the call's own
    assert "OPENAI_API_KEY" not in rest and "sk-degraded" not in r.stdout
    workdir = rest.rsplit(" ", 1)[1].strip()
    assert workdir.startswith("/tmp/run_python-") and not os.path.exists(workdir)
    assert sandbox_tool.format_result(r).startswith(DEGRADED_LABEL)


def test_degraded_is_refused_when_the_app_is_not_root(monkeypatch):
    monkeypatch.setattr(sandbox_modes.os, "geteuid", lambda: 1000)
    with pytest.raises(MissingDependency) as err:
        make_sandbox_tools(load_settings(SANDBOX_MODE="degraded"))
    assert err.value.tools == ["run_python"]
    assert "degraded is refused" in err.value.reason and "SANDBOX_MODE=auto" in err.value.reason


def _no_namespaces(_as_root: bool) -> str:
    return "bwrap: No permissions to create new namespace"


def test_bwrap_mode_fails_closed_when_namespaces_are_unavailable(monkeypatch):
    monkeypatch.setattr(sandbox_modes, "probe_namespaces", _no_namespaces)
    for mode in ("bwrap", "strict"):  # strict: the old name, kept for existing .env files
        with pytest.raises(MissingDependency) as err:
            make_sandbox_tools(load_settings(SANDBOX_MODE=mode))
        assert err.value.tools == ["run_python"] and "No permissions" in err.value.reason
    registry = build_registry(load_settings(SANDBOX_MODE="bwrap"), factories=[("base", make_sandbox_tools)])
    assert "run_python" in registry.missing and registry.names == []


def test_landlock_mode_fails_closed_when_landlock_is_unavailable(monkeypatch):
    monkeypatch.setattr(sandbox_modes, "probe_landlock", lambda _root: "Landlock is not enabled in this kernel")
    with pytest.raises(MissingDependency) as err:
        make_sandbox_tools(load_settings(SANDBOX_MODE="landlock"))
    assert "Landlock is not enabled" in err.value.reason
    with pytest.raises(MissingDependency) as err:  # with bwrap gone too, auto has nothing left
        monkeypatch.setattr(sandbox_modes, "probe_namespaces", _no_namespaces)
        make_sandbox_tools(load_settings(SANDBOX_MODE="auto"))
    assert "No permissions" in err.value.reason and "Landlock is not enabled" in err.value.reason


def test_auto_falls_back_to_landlock_when_bwrap_cannot_start(monkeypatch):
    assert sandbox_modes.choose_backend(load_settings(SANDBOX_MODE="auto")) == "bwrap"
    monkeypatch.setattr(sandbox_modes, "probe_namespaces", _no_namespaces)
    assert sandbox_modes.choose_backend(load_settings(SANDBOX_MODE="auto")) == "landlock"
    out = run("import os; print(2 + 2, os.getcwd())", backend="auto")
    assert out.ok and out.output.startswith(LANDLOCK_LABEL + "\n4 /tmp/run_python-")


def test_degraded_setting_falls_back_only_when_needed(monkeypatch):
    assert sandbox_modes.choose_backend(load_settings(SANDBOX_MODE="degraded")) == "bwrap"
    monkeypatch.setattr(sandbox_modes, "probe_namespaces", _no_namespaces)
    assert sandbox_modes.choose_backend(load_settings(SANDBOX_MODE="degraded")) == "landlock"
    monkeypatch.setattr(sandbox_modes, "probe_landlock", lambda _root: "no landlock")
    assert sandbox_modes.choose_backend(load_settings(SANDBOX_MODE="degraded")) == "degraded"
    tool = make_sandbox_tools(load_settings(SANDBOX_MODE="degraded"))[0]
    assert tool.invoke({"code": "print(2 + 2)"}).startswith(DEGRADED_LABEL + "\n4")


def test_registry_offers_run_python_with_a_model_facing_schema():
    registry = build_registry(load_settings(), factories=[("base", make_sandbox_tools)])
    tool = registry.get("run_python")
    assert tool is not None
    assert set(tool.tool_call_schema.model_json_schema()["properties"]) == {"code"}
    assert "print" in tool.description


@pytest.mark.parametrize("fenced", ["```python\nprint(41 + 1)\n```", "```\nprint(41 + 1)\n```",
                                    "```py\nprint(41 + 1)```"])
def test_markdown_fences_around_the_code_are_removed(fenced):
    assert run(fenced).output.strip() == "42"


def test_files_extracted_by_read_file_are_readable(tmp_path):
    from tools.core.workspace import process_workspace

    member = process_workspace().subdir("archive.zip") / "inner.csv"
    member.write_text("n\n20\n22\n")
    out = run(f"import pandas as pd; print(pd.read_csv({str(member)!r}).n.sum())")
    assert out.output.strip() == "42"
    out = run(f"open({str(member)!r}, 'w').write('x')")
    assert not out.ok and member.read_text() == "n\n20\n22\n"


def test_on_error_stderr_survives_long_stdout():
    out = run("for i in range(2000):\n    print('line', i)\nraise KeyError('the cause')")
    assert not out.ok and "earlier characters of stdout cut" in out.output
    assert "line 1999" in out.output and "KeyError: 'the cause'" in out.output


def test_landlock_below_abi_6_is_unavailable_and_auto_says_why(monkeypatch):
    """Without signal scoping (Linux < 6.12) a call could tkill the app's threads: the backend is not used."""
    from tools.isolation import landlock
    from tools.isolation.landlock_backend import probe_landlock

    monkeypatch.setattr(landlock, "landlock_abi", lambda: 5)
    probe_landlock.cache_clear()
    try:
        with pytest.raises(OSError, match="ABI 5 is below 6"):
            landlock.restrict([], [], [], [])  # the child's own check: it refuses before confining anything
        monkeypatch.setattr(sandbox_modes, "probe_namespaces", _no_namespaces)
        for mode in ("landlock", "auto"):
            with pytest.raises(MissingDependency) as err:
                make_sandbox_tools(load_settings(SANDBOX_MODE=mode))
            assert "Landlock ABI 5 has no signal scoping" in err.value.reason and "6.12" in err.value.reason
    finally:
        probe_landlock.cache_clear()
