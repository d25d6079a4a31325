"""The browser as an unprivileged user (as on a Docker Space): its processes unreadable by the user, sandbox on.

Run for real as a leased uid with `setpriv` and the system Python (the venv's packages on sys.path),
as tests/tools/test_sandbox_unprivileged.py does. The browser (pool thread, driver, Chromium) opens a
loopback page, then ANOTHER process of the same uid tries `/proc/<pid>/environ` of the Playwright
driver and of every Chromium process. The key is in none. With BROWSER_SANDBOX=off every one is
unreadable (exec-only copies: non-dumpable). With `auto` Chromium's own sandbox is on (the kernel here
allows unprivileged user namespaces): the driver is unreadable, while Chromium's processes may stay
readable (the namespace sandbox writes its child's uid_map, which a non-dumpable process cannot),
their environment being the clean one. A hung page (`while(true){}`) is ended and the run goes on.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from config import PROJECT_ROOT
from tests.support.chromium import SPINNING_RENDERERS
from tests.tools.test_sandbox_unprivileged import SITE, SYSTEM_PYTHON, _usable
from tools.isolation.uids import lease

pytestmark = [pytest.mark.integration, pytest.mark.browser, SPINNING_RENDERERS,
              pytest.mark.skipif(not _usable(), reason="needs root, setpriv and a system Python of the venv's version")]

SCRIPT = r"""
import json, os, subprocess, sys
sys.path[:0] = [sys.argv[2], "."]
from tests.support.web_server import LocalWebServer, Reply
from tools.browser import guard
from tools.browser.engine import BrowserEngine, EngineConfig
from tools.browser.proxy import ProxyRules
from tools.core.errors import ToolFailure
from tools.web.netguard import NetPolicy

pages = {"/": Reply(200, "<h1>hello unprivileged</h1>"), "/spin": Reply(200, "<script>while (true) {}</script>")}
with LocalWebServer(pages) as site:
    engine = BrowserEngine(EngineConfig("/usr/bin/chromium", ProxyRules(NetPolicy.parse(site.host_port)),
                                        sandbox=sys.argv[1]))

    def load(path):
        def job(browser):
            page = browser.new_context().new_page()
            page.goto(site.url(path), wait_until="commit")
            return page.evaluate("document.body.innerText")
        return job

    text = engine.call(load("/"), 60, key="run")
    pids = guard.descendants(os.getpid())
    kinds = {pid: ("driver" if b"run-driver" in line else "renderer" if not line or b"--type=renderer" in line
                   else "chromium") for pid in pids
             for line in [open(f"/proc/{pid}/cmdline", "rb").read() if os.path.exists(f"/proc/{pid}") else b"x"]}
    reader = subprocess.run([sys.executable, "-c", "import sys\nfor p in sys.argv[1:]:\n try:\n"
                             "  print(p, int(b'sk-canary' in open(f'/proc/{p}/environ', 'rb').read()))\n"
                             " except OSError:\n  pass", *map(str, pids)], capture_output=True, text=True)
    readable = {kinds.get(int(p), "other"): int(k) for p, k in (ln.split() for ln in reader.stdout.split("\n") if ln)}
    try:
        engine.call(load("/spin"), 5, key="run")
        hung = "finished"
    except ToolFailure as exc:
        hung = str(exc)
    after = engine.call(load("/"), 60, key="run")
    print(json.dumps({"text": text, "processes": len(pids), "readable": readable,
                      "sandbox": engine.sandbox, "hung": hung, "after": after}))
    engine.close()
"""


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_browser_processes_are_unreadable_by_the_users_other_processes(mode):
    held = lease()
    try:
        run = subprocess.run(["setpriv", f"--reuid={held.uid}", f"--regid={held.uid}", "--clear-groups",
                              "--inh-caps=-all", "--bounding-set=-all", "--", SYSTEM_PYTHON, "-c", SCRIPT, mode, SITE],
                             env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
                                  "OPENAI_API_KEY": "sk-canary-77"},
                             cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=240)
    finally:
        held.release()
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["text"] == "hello unprivileged" and found["processes"] >= 4
    readable = found["readable"]  # kind -> whether a readable environ held the key
    assert 1 not in readable.values()  # figure: the key in 0 processes
    assert "driver" not in readable  # the Playwright driver: its environ unreadable
    if mode == "off":
        assert readable == {}  # figure: 0 readable: every Chromium process is exec'd from the exec-only copy
    assert found["sandbox"] is (mode == "auto")
    assert "tab was closed" in found["hung"] and found["after"] == "hello unprivileged"
