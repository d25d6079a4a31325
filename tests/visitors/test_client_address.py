"""The one client-address parser (issue 36): X-Forwarded-For believed only from a TRUSTED_PROXIES peer."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from config import ConfigError, load_settings
from visitors.client_address import TrustedProxies, from_request, from_scope


def _scope(peer: str, *forwarded: str) -> dict:
    headers = [(b"x-forwarded-for", line.encode()) for line in forwarded]
    return {"type": "http", "method": "POST", "path": "/gradio_api/queue/join", "headers": headers,
            "client": (peer, 50000), "query_string": b""}


def test_no_trusted_proxy_means_the_peer_whatever_the_header_says():
    proxies = TrustedProxies.of(load_settings(TRUSTED_PROXIES=None, SPACE_ID=None))
    assert proxies.networks == ()
    assert from_scope(proxies, _scope("198.51.100.7", "203.0.113.1")) == "198.51.100.7"


def test_a_trusted_peer_gives_the_rightmost_hop_it_did_not_add_itself():
    proxies = TrustedProxies.of(load_settings(TRUSTED_PROXIES="10.0.0.0/8"))
    # the client wrote "1.1.1.1"; the proxy appended the address it saw (203.0.113.9); 10.1.2.3 is a second proxy
    assert from_scope(proxies, _scope("10.0.0.5", "1.1.1.1, 203.0.113.9", "10.1.2.3")) == "203.0.113.9"


def test_every_header_line_is_read_in_order_by_both_callers():
    proxies = TrustedProxies.of(load_settings(TRUSTED_PROXIES="127.0.0.1"))
    scope = _scope("127.0.0.1", "1.1.1.1", "203.0.113.9")
    assert from_scope(proxies, scope) == from_request(proxies, Request(scope)) == "203.0.113.9"


def test_a_space_trusts_only_private_networks_by_default():
    proxies = TrustedProxies.of(load_settings(TRUSTED_PROXIES=None, SPACE_ID="owner/space"))
    assert proxies.trusts("10.16.0.4") and not proxies.trusts("203.0.113.9")
    assert from_scope(proxies, _scope("203.0.113.9", "1.1.1.1")) == "203.0.113.9"


def test_an_empty_setting_trusts_nobody_even_on_a_space():
    proxies = TrustedProxies.of(load_settings(TRUSTED_PROXIES="", SPACE_ID="owner/space"))
    assert from_scope(proxies, _scope("10.0.0.5", "1.1.1.1")) == "10.0.0.5"


def test_a_bad_network_fails_at_start_naming_the_setting():
    with pytest.raises(ConfigError, match="TRUSTED_PROXIES"):
        load_settings(TRUSTED_PROXIES="10.0.0.0/8,not-an-ip")
