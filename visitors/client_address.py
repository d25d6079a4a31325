"""Who a request comes from: the ONE parser of client addresses, for the queue's fair share and the upload budget.

`X-Forwarded-For` is a header any client can write. It is believed only when the socket's peer is a
proxy TRUSTED_PROXIES names (a Space's front proxy); then the client is the rightmost hop that is
not itself a trusted proxy (hops to its left were written by the client and prove nothing). With no
trusted proxy in front (Docker, a local run) the peer is the client and the header is ignored, so 70
forged joins from one client count as one address. Every `X-Forwarded-For` line of a request is read,
in order, as one comma-separated list (RFC 9110 §5.3): the queue and the upload route see the same address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from config import Settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
SPACE_PROXY_NETWORKS = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
"""Where a Space's front proxy connects from when TRUSTED_PROXIES is unset (private networks only)."""


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip('"')
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class TrustedProxies:
    """The proxies whose X-Forwarded-For is believed (none: the peer is always the client)."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def of(cls, settings: Settings) -> TrustedProxies:
        """From TRUSTED_PROXIES; unset means a Space's private networks on a Space, none elsewhere."""
        raw = settings.TRUSTED_PROXIES
        if raw is None:
            raw = ",".join(SPACE_PROXY_NETWORKS) if settings.SPACE_ID else ""
        return cls(tuple(ipaddress.ip_network(p.strip(), strict=False) for p in raw.split(",") if p.strip()))

    def trusts(self, host: str) -> bool:
        """Whether `host` (an address as text) is one of the trusted proxies."""
        address = _address(host)
        return address is not None and any(address in n for n in self.networks)

    def client(self, peer: str, forwarded: Iterable[str]) -> str:
        """The client's address: `peer` unless it is trusted, else the rightmost untrusted X-Forwarded-For hop."""
        if not self.trusts(peer):
            return peer
        hops = [h.strip() for line in forwarded for h in line.split(",") if h.strip()]
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:  # garbage written by the client: nothing left of it can be believed
                return hop
            if not self.trusts(str(address)):
                return str(address)
        return str(_address(hops[0])) if hops else peer  # only proxies: the first one saw the client


def from_request(proxies: TrustedProxies, request: Any) -> str:
    """The client address of a starlette/fastapi request ('' when unknown)."""
    if request is None:
        return ""
    client = getattr(request, "client", None)
    peer = str(getattr(client, "host", "") or "")
    getlist = getattr(getattr(request, "headers", None), "getlist", None)
    lines = list(getlist("x-forwarded-for")) if callable(getlist) else []
    return proxies.client(peer, lines)


def from_scope(proxies: TrustedProxies, scope: Any) -> str:
    """The client address of an ASGI scope (the upload budget's middleware)."""
    peer = (scope.get("client") or ("", 0))[0] or ""
    lines = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"x-forwarded-for"]
    return proxies.client(str(peer), lines)


def peer_is_the_socket() -> None:
    """Make uvicorn leave the socket's peer in `scope["client"]`, so this module alone reads X-Forwarded-For.

    Gradio builds `uvicorn.Config` without `proxy_headers`, and uvicorn's default then rewrites the peer from
    X-Forwarded-For for any request from 127.0.0.1 or ::1 (FORWARDED_ALLOW_IPS): a local client's forged header
    became its address before any check of ours. Idempotent; called once before launch.
    """
    import uvicorn

    init = uvicorn.Config.__init__
    if getattr(init, "_peer_is_the_socket", False):
        return

    def without_proxy_headers(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["proxy_headers"] = False
        init(self, *args, **kwargs)

    without_proxy_headers._peer_is_the_socket = True  # type: ignore[attr-defined]
    uvicorn.Config.__init__ = without_proxy_headers  # type: ignore[method-assign]
