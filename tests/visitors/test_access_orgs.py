"""Who may spend on an org-owned Space: the org's members (not `read` ones), from the login's `orgs` claim.

The profile shape is Hugging Face's userinfo (huggingface.js `UserInfo`: `orgs` items carry `preferred_username`
and `roleInOrg`), which gradio hands over as `gr.OAuthProfile` (a dict of it).
"""

from __future__ import annotations

import gradio as gr
import pytest

from config import load_settings
from visitors.access import access_summary, refusal_for, spending_orgs


def _profile(username: str, *orgs: tuple[str, str | None]) -> gr.OAuthProfile:
    return gr.OAuthProfile({"sub": "1", "name": username, "preferred_username": username, "picture": "", "profile": "",
                            "isPro": False, "orgs": [{"sub": "2", "name": o.title(), "preferred_username": o,
                                                      "isEnterprise": False, **({"roleInOrg": r} if r else {})}
                                                     for o, r in orgs]})


@pytest.fixture()
def org_space(monkeypatch):
    monkeypatch.setenv("SPACE_ID", "the-org/gaia-harness")
    monkeypatch.setenv("SPACE_AUTHOR_NAME", "the-org")
    return load_settings()


@pytest.mark.parametrize("role", ["admin", "write", "contributor", None])
def test_members_of_the_owning_org_may_spend(org_space, role):
    assert refusal_for(org_space, _profile("alice", ("the-org", role))) is None


def test_read_members_and_other_orgs_may_not(org_space):
    assert "the-org" in (refusal_for(org_space, _profile("bob", ("the-org", "read"))) or "")
    assert refusal_for(org_space, _profile("carol", ("another-org", "admin"))) is not None
    assert refusal_for(org_space, None) is not None and refusal_for(org_space, "the-org-fan") is not None


def test_a_listed_username_still_works_and_orgs_count_only_by_their_username(monkeypatch):
    monkeypatch.setenv("APP_ALLOWED_USERS", "dave, Team-X")
    settings = load_settings()
    assert refusal_for(settings, _profile("Dave")) is None
    assert refusal_for(settings, _profile("erin", ("team-x", "write"))) is None
    assert spending_orgs({"orgs": [{"name": "Team X"}, "junk", {"preferred_username": "y", "roleInOrg": "read"}]}) == [
        "Team X"]


def test_start_up_statement_names_the_org_case(org_space):
    text = access_summary(org_space)
    assert "the-org" in text and "organisation" in text and "members" in text
