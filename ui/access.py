"""Who may spend the model in the app: `APP_ALLOWED_USERS`, checked before any model request.

A public Space holds its owner's API key, so by default (when `SPACE_ID` is set) only the Space's
owner may use the model; elsewhere anyone may (`*`). The identity is the Hugging Face OAuth login
(`gr.OAuthProfile`), which gradio gives handlers on a Space; without a login a visitor is anonymous
and only `*` lets them in. Refused visitors get a message saying who may run it and how to get
their own copy; what needs no model (browsing tasks, previews, RAG lookups) stays open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from config import Settings

ANYONE = "*"


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

    def allows(self, username: str | None) -> bool:
        """Whether `username` (None: not signed in) may make model requests."""
        if self.users is None:
            return True
        return bool(username) and username.strip().lower() in self.users  # type: ignore[union-attr]

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


def username_of(profile: Any) -> str | None:
    """The signed-in username from a `gr.OAuthProfile` or a username string (None when not signed in)."""
    name = profile if isinstance(profile, str) else getattr(profile, "username", None) if profile is not None else None
    return str(name) if name else None


def refusal_for(settings: Settings, profile: Any) -> str | None:
    """None when the visitor of `profile` may spend; else the message to show them (no model request follows)."""
    access = Access.of(settings)
    name = username_of(profile)
    return None if access.allows(name) else access.refusal(name)
