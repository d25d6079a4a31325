"""File fields take uploads only: no request makes the server download a URL given as a file.

Gradio's API accepts a file input as `{"path": "https://…", "meta": {"_type": "gradio.FileData"}}` and,
before any handler runs, downloads it (`processing_utils.async_move_files_to_cache` →
`async_ssrf_protected_download`) with no size cap: a 1.5 GB body cost the app 3.3 GiB and 1.5 GB of
disk, past both upload limits, from an anonymous visitor of /preview, /ask or /chat. `install()`
wraps the app's `preprocess_data` (the one step every queued and unqueued event's inputs go through
before that move) and refuses an event any of whose inputs holds a file whose path has a URL scheme,
before anything is fetched. Nobody is exempt, the owner included: a URL belongs in the question,
where the agent's `fetch_webpage` opens it under its address rules and MAX_DOWNLOAD_MB.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import gradio as gr

URL_SCHEME = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.\-]*:(//|\\\\)")
REFUSAL = ("File fields take uploaded files only; the server does not download a URL given as a file. Put the "
           "address in the question instead: the agent opens it with fetch_webpage, under its address rules "
           "and MAX_DOWNLOAD_MB.")


def _paths(value: Any, depth: int = 0) -> Iterator[str]:
    """Every `path` string of a file object anywhere in an input value (nested lists and dicts).

    Not `url`: a browser's own upload carries the served URL there, and gradio downloads only `path`.
    """
    if depth > 32:
        return
    if isinstance(value, dict):
        if isinstance(value.get("path"), str):
            yield value["path"]
        for item in value.values():
            yield from _paths(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item, depth + 1)


def names_a_url(inputs: Any) -> bool:
    """True when a file object in `inputs` gives a URL (any scheme) as its path."""
    return any(URL_SCHEME.match(p) for p in _paths(inputs))


def install(blocks: gr.Blocks) -> None:
    """Refuse, before gradio moves any file to its cache, every event whose inputs name a file by URL."""
    original = blocks.preprocess_data

    async def preprocess_data(block_fn: Any, inputs: list[Any], state: Any, explicit_call: bool = False) -> Any:
        if names_a_url(inputs):
            raise gr.Error(REFUSAL)
        return await original(block_fn, inputs, state, explicit_call)

    blocks.preprocess_data = preprocess_data  # type: ignore[method-assign]

