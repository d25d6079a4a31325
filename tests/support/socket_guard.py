"""No test reaches outside loopback: every outbound connection of the test process is checked.

`install()` (called once per test process by tests/conftest.py) wraps `socket.socket.connect` and
`connect_ex`, which every client in the process goes through: `socket.create_connection`, urllib,
http.client, requests/urllib3, httpx/httpcore, and asyncio's `sock_connect`/`create_connection`
(they call the socket's `connect`). A connection to anything but 127.0.0.0/8, ::1 (also as
::ffff:127.x) or the names `localhost`/`*.localhost` is refused before it leaves the machine with
`OutsideLoopbackError`, and recorded: the autouse fixture fails the test that made it even when the
code under test swallowed the error. Unix, netlink and other non-IP sockets are not looked at.

Child processes (the app under test, llama.cpp, the sandbox) are not affected: they run their own
interpreter, and the tests hand them loopback URLs.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any

LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


class OutsideLoopbackError(ConnectionRefusedError):
    """A test tried to connect outside loopback (the connection was not made)."""


_violations: list[str] = []
_lock = threading.Lock()
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def is_loopback(host: object) -> bool:
    """True for a loopback IP literal (127.0.0.0/8, ::1, ::ffff:127.x) or a `localhost` name."""
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%", 1)[0].lower().rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # another name: it would be resolved and connected to for real
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if is_loopback(host):
        return
    message = f"a test connected to {address!r}: tests must stay on loopback (127.0.0.1)"
    with _lock:
        _violations.append(message)
    raise OutsideLoopbackError(message)


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


def install() -> None:
    """Guard every socket of this process (idempotent)."""
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    """Restore the unguarded methods."""
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]


def take_violations() -> list[str]:
    """The refused connections since the last call (and forget them)."""
    with _lock:
        found = list(_violations)
        _violations.clear()
    return found
