"""Address checks for every download of a model-chosen URL: public addresses only, checked at every hop.

A URL the model picks is untrusted (a search result or a page can inject "fetch http://169.254.169.254/"),
so before each request — the first and every redirect — the host is parsed the way the C library
would (decimal, hex, octal and short IPv4 forms, IPv4-mapped IPv6, trailing dots), resolved, and
refused when any address it resolves to is loopback, private, link-local, CGNAT, unspecified,
multicast or reserved. The connection then goes to the address that was checked (the URL carries
the IP, the Host header and TLS SNI carry the name), so DNS cannot be rebound between check and
connect. `FETCH_ALLOWED_HOSTS` (`host:port` pairs) exempts named services: tests' loopback servers,
an operator's intranet. Search-provider URLs the operator configured do not come through here.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from tools.core.errors import ToolFailure

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

# Blocks not (or not in every Python version) covered by ipaddress' is_private / is_reserved.
_NOT_PUBLIC_V4 = tuple(ipaddress.ip_network(n) for n in ("0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known prefix: the last 32 bits are the IPv4 address reached
_NAMES_ALWAYS_LOCAL = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                       "metadata", "metadata.google.internal")
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class NetPolicy:
    """What fetching tools may reach: public addresses, plus the exempt `host:port` pairs."""

    allowed: frozenset[tuple[str, int]] = frozenset()

    @classmethod
    def parse(cls, allowed_hosts: str) -> NetPolicy:
        """From `FETCH_ALLOWED_HOSTS` ("127.0.0.1:8080,intranet.local:443")."""
        pairs = set()
        for item in (allowed_hosts or "").split(","):
            item = item.strip()
            if not item:
                continue
            host, sep, port = item.rpartition(":")
            if not sep or not port.isdigit():
                raise ValueError(f"FETCH_ALLOWED_HOSTS entry {item!r} is not host:port")
            pairs.add((_normal_host(host.strip("[]")), int(port)))
        return cls(frozenset(pairs))

    def exempt(self, host: str, port: int) -> bool:
        """True when `host:port` was named in FETCH_ALLOWED_HOSTS."""
        return (_normal_host(host), port) in self.allowed


def parse_ip(host: str) -> IPAddress | None:
    """The address `host` spells in any form a resolver accepts.

    For example 127.1, 0x7f.1, 2130706433, 0177.0.0.1 or [::ffff:127.0.0.1].
    """
    text = _normal_host(host)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    try:
        # inet_aton accepts exactly the legacy forms (decimal, hex, octal, 1-3 parts) that connect() would use.
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


def is_public(address: IPAddress) -> bool:
    """False for loopback, private, link-local, CGNAT, unspecified, multicast and reserved addresses."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return is_public(mapped)
        if address.teredo:
            return is_public(address.teredo[1])
        if address in _NAT64:
            return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if address.is_site_local:  # fec0::/10, deprecated but still routed as private by some stacks
            return False
    if address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified \
            or address.is_multicast or address.is_reserved:
        return False
    if isinstance(address, ipaddress.IPv4Address) and any(address in net for net in _NOT_PUBLIC_V4):
        return False
    return address.is_global


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host`."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolFailure(f"the host name {host} could not be resolved ({exc}). Check the address or search for "
                          "the page.", "network_error") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class Target:
    """One checked hop: the URL asked for, and the address the connection must go to."""

    url: str
    host: str
    port: int
    address: str
    """The checked IP to connect to (or the host itself when exempt)."""


def check_target(url: str, policy: NetPolicy, resolver: Resolver = system_resolver) -> Target:
    """Resolve and check one hop of `url`; ToolFailure (kind `blocked`) when it points at a non-public address."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:  # "http://[::1": an unbalanced IPv6 literal
        raise ToolFailure(f"{url} is not a valid URL. Pass a full URL such as https://example.org/page.",
                          "bad_arguments") from None
    if parts.scheme not in ("http", "https"):
        raise ToolFailure(f"only http:// and https:// URLs can be fetched, not {parts.scheme or 'no scheme'}:.",
                          "bad_arguments")
    if not host:
        raise ToolFailure(f"{url} has no host name. Pass a full URL such as https://example.org/page.", "bad_arguments")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ToolFailure(f"{url} has an invalid port.", "bad_arguments") from None
    if policy.exempt(host, port):
        return Target(url, host, port, _normal_host(host))
    name = _normal_host(host)
    literal = parse_ip(name)
    if literal is not None:
        addresses = [str(literal)]
    elif name in _NAMES_ALWAYS_LOCAL or name.endswith((".localhost", ".internal", ".local")):
        raise _refused(url, name)
    else:
        addresses = resolver(name, port)
    if not addresses:
        raise ToolFailure(f"the host name {name} resolved to no address.", "network_error")
    for text in addresses:
        address = parse_ip(text.split("%")[0])
        if address is None or not is_public(address):
            raise _refused(url, text)
    return Target(url, name, port, addresses[0])


def _refused(url: str, address: str) -> ToolFailure:
    return ToolFailure(f"{url} points at a local or private address ({address}), which fetching tools may not "
                       "reach. Use a public web address.", "blocked")


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _pinned_request(client: httpx.Client, target: Target, headers: dict[str, str]) -> httpx.Request:
    """A request for `target.url` that connects to `target.address`, with the original Host and TLS name.

    The URL is rebuilt from the checked parts, so whatever httpx would make of odd syntax (userinfo,
    backslashes) cannot name another host than the one that was checked.
    """
    parts = urlsplit(target.url)
    ip = f"[{target.address}]" if ":" in target.address else target.address
    pinned = urlunsplit((parts.scheme, f"{ip}:{target.port}", parts.path or "/", parts.query, ""))
    if target.address == target.host:  # exempt by FETCH_ALLOWED_HOSTS: connect by name
        return client.build_request("GET", pinned, headers=headers)
    default_port = 443 if parts.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    request = client.build_request("GET", pinned, headers={**headers, "Host": host_header})
    if parts.scheme == "https":
        request.extensions["sni_hostname"] = target.host  # certificate checked against the name, not the IP
    return request


@contextmanager
def guarded_get(url: str, policy: NetPolicy, *, timeout: float, headers: dict[str, str] | None = None,
                max_redirects: int = 10, check: Callable[[str], None] | None = None,
                resolver: Resolver = system_resolver) -> Iterator[tuple[httpx.Response, str]]:
    """GET `url`, following redirects by hand so each hop is checked before it is requested.

    Yields the streamed final response and its URL. `timeout` is one deadline for all the hops
    together (a slow redirect chain cannot hold a fetch for hops x timeout): every hop's connect and
    reads get only what is left of it, and no hop starts once it has passed (ToolFailure `timeout`).
    Reading the body is the caller's (with the same deadline). `check` is called on every hop's URL
    too (blocked domains). Network failures surface as httpx errors for the caller to phrase.
    """
    current = url
    deadline = time.monotonic() + timeout
    # trust_env=False: a proxy from the environment would connect on our behalf, past the checks.
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        for hop in range(max_redirects + 1):
            if check is not None:
                check(current)
            target = check_target(current, policy, resolver)
            if (left := deadline - time.monotonic()) <= 0:
                raise ToolFailure(f"{url} was still redirecting after {timeout:.0f}s ({hop} hops). Try the final "
                                  "address directly or another source.", "timeout")
            request = _pinned_request(client, target, dict(headers or {}))
            request.extensions["timeout"] = httpx.Timeout(left).as_dict()
            response = client.send(request, stream=True)
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                response.close()
                current = urljoin(current, location)
                continue
            try:
                yield response, current
            finally:
                response.close()
            return
    raise ToolFailure(f"{url} redirects more than {max_redirects} times. Try the final address directly or another "
                      "source.", "http_error")
