"""How one browser thread launches its Chromium: flags, a clean environment, the sandbox, a browser's face.

Everything here is decided before a process starts. The Playwright driver (Node) and Chromium get an
environment of their own (a PATH, a private HOME/TMPDIR, a locale): nothing of the app's, so no
secret of Settings. Both are started from execute-only copies of their binaries when the app runs as
a non-root user: the kernel marks a process exec'd from a file its user cannot read non-dumpable
(fs/exec.c `would_dump`), so its `/proc/<pid>/environ`, `mem` and ptrace are closed to the user's
other processes, as they are for the app itself (hardening). Chromium's own sandbox is used
where the kernel lets an unprivileged user create user namespaces.

The face: the real Chromium version's user agent without `Headless`, no `navigator.webdriver`
(Playwright's `--enable-automation` dropped, `AutomationControlled` off), a real window size, the
desktop pointer, `Accept-Language` and a timezone. Playwright's own overrides act at the CDP layer,
so `navigator.userAgent` stays native code and the request headers agree with it. Only the window's
outer size needs a script (FRAME_SCRIPT): headless Chromium has no toolbar for it to measure.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

SandboxMode = Literal["auto", "on", "off"]
IGNORED_DEFAULT_ARGS = ["--enable-automation", "--hide-scrollbars"]
"""Playwright's defaults that announce automation (webdriver) or a headless window (no scrollbars)."""
WINDOW = (1280, 800)
SCREEN = {"width": 1920, "height": 1080}
_driver_env = threading.local()
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding", "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect", "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled",
    "PreconnectToSearch",
)
"""Playwright's own `--disable-features` list (1.65's chromiumSwitches): Chromium keeps only the last such switch,
so ours repeats it rather than silently turning these back on."""
DISABLED_FEATURES = (
    *PLAYWRIGHT_DISABLED_FEATURES, "NetworkPrediction", "InterestFeedContentSuggestions",
    # Every new tab otherwise loads the omnibox's WebUI popups (chrome://omnibox-popup.top-chrome/) in a renderer
    # of their own: a headless window never shows them, yet they cost a fresh run ~0.7 s of CPU (2 of its 3 renderers).
    "WebUIOmniboxPopup", "WebUIOmniboxFullPopup", "WebUIOmniboxAimPopup",
    # Chromium keeps a spare renderer started for the last context's next cross-site page; with a fresh context
    # per run most die unused with their run: a wasted process start each (~0.1 s of CPU) on a CPU-bound box.
    "SpareRendererForSitePerProcess",
)
"""Chromium features off: Playwright's, network prediction, feed suggestions, the invisible omnibox popups and the
spare renderer."""


@dataclass(frozen=True)
class Face:
    """What the browser tells sites about itself (besides its real version)."""

    locale: str = "en-US"
    accept_language: str = "en-US,en;q=0.9"
    timezone: str = "America/New_York"


def launch_args(proxy_port: int, page_memory_mb: int = 1024) -> list[str]:
    """Chromium flags: everything through the proxy (loopback too), no WebRTC leak, no chatter, a V8 heap cap."""
    return [
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",  # Chromium otherwise bypasses proxies for localhost
        # Any name Chromium would resolve itself (a direct connection past the proxy) fails to resolve.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--dns-prefetch-disable",
        "--no-pings",
        "--disable-features=" + ",".join(DISABLED_FEATURES),
        "--metrics-recording-only",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--disable-blink-features=AutomationControlled",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        f"--js-flags=--max-old-space-size={max(16, page_memory_mb // 2)}",
    ]


def clean_env(home: Path) -> dict[str, str | float | bool]:
    """The browser's whole environment: a PATH, and HOME/TMPDIR in its private folder; nothing of the app's."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"), "LANG": "C.UTF-8"}


def user_agent(browser_version: str) -> str:
    """The desktop Linux user agent of this Chromium major version, as a headful Chrome sends it (reduced UA)."""
    major = browser_version.split(".", 1)[0] or "0"
    return (f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 "
            "Safari/537.36")


def context_options(browser_version: str, face: Face) -> dict[str, Any]:
    """`browser.new_context` options of the face (the session adds its own: downloads, service workers)."""
    return {"user_agent": user_agent(browser_version), "viewport": {"width": WINDOW[0], "height": WINDOW[1]},
            "screen": SCREEN, "locale": face.locale, "timezone_id": face.timezone,
            "extra_http_headers": {"Accept-Language": face.accept_language}}


TOOLBAR_PX = 85
"""How much taller a headful Chrome window is than its page (tabs, address bar, frame)."""
FRAME_SCRIPT = f"""
(() => {{
  // A headless window has no browser chrome, so outerHeight == innerHeight: the first thing bot checks
  // (and puppeteer-extra-stealth's "window.outerdimensions" evasion) look at. Both are [Replaceable].
  const gap = {TOOLBAR_PX};
  try {{
    Object.defineProperty(window, 'outerHeight', {{configurable: true, enumerable: true,
                                                    get: () => window.innerHeight + gap}});
    Object.defineProperty(window, 'outerWidth', {{configurable: true, enumerable: true,
                                                   get: () => window.innerWidth}});
  }} catch (e) {{}}
}})();
"""
"""An init script of every context: the window's outer size as a headful window's (the viewport plus its toolbar)."""


def sandbox_usable(executable: str) -> tuple[bool, str]:
    """Whether Chromium's namespace sandbox can start here, and why not when it cannot.

    It needs an unprivileged user namespace (root never gets one for Chromium: it refuses to sandbox
    as root without the setuid helper). Tried for real with `unshare` rather than guessed from sysctls.
    """
    if os.geteuid() == 0:
        return False, "the app runs as root, and Chromium does not sandbox a root browser"
    unshare = shutil.which("unshare")
    if unshare is None:
        return False, "`unshare` (util-linux) is missing, so user namespaces cannot be checked"
    try:
        probe = subprocess.run([unshare, "--user", "--map-root-user", "true"], capture_output=True, timeout=10,
                               env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"user namespaces could not be probed ({exc})"
    if probe.returncode != 0:
        return False, "the kernel refuses unprivileged user namespaces " \
                      f"({probe.stderr.decode(errors='replace').strip()[:120]})"
    return True, "unprivileged user namespaces are available"


def decide_sandbox(mode: SandboxMode, executable: str) -> tuple[bool, str]:
    """(sandbox on, reason) for BROWSER_SANDBOX: `auto` turns it on where it works, `on`/`off` force it."""
    if mode == "off":
        return False, "BROWSER_SANDBOX=off"
    usable, why = sandbox_usable(executable)
    if mode == "on":
        return True, f"BROWSER_SANDBOX=on ({why})"
    return usable, why


def exec_only_copy(source: str, folder: Path) -> str:
    """An execute-only (0o100) copy of `source` in `folder`, or `source` itself where that would not help.

    As root the copy would still be readable (root reads any file), so it would not make the process
    non-dumpable: the original is used. The copy is made once per folder.
    """
    if os.geteuid() == 0:
        return source
    target = folder / Path(source).name
    if not target.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shutil.copyfile(source, partial)
        partial.chmod(0o100)
        partial.replace(target)
    return str(target)


def chromium_binary(executable: str) -> str:
    """The ELF Chromium a wrapper script (Debian's /usr/bin/chromium) would exec, else `executable` itself."""
    path = Path(shutil.which(executable) or executable)
    with contextlib.suppress(OSError):
        head = path.read_bytes()[:4096]
        if head.startswith(b"#!"):
            found = re.search(rb"LIBDIR=(\S+)", head)
            name = re.search(rb"APPNAME=(\S+)", head)
            if found and name:
                app = name.group(1).decode()
                real = Path(found.group(1).decode().replace("$APPNAME", app).replace("${APPNAME}", app)) / app
                if real.is_file():
                    return str(real)
    return str(path)


def private_chromium(executable: str, folder: Path) -> str:
    """A Chromium to exec that its user cannot read: an exec-only copy beside links to its resources.

    Chromium finds its .pak, ICU and V8 snapshot files next to its own binary, so the folder gets a
    symlink to each of them. Root (where it would not help) and a failed copy use the original.
    """
    real = Path(chromium_binary(executable))
    if os.geteuid() == 0:
        return str(real)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for entry in real.parent.iterdir():
            link = folder / entry.name
            if entry != real and not link.exists():
                link.symlink_to(entry)
        return exec_only_copy(str(real), folder)
    except OSError:
        return str(real)


def install_driver_env_hook() -> None:
    """Make Playwright start its driver with the environment this thread set (`driver_environment`).

    Playwright copies the app's whole environment into its Node driver (`get_driver_env`); the hook
    replaces that copy, for threads that set one, with the clean one plus Playwright's own markers,
    and the Node binary with its execute-only copy.
    """
    from playwright._impl import transport as driver_transport

    transport: Any = driver_transport  # private module: its functions are not in its stubs' exports
    if getattr(transport, "_gaia_hooked", False):
        return
    original_env, original_exe = transport.get_driver_env, transport.compute_driver_executable

    def driver_env() -> dict[str, str]:
        env = getattr(_driver_env, "env", None)
        if env is None:
            return dict(original_env())
        markers = {k: v for k, v in original_env().items() if k.startswith("PW_")}
        return {**env, **markers}

    def driver_executable() -> tuple[str, str]:
        node, cli = original_exe()
        folder = getattr(_driver_env, "bin", None)
        return (exec_only_copy(node, folder) if folder is not None else node), cli

    transport.get_driver_env = driver_env
    transport.compute_driver_executable = driver_executable
    transport._gaia_hooked = True


def driver_environment(env: dict[str, str], bin_folder: Path) -> None:
    """Set, for the calling thread, the environment and binary folder its Playwright driver starts with."""
    install_driver_env_hook()
    _driver_env.env = env
    _driver_env.bin = bin_folder
