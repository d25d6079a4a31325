"""HTML→markdown routes measured on real pages: links kept with the right URL, broken links, boilerplate, recall.

    .venv/bin/python bench/html_routes.py PATH/TO/readability/test/test-pages [--limit N]

The corpus is Mozilla Readability's test pages (each a saved real page, `source.html`, and its main
content as a reader should see it, `expected.html`, with links resolved against
http://fakehost/test/page.html). For each route — trafilatura alone, markdownify of the whole page,
and the chosen path of tools.documents.textio (both on the page tools.web.htmlprep prepares) — it counts:

- expected links kept: links of the expected main content present in the output with the same URL;
- broken link targets: output link targets that are no link of the page (resolved as a browser would);
- boilerplate characters: visible text of output lines whose words are mostly not in the main content;
- recall: the share of the main content's distinct words that the output has.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGE_URL = "http://fakehost/test/page.html"
_TARGET = re.compile(r"\]\(\s*(<[^>]*>|[^)\s]*)")


def _targets(markdown: str) -> list[str]:
    return [t[1:-1] if t.startswith("<") else t for t in _TARGET.findall(markdown)]


def _words(text: str) -> list[str]:
    return re.findall(r"\w{3,}", text.lower())


def _page_links(html: str) -> set[str]:
    import lxml.html

    root = lxml.html.document_fromstring(html)
    base = next((urljoin(PAGE_URL, n.get("href")) for n in root.iter("base") if n.get("href")), PAGE_URL)
    return {urljoin(base, (n.get("href") or n.get("src") or "").strip()) for n in root.iter("a", "img")
            if n.get("href") or n.get("src")}


def score(markdown: str, page_links: set[str], expected_links: set[str],
          expected_words: set[str]) -> tuple[int, int, int, float]:
    """(expected links kept, broken targets, boilerplate characters, recall) of one output."""
    targets = _targets(markdown)
    kept = sum(1 for t in set(targets) if t in expected_links)
    broken = sum(1 for t in targets if t not in page_links)
    boilerplate, seen = 0, set()
    for line in re.sub(r"\]\(\s*(<[^>]*>|[^)\s]*)[^)]*\)", "]", markdown).splitlines():
        words = _words(line)
        inside = [w for w in words if w in expected_words]
        seen.update(inside)
        if words and len(inside) < 0.5 * len(words):
            boilerplate += len(" ".join(line.split()))
    return kept, broken, boilerplate, len(seen) / max(1, len(expected_words))


def routes(html: str) -> dict[str, object]:
    """The routes compared, each a function of nothing giving markdown."""
    from tools.documents.textio import _markdownify, _trafilatura, html_to_markdown
    from tools.web.htmlprep import prepare

    page = prepare(html, PAGE_URL)
    return {"trafilatura (prepared page)": lambda: page.restore_links(_trafilatura(page.html, True)),
            "markdownify (prepared page)": lambda: page.restore_links(
                _markdownify(page.html, True, time.monotonic() + 60)),
            "chosen (tools.documents.textio)": lambda: html_to_markdown(html, url=PAGE_URL, links=True)}


def main() -> None:
    """Print one table row per route, summed over the corpus."""
    import lxml.html

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", type=Path, help="readability's test/test-pages folder")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    folders = sorted(p.parent for p in args.pages.glob("*/expected.html") if (p.parent / "source.html").exists())
    folders = folders[: args.limit] if args.limit else folders
    totals: dict[str, list[float]] = {}
    for folder in folders:
        html = (folder / "source.html").read_text(encoding="utf-8", errors="replace")
        expected = lxml.html.fragment_fromstring((folder / "expected.html").read_text(encoding="utf-8"),
                                                 create_parent="div")
        expected_links = {a.get("href") for a in expected.iter("a")
                          if a.get("href") and not a.get("href").startswith(("#", "javascript:"))}
        expected_words = set(_words(expected.text_content()))
        links = _page_links(html)
        for name, convert in routes(html).items():
            start = time.monotonic()
            measured = score(convert(), links, expected_links, expected_words)  # type: ignore[operator]
            row = totals.setdefault(name, [0, 0, 0, 0.0, 0.0, 0])
            for index, value in enumerate(measured):
                row[index] += value
            row[4] += time.monotonic() - start
            row[5] += len(expected_links)
    print(f"{len(folders)} pages")
    print("| route | expected links kept (right URL) | broken link targets | boilerplate chars | mean recall | s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (kept, broken, boilerplate, recall, seconds, wanted) in totals.items():
        print(f"| {name} | {kept:.0f} of {wanted:.0f} | {broken:.0f} | {boilerplate:.0f} | "
              f"{recall / max(1, len(folders)):.3f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
