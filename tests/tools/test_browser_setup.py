"""The browser's parts that need no Chromium: the factory's prerequisites, the filtering proxy, the close hook."""

from __future__ import annotations

import socket

import pytest

from config import load_settings
from tests.support.js_sites import Canary
from tests.support.web_server import LocalWebServer, Reply
from tools.browser import BROWSER_TOOLS, make_browser_tools
from tools.browser.engine import clean_env, launch_args
from tools.browser.proxy import FilteringProxy, ProxyRules
from tools.core.errors import MissingDependency
from tools.core.registry import build_registry
from tools.web.netguard import NetPolicy


def test_without_chromium_the_tools_are_missing_and_say_why(tmp_path):
    settings = load_settings(BROWSER_EXECUTABLE=str(tmp_path / "no-chromium"))
    with pytest.raises(MissingDependency) as caught:
        make_browser_tools(settings)
    assert caught.value.tools == BROWSER_TOOLS and "apt-get install chromium" in caught.value.reason
    registry = build_registry(settings)
    assert "browser_open" not in registry.names
    assert "apt-get install chromium" in registry.missing["browser_click"]
    assert "missing browser_open: Chromium was not found" in registry.describe()


def test_launch_flags_send_everything_through_the_proxy():
    args = launch_args(4321)
    assert "--proxy-server=http://127.0.0.1:4321" in args
    assert "--proxy-bypass-list=<-loopback>" in args  # loopback goes through the proxy too
    assert "--force-webrtc-ip-handling-policy=disable_non_proxied_udp" in args
    assert "--disable-extensions" in args and "--disable-background-networking" in args


def test_one_disable_features_switch_keeps_playwrights_and_drops_the_omnibox_webui():
    switches = [a for a in launch_args(4321) if a.startswith("--disable-features=")]
    assert len(switches) == 1  # Chromium keeps only the last one: a second would turn Playwright's list back on
    features = switches[0].split("=", 1)[1].split(",")
    assert {"HttpsUpgrades", "AimEnabled", "PaintHolding", "NetworkPrediction"} <= set(features)
    assert {"WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "SpareRendererForSitePerProcess"} <= set(features)


def test_the_browser_environment_is_clean(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-secret")
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    env = clean_env(tmp_path)
    assert set(env) == {"PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "LANG"}
    assert env["HOME"] == str(tmp_path) and "secret" not in repr(env)


def _ask(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


@pytest.fixture
def proxied():
    with Canary() as canary, LocalWebServer({"/hello": Reply(200, "hello there", "text/plain")}) as site:
        proxy = FilteringProxy(ProxyRules(NetPolicy.parse(site.host_port), ("blocked.example/secret",)))
        yield proxy, site, canary
        proxy.close()


def test_proxy_forwards_plain_http_to_an_allowed_target_and_closes(proxied):
    proxy, site, _ = proxied
    reply = _ask(proxy.port, f"GET {site.url('/hello')} HTTP/1.1\r\nHost: {site.host_port}\r\n"
                             "Proxy-Connection: keep-alive\r\n\r\n".encode())
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and b" 200 " in head.split(b"\r\n")[0]
    assert b"Connection: close" in head and body == b"hello there"
    assert "proxy-connection" not in {k.lower() for k in site.requests[-1].headers}


@pytest.mark.parametrize("request_line", ["GET http://127.0.0.1:{port}/x HTTP/1.1", "CONNECT 127.0.0.1:{port} HTTP/1.1",
                                          "GET http://localhost:{port}/x HTTP/1.1", "CONNECT [::1]:{port} HTTP/1.1",
                                          "GET http://0x7f.1:{port}/x HTTP/1.1", "GET /relative HTTP/1.1",
                                          "GET ftp://127.0.0.1:{port}/x HTTP/1.1"])
def test_proxy_refuses_non_public_targets_in_every_spelling(proxied, request_line):
    proxy, _, canary = proxied
    line = request_line.format(port=canary.port)
    reply = _ask(proxy.port, f"{line}\r\nHost: x\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 403") and canary.hits == 0
    assert proxy.refused == 1


def test_proxy_refuses_blocked_prefixes_and_remembers_why(proxied):
    proxy, _, _ = proxied
    reply = _ask(proxy.port, b"GET http://blocked.example/secret/page HTTP/1.1\r\nHost: blocked.example\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 403") and b"blocked domain" in reply
    assert "blocked domain" in (proxy.refusal_for("http://blocked.example/other") or "")


def test_proxy_connects_to_the_address_it_checked(proxied):
    """DNS pinned: a name resolving to a public address is connected there, never re-resolved."""
    _, _, canary = proxied
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["93.184.215.14"]

    proxy = FilteringProxy(ProxyRules(NetPolicy(), (), resolver), connect_timeout=0.5)
    connected: list[tuple[str, int]] = []

    def record(target):  # where the proxy would connect; no connection is made in the test
        connected.append((target.address, target.port))
        raise OSError("not connecting")

    proxy._connect = record
    try:
        reply = _ask(proxy.port, f"CONNECT rebind.example:{canary.port} HTTP/1.1\r\n\r\n".encode())
    finally:
        proxy.close()
    assert asked == ["rebind.example"] and connected == [("93.184.215.14", canary.port)]
    assert reply.startswith(b"HTTP/1.1 502") and canary.hits == 0


def test_workspace_close_hooks_run_once_and_a_failing_one_still_removes_the_files(tmp_path):
    from tools.core.workspace import open_workspace

    work = open_workspace(load_settings(WORKSPACE_DIR=tmp_path), "hooks")
    calls: list[str] = []
    work.on_close(lambda: calls.append("first"))

    def broken() -> None:
        raise RuntimeError("broken hook")

    work.on_close(broken)
    work.on_close(lambda: calls.append("third"))
    (work.subdir("x") / "f.txt").write_text("data")
    work.close()
    work.close()
    assert calls == ["first", "third"] and not work.root.exists()
