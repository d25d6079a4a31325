"""The browser proxy forwards a plain-http request body whole, however the client sends it (issue 36)."""

from __future__ import annotations

import hashlib
import socket
import time

import pytest

from tests.support.web_server import LocalWebServer, Reply, Request
from tools.browser.proxy import FilteringProxy, ProxyRules
from tools.web.netguard import NetPolicy


def _digest(request: Request) -> Reply:
    return Reply(200, f"{len(request.body)} {hashlib.sha256(request.body).hexdigest()}", "text/plain")


@pytest.fixture(scope="module")
def proxied():
    with LocalWebServer({"/echo": _digest}) as site:
        proxy = FilteringProxy(ProxyRules(NetPolicy.parse(site.host_port)))
        yield proxy, site
        proxy.close()


@pytest.mark.parametrize("size, pieces", [(10, 1), (300_000, 7), (1_000_000, 3)])
def test_a_post_body_sent_after_its_head_and_in_pieces_arrives_whole(proxied, size, pieces):
    proxy, site = proxied
    body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    head = (f"POST {site.url('/echo')} HTTP/1.1\r\nHost: {site.host_port}\r\nContent-Type: application/octet-stream"
            f"\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(head)  # the head alone first, as Chromium sends a POST
        time.sleep(0.05)
        step = -(-len(body) // pieces)
        for start in range(0, len(body), step):
            sock.sendall(body[start:start + step])
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status, _, answer = data.partition(b"\r\n\r\n")
    assert b" 200 " in status.split(b"\r\n")[0]
    assert answer.decode() == f"{len(body)} {hashlib.sha256(body).hexdigest()}"
