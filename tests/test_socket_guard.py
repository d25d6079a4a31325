"""The socket guard of tests/conftest.py: loopback connects, anything else is refused and fails the test."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request

import pytest

from tests.support import socket_guard
from tests.support.socket_guard import OutsideLoopbackError, is_loopback, take_violations
from tests.support.web_server import LocalWebServer, Reply

OUTSIDE = "192.0.2.1"  # TEST-NET-1 (RFC 5737): documentation only, never routed


@pytest.mark.parametrize("host", ["127.0.0.1", "127.9.8.7", "::1", "[::1]", "::ffff:127.0.0.1", "localhost",
                                  "LOCALHOST.", "app.localhost"])
def test_loopback_spellings_are_allowed(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", [OUTSIDE, "10.0.0.1", "0.0.0.0", "::ffff:192.0.2.1", "2001:db8::1",
                                  "example.com", "localhost.example.com", "", None])
def test_everything_else_is_outside(host):
    assert not is_loopback(host)


def test_a_loopback_server_is_reached():
    with LocalWebServer({"/": Reply(200, "hi", "text/plain")}) as server, \
            urllib.request.urlopen(server.url("/"), timeout=10) as resp:
        assert resp.read() == b"hi"
    assert take_violations() == []


def test_an_outside_connection_is_refused_before_it_is_made_and_recorded():
    with pytest.raises(OutsideLoopbackError, match=OUTSIDE):
        socket.create_connection((OUTSIDE, 80), timeout=1)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(OutsideLoopbackError):
        sock.connect_ex((OUTSIDE, 443))
    with pytest.raises(urllib.error.URLError):  # urllib wraps it: the code under test may swallow it...
        urllib.request.urlopen(f"http://{OUTSIDE}/", timeout=1)
    refused = take_violations()  # ...but the test still fails: the autouse fixture finds these
    assert len(refused) == 3 and all(OUTSIDE in r for r in refused)


def test_asyncio_connections_are_guarded_too():
    async def connect() -> None:
        await asyncio.open_connection(OUTSIDE, 80)

    with pytest.raises(OutsideLoopbackError):
        asyncio.run(connect())
    assert len(take_violations()) == 1


def test_unix_sockets_are_not_looked_at(tmp_path):
    path = str(tmp_path / "s.sock")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
        server.bind(path)
        server.listen(1)
        client.connect(path)
    assert take_violations() == []


def test_the_guard_is_installed_for_every_test():
    assert socket.socket.connect is socket_guard._guarded_connect
    assert socket.socket.connect_ex is socket_guard._guarded_connect_ex
