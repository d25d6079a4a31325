"""The browser's only way out: a filtering HTTP proxy on 127.0.0.1 that checks every target it is asked for.

Chromium is launched with this proxy for everything (loopback included, no bypass), so every request
kind — navigations, each HTTP redirect hop, JavaScript redirects, subresources, fetch/XHR, iframes,
websockets, service workers, preconnects — arrives here as a plain-HTTP request or a CONNECT tunnel
before any connection to the target exists. Each target passes `tools.web.netguard.check_target` (public
addresses only in every spelling, `FETCH_ALLOWED_HOSTS` exempt) and the blocked domains; the proxy then
connects to the address it checked, so DNS cannot be rebound in between. A refused target gets a 403
whose reason the browser tools report for a refused navigation (`refusal_for`).
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from tools.core.errors import ToolFailure
from tools.search import blocked_by
from tools.web.netguard import NetPolicy, Resolver, Target, check_target, system_resolver

_HEAD_LIMIT = 64 * 1024
_IDLE_S = 60.0
_HOP_HEADERS = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")


@dataclass(frozen=True)
class ProxyRules:
    """What the proxy lets through: the address policy and the blocked URL prefixes."""

    policy: NetPolicy
    blocked: tuple[str, ...] = ()
    resolver: Resolver = system_resolver

    def check(self, url: str) -> Target:
        """The checked target of `url`; ToolFailure saying why when it may not be reached."""
        prefix = blocked_by(url, list(self.blocked))
        if prefix:
            raise ToolFailure(f"{url} is on a blocked domain ({prefix}).", "blocked")
        return check_target(url, self.policy, self.resolver)


class FilteringProxy:
    """A threaded HTTP proxy on 127.0.0.1 (an ephemeral port) that refuses unchecked targets."""

    def __init__(self, rules: ProxyRules, connect_timeout: float = 10.0) -> None:
        self.rules = rules
        self.connect_timeout = connect_timeout
        self._refusals: OrderedDict[str, str] = OrderedDict()
        self.refused = 0
        """How many requests were refused (benchmarks and tests read it)."""
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        self._server.daemon_threads = True
        self._server.allow_reuse_address = True
        self._server.server_bind()
        self._server.server_activate()
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="browser-proxy", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop accepting; tunnels still open end with their sockets."""
        self._server.shutdown()
        self._server.server_close()

    def refusal_for(self, url: str) -> str | None:
        """Why the last request for `url`'s host and port was refused, if it was."""
        try:
            parts = urlsplit(url)
            key = f"{(parts.hostname or '').lower()}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
        except ValueError:
            return None
        with self._lock:
            return self._refusals.get(key)

    def _remember(self, host: str, port: int, reason: str) -> None:
        with self._lock:
            self.refused += 1
            self._refusals[f"{host.lower().strip('[]')}:{port}"] = reason
            while len(self._refusals) > 256:
                self._refusals.popitem(last=False)

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(_IDLE_S)
        try:
            head, rest = _read_head(client)
            if head is None:
                return
            lines = head.decode("latin-1").split("\r\n")
            method, _, target = lines[0].partition(" ")
            target = target.rsplit(" ", 1)[0]
            if method.upper() == "CONNECT":
                self._tunnel(client, target)
            else:
                self._forward(client, method, target, lines[1:], rest)
        except OSError:
            pass
        finally:
            client.close()

    def _checked(self, client: socket.socket, url: str, host: str, port: int) -> Target | None:
        try:
            return self.rules.check(url)
        except ToolFailure as exc:
            self._remember(host, port, str(exc))
            body = f"Refused by the harness's browser proxy: {exc}\n".encode()
            client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
                           b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            return None

    def _connect(self, target: Target) -> socket.socket:
        return socket.create_connection((target.address, target.port), timeout=self.connect_timeout)

    def _tunnel(self, client: socket.socket, authority: str) -> None:
        host, port = _split_authority(authority, 443)
        scheme = "http" if port == 80 else "https"
        bracketed = f"[{host}]" if ":" in host else host
        target = self._checked(client, f"{scheme}://{bracketed}:{port}/", host, port)
        if target is None:
            return
        try:
            upstream = self._connect(target)
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            return
        client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        _pipe(client, upstream)

    def _forward(self, client: socket.socket, method: str, url: str, headers: list[str], rest: bytes) -> None:
        try:
            parts = urlsplit(url)
            host, port = parts.hostname or "", parts.port or 80
        except ValueError:
            host, port = "", 80
        if parts.scheme != "http" or not host:
            self._checked(client, url if "://" in url else f"invalid:{url}", host, port)
            return
        target = self._checked(client, url, host, port)
        if target is None:
            return
        path = parts.path or "/"
        kept = [h for h in headers if h and h.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
        request = "\r\n".join([f"{method} {path}{'?' + parts.query if parts.query else ''} HTTP/1.1",
                               *kept, "Connection: close", "", ""]).encode("latin-1")
        try:
            upstream = self._connect(target)
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            return
        upstream.sendall(request)
        # The body goes on as it arrives, while the response comes back: a body larger than the first read
        # (or sent after the head, as Chromium does for a POST) used to wait behind the response and be lost.
        sender = threading.Thread(target=_send_body, args=(client, upstream, rest, headers), daemon=True)
        sender.start()
        _relay_response(upstream, client)
        _copy(upstream, client)
        sender.join(timeout=_IDLE_S)
        upstream.close()


def _body_length(headers: list[str]) -> int | None:
    """The request body's Content-Length, None when it is chunked or unsaid (then: until the client stops)."""
    for line in headers:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            return int(value.strip())
    return None


def _send_body(client: socket.socket, upstream: socket.socket, rest: bytes, headers: list[str]) -> None:
    """Forward the request body whole: what came with the head, then the rest up to Content-Length."""
    length = _body_length(headers)
    chunked = any(h.partition(":")[0].strip().lower() == "transfer-encoding" and "chunked" in h.lower()
                  for h in headers)
    try:
        if rest:
            upstream.sendall(rest if length is None else rest[:length])
        left = None if length is None else length - min(len(rest), length)
        if left == 0 or (left is None and not chunked):
            return
        while left is None or left > 0:
            chunk = client.recv(65536 if left is None else min(65536, left))
            if not chunk:
                return
            upstream.sendall(chunk)
            if left is not None:
                left -= len(chunk)
    except OSError:
        return


def _copy(src: socket.socket, dst: socket.socket) -> None:
    """Copy `src` into `dst` until `src` ends, then shut both down."""
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk or len(data) > _HEAD_LIMIT:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _split_authority(authority: str, default_port: int) -> tuple[str, int]:
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        port = tail.lstrip(":")
    else:
        host, _, port = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    return host, int(port) if port.isdigit() else default_port


def _relay_response(upstream: socket.socket, client: socket.socket) -> None:
    """Pass the response head on with `Connection: close`, so the browser never reuses this connection."""
    head, rest = _read_head(upstream)
    if head is None:
        return
    lines = [ln for ln in head.decode("latin-1").split("\r\n")
             if ln.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
    client.sendall("\r\n".join([*lines, "Connection: close", "", ""]).encode("latin-1") + rest)


def _pipe(a: socket.socket, b: socket.socket, on_close: Callable[[], None] | None = None) -> None:
    """Copy bytes both ways until either side closes."""
    other = threading.Thread(target=_copy, args=(b, a), daemon=True)
    other.start()
    _copy(a, b)
    other.join(timeout=_IDLE_S)
    b.close()
    if on_close is not None:
        on_close()
