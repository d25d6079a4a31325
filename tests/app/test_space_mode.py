"""On a Space the Batch tab has a Sign-in button; elsewhere (even with SPACE_ID copied over) it does not."""

from __future__ import annotations

import json
import urllib.request

import pytest
from gradio_client import Client

from tests.support.app_server import AppServer

pytestmark = pytest.mark.integration

SPACE_ENV = {"SPACE_ID": "someone/gaia-harness", "OAUTH_CLIENT_ID": "client-id", "OAUTH_CLIENT_SECRET": "secret",
             "OAUTH_SCOPES": "openid profile", "OPENID_PROVIDER_URL": "http://127.0.0.1:9"}


def _button_labels(url: str) -> set[str]:
    with urllib.request.urlopen(url + "config", timeout=10) as resp:
        return {str(c["props"].get("value")) for c in json.load(resp)["components"] if c.get("type") == "button"}


def test_on_a_space_the_login_button_is_there_and_api_mode_asks_to_sign_in(tmp_path):
    with AppServer({**SPACE_ENV, "SYSTEM": "spaces", "OUTPUT_DIR": str(tmp_path / "runs"),
                    "OPENAI_API_KEY": "sk-test"}) as app:
        assert "Sign in with Hugging Face" in _button_labels(app.url)
        client = Client(app.url, verbose=False)
        status, *_ = client.predict("Unit 4 scoring API", "validation", "", "All", 0, "", 1, 0, False, "",
                                    api_name="/evaluate")
        assert "username" in status  # not signed in, no username typed


def test_space_id_alone_does_not_turn_on_oauth(tmp_path):
    with AppServer({**SPACE_ENV, "OUTPUT_DIR": str(tmp_path / "runs")}) as app:
        labels = _button_labels(app.url)
        assert "▶ Run" in labels and "Sign in with Hugging Face" not in labels
