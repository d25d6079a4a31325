"""Non-public addresses refused in every spelling; each redirect hop checked first; the checked address pinned.

Issue 13, item 5.
Real loopback servers stand in for internal services: a refused fetch must leave them with zero hits.
"""

from __future__ import annotations

import socket
import time

import pytest

from config import load_settings
from tests.support.web_server import LocalWebServer, Reply
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.web import make_web_tools, netguard
from tools.web.netguard import NetPolicy, check_target, guarded_get, is_public, parse_ip

LOOPBACK_SPELLINGS = ["127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0X7F000001", "0x7f.1",
                      "0177.0.0.1", "0177.1", "017700000001", "127.0.0.1.", "127.255.255.254", "[::1]",
                      "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]", "[::127.0.0.1]",
                      "[2002:7f00:1::1]", "[64:ff9b::7f00:1]"]
METADATA_SPELLINGS = ["169.254.169.254", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518",
                      "0xa9.0xfe.0xa9.0xfe", "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[fe80::1]",
                      "[fe80::1%25eth0]"]
PRIVATE_AND_SPECIAL = ["10.0.0.1", "10.1", "172.16.0.1", "192.168.1.1", "0xc0a80101", "100.64.0.1", "100.127.255.254",
                       "0.0.0.0", "0", "0.0.0.0.", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
                       "198.18.0.1", "192.0.0.8", "0.1.2.3", "192.0.2.1", "[::]", "[fc00::1]", "[fd12:3456::1]",
                       "[fec0::1]",
                       "[ff02::1]", "[2001:db8::1]", "[100::1]", "[::ffff:10.0.0.1]", "[64:ff9b::a00:1]"]
LOCAL_NAMES = ["localhost", "LOCALHOST", "localhost.", "ip6-localhost", "foo.localhost", "metadata.google.internal",
               "metadata", "printer.local", "service.internal."]


def _never_resolve(host: str, port: int) -> list[str]:
    raise AssertionError(f"{host} should be judged without DNS")


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS + METADATA_SPELLINGS + PRIVATE_AND_SPECIAL)
def test_every_spelling_of_a_non_public_address_is_refused(host):
    with pytest.raises(ToolFailure) as info:
        check_target(f"http://{host}:8080/secret", NetPolicy(), _never_resolve)
    assert info.value.kind == "blocked"


@pytest.mark.parametrize("host", LOCAL_NAMES)
def test_local_names_are_refused_without_asking_dns(host):
    with pytest.raises(ToolFailure) as info:
        check_target(f"https://{host}/", NetPolicy(), _never_resolve)
    assert info.value.kind == "blocked"


@pytest.mark.parametrize("answer", [["127.0.0.1"], ["10.0.0.7"], ["::1"], ["93.184.216.34", "192.168.0.10"],
                                    ["fe80::1%eth0"], ["100.64.1.1"], ["::ffff:127.0.0.1"]])
def test_names_resolving_to_a_non_public_address_are_refused(answer):
    with pytest.raises(ToolFailure) as info:
        check_target("https://innocent.example.com/page", NetPolicy(), lambda host, port: answer)
    assert info.value.kind == "blocked"


def test_trailing_dot_names_resolve_without_the_dot():
    asked = []
    target = check_target("https://Example.COM./a", NetPolicy(), lambda h, p: asked.append((h, p)) or ["93.184.216.34"])
    assert asked == [("example.com", 443)] and target.address == "93.184.216.34" and target.host == "example.com"


@pytest.mark.parametrize("host", ["93.184.216.34", "8.8.8.8", "1.1.1.1", "[2606:4700::1111]", "[::ffff:8.8.8.8]",
                                  "[64:ff9b::808:808]"])
def test_public_addresses_pass(host):
    assert check_target(f"http://{host}/", NetPolicy(), _never_resolve).port == 80


@pytest.mark.parametrize("text, expected", [("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("10.1", "10.0.0.1"),
                                            ("[::ffff:127.0.0.1]", "::ffff:7f00:1"), ("0177.0.0.1.", "127.0.0.1"),
                                            ("example.com", None), ("1.2.3.4.5", None), ("0x1g.0.0.1", None)])
def test_parse_ip_reads_the_forms_connect_would(text, expected):
    parsed = parse_ip(text)
    assert (str(parsed) if parsed is not None else None) == expected


def test_is_public_on_mapped_and_tunnelled_forms():
    import ipaddress

    assert not is_public(ipaddress.ip_address("2001:0:4136:e378:8000:63bf:80ff:fffe"))  # Teredo to 127.0.0.1
    assert is_public(ipaddress.ip_address("2001:4860:4860::8888"))


@pytest.mark.parametrize("url, kind", [("http://[::1", "bad_arguments"), ("ftp://example.com/", "bad_arguments"),
                                       ("http:///path", "bad_arguments"),
                                       ("http://example.com:99999/", "bad_arguments"),
                                       ("file:///etc/passwd", "bad_arguments")])
def test_malformed_urls_are_tool_failures_not_crashes(url, kind):
    with pytest.raises(ToolFailure) as info:
        check_target(url, NetPolicy(), _never_resolve)
    assert info.value.kind == kind


def test_userinfo_and_backslash_tricks_are_judged_by_the_real_host():
    for url in ("http://example.com@127.0.0.1/", "http://example.com\\@127.0.0.1/", "http://a@b@10.0.0.1/"):
        with pytest.raises(ToolFailure):
            check_target(url, NetPolicy(), _never_resolve)


def test_allowed_pairs_exempt_only_that_host_and_port():
    policy = NetPolicy.parse("127.0.0.1:8080, intranet.corp.:443,[::1]:9000")
    assert check_target("http://127.0.0.1:8080/x", policy, _never_resolve).address == "127.0.0.1"
    assert check_target("https://intranet.corp/x", policy, _never_resolve).address == "intranet.corp"
    assert check_target("http://[::1]:9000/", policy, _never_resolve).address == "::1"
    for url in ("http://127.0.0.1:8081/", "http://2130706433:8080/", "http://localhost:8080/", "http://intranet.corp/"):
        with pytest.raises(ToolFailure):
            check_target(url, policy, lambda h, p: ["10.0.0.1"])
    with pytest.raises(ValueError, match="host:port"):
        NetPolicy.parse("127.0.0.1")


# -- end to end: real servers, real requests ------------------------------------------------------

def _fetch(settings, url: str):
    tool = next(t for t in make_web_tools(settings) if t.name == "fetch_webpage")
    return run_tool(tool, {"url": url}, settings)


@pytest.fixture()
def internal():
    """The internal service a hostile page wants the agent to reach (never in FETCH_ALLOWED_HOSTS)."""
    with LocalWebServer({"/secret": Reply(200, "<html><body>INTERNAL SECRET</body></html>")}) as server:
        yield server


def _port(server: LocalWebServer) -> int:
    return int(server.host_port.rsplit(":", 1)[1])


@pytest.mark.parametrize("spelling", ["127.0.0.1", "2130706433", "0x7f.1", "[::ffff:127.0.0.1]", "localhost",
                                      "127.0.0.1."])
def test_a_redirect_to_loopback_is_refused_before_it_is_requested(internal, spelling):
    target = f"http://{spelling}:{_port(internal)}/secret"
    with LocalWebServer({"/hop": Reply(302, "", headers={"Location": target})}) as public:
        settings = load_settings(TOOL_TIMEOUT=10, FETCH_ALLOWED_HOSTS=public.host_port)
        outcome = _fetch(settings, public.url("/hop"))
        assert public.hits("/hop") == 1
    assert not outcome.ok and outcome.error_kind == "blocked", outcome.output
    assert "INTERNAL SECRET" not in outcome.output
    assert internal.requests == []  # refused before the request, not after reading it


def test_a_chain_of_redirects_is_checked_at_every_hop(internal):
    with LocalWebServer({}) as public:
        port = _port(public)
        public.routes.update({"/a": Reply(301, "", headers={"Location": "/b"}),
                              "/b": Reply(307, "", headers={"Location": f"http://127.0.0.1:{port}/c"}),
                              "/c": Reply(308, "", headers={"Location": f"http://0x7f.1:{_port(internal)}/secret"})})
        outcome = _fetch(load_settings(TOOL_TIMEOUT=10, FETCH_ALLOWED_HOSTS=public.host_port), public.url("/a"))
        assert [r.path for r in public.requests] == ["/a", "/b", "/c"]
    assert outcome.error_kind == "blocked" and internal.requests == []


def test_an_allowed_host_port_is_fetched(internal):
    outcome = _fetch(load_settings(TOOL_TIMEOUT=10, FETCH_ALLOWED_HOSTS=internal.host_port), internal.url("/secret"))
    assert outcome.ok and "INTERNAL SECRET" in outcome.output and internal.hits("/secret") == 1


def test_the_same_server_without_the_exemption_is_refused(internal):
    outcome = _fetch(load_settings(TOOL_TIMEOUT=10), internal.url("/secret"))
    assert outcome.error_kind == "blocked" and internal.requests == []


def test_dns_rebinding_cannot_move_the_connection(monkeypatch):
    """Public at the check, private afterwards: the connection still goes to the address that was checked.

    127.0.0.2 plays a public server (is_public patched to say so); 127.0.0.1 on the same port is the internal
    one that a second resolution would give. Every later getaddrinfo answers 127.0.0.1.
    """
    internal = LocalWebServer({"/": Reply(200, "<html><body>INTERNAL</body></html>")})
    port = _port(internal)
    with internal, LocalWebServer({"/": Reply(200, "<html><body>PUBLIC PAGE</body></html>")},
                                  host="127.0.0.2", port=port) as public:
        answers = iter(["127.0.0.2"])

        def rebinding(host: str, port: int) -> list[str]:
            return [next(answers, "127.0.0.1")]

        real_getaddrinfo = socket.getaddrinfo

        def rebound_getaddrinfo(host, *args, **kwargs):
            if host == "rebind.example":
                return real_getaddrinfo("127.0.0.1", *args, **kwargs)
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(netguard, "is_public", lambda a: str(a) == "127.0.0.2")
        monkeypatch.setattr(socket, "getaddrinfo", rebound_getaddrinfo)
        with guarded_get(f"http://rebind.example:{port}/", NetPolicy(), timeout=5, resolver=rebinding) as (resp, _):
            body = resp.read()
        assert b"PUBLIC PAGE" in body
        assert public.requests[0].headers.get("Host") == f"rebind.example:{port}"
        assert internal.requests == []


def test_operator_search_provider_urls_are_trusted_as_configured():
    """SEARXNG_URL on loopback works without FETCH_ALLOWED_HOSTS: the operator chose it, not the model."""
    from tools.search.searxng import SearxngProvider

    results = {"results": [{"title": "T", "url": "https://example.org/x", "content": "snippet"}]}
    with LocalWebServer({"/search": Reply.json(results)}) as searx:
        found = SearxngProvider(searx.base).search("q", 3, 5)
    assert found and found[0].url == "https://example.org/x"


def test_a_slow_redirect_chain_ends_at_one_deadline_for_all_its_hops():
    """11 hops of 0.8 s each would take 8.8 s; a 2 s fetch has time to start three of them, and then stops.

    The hops are counted a while after the tool returned: a fetch left running in the background would
    still be following the chain.
    """
    def slow_hop(n: int):
        def reply(_request):
            time.sleep(0.8)
            return Reply(302, "", headers={"Location": f"/hop{n + 1}"})
        return reply

    with LocalWebServer({f"/hop{n}": slow_hop(n) for n in range(11)}) as chain:
        outcome = _fetch(load_settings(TOOL_TIMEOUT=2, FETCH_ALLOWED_HOSTS=chain.host_port), chain.url("/hop0"))
        time.sleep(2.5)
        hops = len(chain.requests)
    assert outcome.error_kind == "timeout", outcome.output
    assert 1 <= hops <= 3, hops
