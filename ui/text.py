"""Text shown in Markdown components: tag-like parts kept visible instead of being eaten as HTML."""

from __future__ import annotations

import html


def shown(text: object) -> str:
    """`text` with `<`, `>` and `&` escaped, so `2023/<split>/` or `<no answer>` reach the screen intact.

    Gradio's Markdown drops unknown HTML tags; messages (exceptions, paths, model output) are not HTML.
    """
    return html.escape(str(text), quote=False)
