"""The generated docs: the tools page (registry + tool-spec table) and the settings page (`config.py`).

`python -m tools.core.generated_docs` rewrites the generated block of `docs/tools.md` and of
`docs/configuration.md` (each between its two markers); `tests/tools/test_generated_docs.py` fails when a
page and the code disagree, so a new tool, a renamed argument, a changed role or a new setting shows up in
the docs with the change that made it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from config import Settings
from tools.core.registry import ToolRegistry
from tools.core.specs import SPECS

DOCS = Path(__file__).resolve().parents[2] / "docs"
TOOLS_PAGE, SETTINGS_PAGE = DOCS / "tools.md", DOCS / "configuration.md"
TOOLS_BLOCK, SETTINGS_BLOCK = "TOOLS_TABLE", "SETTINGS_TABLE"


def _summary(description: str) -> str:
    """The first sentence of a tool's docstring (its schema's description), pipes escaped."""
    first = " ".join((description or "").strip().split("\n\n", 1)[0].split())
    sentence = first.split(". ", 1)[0].rstrip(".")
    return sentence.replace("|", "\\|") + "."


def tools_table(registry: ToolRegistry) -> str:
    """One row per active tool: name and arguments, tier, team roles, preview, what it does."""
    rows = ["| Tool | Tier | Team roles | Preview | What it does |", "| --- | --- | --- | --- | --- |"]
    for made in registry.tools:
        spec = SPECS.get(made.name)
        args = ", ".join(made.args)
        roles = ", ".join(sorted(spec.roles)) if spec and spec.roles else "—"
        preview = "yes" if spec and spec.preview else "no"
        rows.append(f"| `{made.name}({args})` | {registry.tier_of(made.name)} | {roles} | {preview} | "
                    f"{_summary(made.description)} |")
    return "\n".join(rows) + "\n"


def block_of(page: str, block: str) -> str:
    """The generated text between `<!-- BLOCK -->` and `<!-- /BLOCK -->` in `page`."""
    return page.partition(f"<!-- {block} -->\n")[2].partition(f"<!-- /{block} -->")[0]


def with_block(page: str, block: str, body: str) -> str:
    """`page` with its generated block `block` replaced by `body`."""
    begin, end = f"<!-- {block} -->\n", f"<!-- /{block} -->"
    head, found, rest = page.partition(begin)
    if not found:
        raise ValueError(f"the page has no {begin.strip()} marker")
    return f"{head}{begin}{body}{end}{rest.partition(end)[2]}"


def catalog_settings() -> Settings:
    """Settings under which every tool with its prerequisites installed is active, whatever `.env` says."""
    from config import load_settings

    # An endpoint makes the model-backed tools available (nothing is called); `rag_search` needs a built
    # index, which a fresh machine lacks, so the page lists it by hand and stays the same everywhere.
    return load_settings(OPENAI_API_KEY="sk-docs", OPENAI_BASE_URL="http://127.0.0.1:9/v1",
                         RAG_INDEX_DIR=Path("/nonexistent/gaia-rag-index"))


def _rewrite(page: Path, block: str, body: str) -> None:
    page.write_text(with_block(page.read_text(encoding="utf-8"), block, body), encoding="utf-8")


def main() -> int:
    """Rewrite both generated blocks (run it where every tool's prerequisites are installed)."""
    from config import settings_table
    from tools.browser.engines import BrowserEngines
    from tools.core.registry import build_registry

    browsers = BrowserEngines()  # the browser tools are built (never run) over a pool of their own
    try:
        registry = build_registry(catalog_settings(), deps={"browsers": browsers})
    finally:
        browsers.close()
    if registry.missing:
        print(f"warning: tools missing here, left out of the page: {sorted(registry.missing)}", file=sys.stderr)
    _rewrite(TOOLS_PAGE, TOOLS_BLOCK, tools_table(registry))
    _rewrite(SETTINGS_PAGE, SETTINGS_BLOCK, settings_table() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
