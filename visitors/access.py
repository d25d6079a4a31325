"""Who may spend the model in the app: `APP_ALLOWED_USERS`, checked before any model request.

A public Space holds its owner's API key, so by default (when `SPACE_ID` is set) only the Space's
owner may use the model; elsewhere anyone may (`*`). The identity is the Hugging Face OAuth login
(`gr.OAuthProfile`), which gradio gives handlers on a Space; without a login a visitor is anonymous
and only `*` lets them in. Refused visitors get a message saying who may run it and how to get
their own copy; what needs no model (browsing tasks, previews, RAG lookups) stays open.

An org-owned Space: its SPACE_AUTHOR_NAME is the org, which nobody signs in as. A name in the list
also admits the members of the org of that name, read from the login's `orgs` (Hugging Face's
userinfo lists each org's `preferred_username` and the member's `roleInOrg`); members with the
`read` role only are not admitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from config import Settings

ANYONE = "*"
SPENDING_ROLES = frozenset({"admin", "write", "contributor"})
"""Org roles that may spend an org-owned Space's key (a `read` member may not); no role given counts as member."""


@dataclass(frozen=True)
class Access:
    """The allowed usernames (lower-case), or None when anyone may spend."""

    users: frozenset[str] | None
    space_id: str | None = None

    @classmethod
    def of(cls, settings: Settings) -> Access:
        """From APP_ALLOWED_USERS; unset means the Space's owner on a Space, anyone elsewhere."""
        raw = settings.APP_ALLOWED_USERS
        if raw is None:
            owner = space_owner(settings)
            raw = owner if owner else ANYONE
        names = {n.strip().lower() for n in raw.split(",") if n.strip()}
        return cls(None if ANYONE in names else frozenset(names), settings.SPACE_ID)

    def allows(self, username: str | None, orgs: Iterable[str] = ()) -> bool:
        """Whether `username` (None: not signed in), member of `orgs` (spending roles only), may make model requests."""
        if self.users is None:
            return True
        if not username:
            return False
        return username.strip().lower() in self.users or any(o.lower() in self.users for o in orgs)

    def refusal(self, username: str | None) -> str:
        """What a refused visitor reads: who may run the model here and how to run their own copy."""
        who = ", ".join(f"**{u}**" for u in sorted(self.users or ())) or "nobody (APP_ALLOWED_USERS is empty)"
        you = f"You are signed in as **{username}**." if username else "You are not signed in."
        copy = (f"Duplicate the Space (⋮ → *Duplicate this Space* on https://huggingface.co/spaces/{self.space_id}) "
                "and set your own OPENAI_API_KEY there" if self.space_id
                else "Run your own copy of the app with your own OPENAI_API_KEY")
        return (f"🔒 This app spends its owner's API key: only {who} may run the model here (signed in with their "
                f"Hugging Face username). {you} {copy}. Browsing tasks, previews and RAG lookups stay open.")


def space_owner(settings: Settings) -> str | None:
    """The Space's owner: SPACE_AUTHOR_NAME, else the part of SPACE_ID before the slash; None off a Space."""
    if not settings.SPACE_ID:
        return None
    return (settings.SPACE_AUTHOR_NAME or settings.SPACE_ID.split("/", 1)[0]).strip() or None


def spending_orgs(profile: Any) -> list[str]:
    """The org usernames of a login (`gr.OAuthProfile` is the userinfo dict) in which its role may spend."""
    orgs = profile.get("orgs") if isinstance(profile, Mapping) else None
    names = []
    for org in orgs if isinstance(orgs, list) else []:
        if not isinstance(org, Mapping):
            continue
        role = str(org.get("roleInOrg") or "").lower()
        name = org.get("preferred_username") or org.get("name")
        if name and (not role or role in SPENDING_ROLES):
            names.append(str(name))
    return names


def access_summary(settings: Settings) -> str:
    """Who may spend, stated once at start-up (the log) and in the README: names the org case."""
    access = Access.of(settings)
    if access.users is None:
        return "Anyone who opens the app may run the model (APP_ALLOWED_USERS=* or not on a Space)."
    names = ", ".join(sorted(access.users)) or "nobody"
    origin = "APP_ALLOWED_USERS" if settings.APP_ALLOWED_USERS is not None else "the Space's owner (SPACE_AUTHOR_NAME)"
    return (f"Only {names} may run the model ({origin}), signed in with Hugging Face; when a name is an "
            "organisation, its members with the admin, write or contributor role may too.")


def profile_from_request(request: Any) -> Any:
    """The signed-in `gr.OAuthProfile` of a request's session (None when not signed in), as gradio builds it.

    For handlers gradio gives no OAuthProfile argument (ChatInterface's function): gradio's own `special_args`
    reads the session the same way it does for an annotated handler, expiry included.
    """
    if request is None:
        return None
    from gradio.helpers import special_args

    inputs, *_ = special_args(_wants_profile, inputs=[], request=request)
    return inputs[0] if inputs else None


def _wants_profile(profile: gr.OAuthProfile | None) -> Any:
    """A handler signature gradio fills with the request's login (module level: its hints must resolve)."""
    return profile


def username_of(profile: Any) -> str | None:
    """The signed-in username from a `gr.OAuthProfile` or a username string (None when not signed in)."""
    name = profile if isinstance(profile, str) else getattr(profile, "username", None) if profile is not None else None
    return str(name) if name else None


def refusal_for(settings: Settings, profile: Any) -> str | None:
    """None when the visitor of `profile` may spend; else the message to show them (no model request follows)."""
    access = Access.of(settings)
    name = username_of(profile)
    return None if access.allows(name, spending_orgs(profile)) else access.refusal(name)
