"""Research depth: what the model must read to reach a fact on page 8 of a long article, and what the page cache saves.

    .venv/bin/python bench/research_depth.py [--runs 5]

A ~150 KB article (filler paragraphs, one fact placed so that it falls on page 8 at the default
MAX_FILE_SIZE of 10,000 characters) is served on 127.0.0.1 and read through the real tools:

1. Tokens the model reads to reach the fact (characters / 4, English prose's usual ratio):
   - find_in_page(url, "<words of the fact>"): the find reply, and the find reply plus page 8 read whole;
   - paging: fetch_webpage pages 1 to 8 (each reply up to MAX_FILE_SIZE);
   - before paging: the first MAX_FILE_SIZE characters were all a fetch returned ("ask for a narrower
     part", with no way to ask): the fact was unreachable, whatever was read.
2. Time to page 2: from the run's page cache (downloaded and converted once) vs a fresh run that
   downloads and converts the page again (median of --runs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from config import Settings, load_settings  # noqa: E402
from tests.support.research_site import long_article  # noqa: E402
from tests.support.web_server import LocalWebServer, Reply  # noqa: E402
from tools.core.context import ToolContext  # noqa: E402
from tools.core.services import RunServices  # noqa: E402
from tools.core.workspace import Workspace  # noqa: E402
from tools.web import make_web_tools  # noqa: E402

FACT = "The harbour master's ledger for 1907 lists exactly 4,512 vessels."
PARAGRAPHS = 150
TARGET_PAGE = 8
CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    """Estimated tokens of `text`."""
    return round(len(text) / CHARS_PER_TOKEN)


def place_fact(settings: Settings, server: LocalWebServer, work_root: Path) -> int:
    """The paragraph index at which the fact lands on TARGET_PAGE (found by reading the real tool's pages)."""
    low, high = 0, PARAGRAPHS - 1
    while low <= high:
        index = (low + high) // 2
        path = f"/probe{index}"
        server.routes[path] = Reply(200, long_article("Harbour records", PARAGRAPHS, {index: FACT}))
        with Workspace(work_root / f"probe{index}", 2**26) as work:
            tools = {t.name: t for t in make_web_tools(settings)}
            found = tools["find_in_page"].invoke({"source": server.url(path), "query": "harbour master's ledger"},
                                                 config=ToolContext(run_services=RunServices(work)).to_config())
        page = int(found.split("1. page ")[1].split(" of")[0])
        if page == TARGET_PAGE:
            return index
        low, high = (index + 1, high) if page < TARGET_PAGE else (low, index - 1)
    raise SystemExit("could not place the fact on page 8; change PARAGRAPHS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, LocalWebServer({}) as server:
        settings = load_settings(FETCH_ALLOWED_HOSTS=server.host_port, TOOL_TIMEOUT=60)
        limit = settings.MAX_FILE_SIZE
        index = place_fact(settings, server, Path(tmp))
        html = long_article("Harbour records", PARAGRAPHS, {index: FACT})
        server.routes["/article"] = Reply(200, html)
        url = server.url("/article")
        tools = {t.name: t for t in make_web_tools(settings)}

        with Workspace(Path(tmp) / "read", 2**26) as work:
            config = ToolContext(run_services=RunServices(work)).to_config()
            found = tools["find_in_page"].invoke({"source": url, "query": "harbour master's ledger"}, config=config)
            replies = [tools["fetch_webpage"].invoke({"url": url, "page": n}, config=config)
                       for n in range(1, TARGET_PAGE + 1)]
            total_pages = int(replies[0].split("[page 1 of ")[1].split("]")[0])
            assert FACT in found and FACT in replies[-1] and all(FACT not in r for r in replies[:-1])
        whole = sum(len(r) for r in replies)
        old_cut = replies[0][:limit]  # what the tool returned before paging: the first MAX_FILE_SIZE characters

        cached, fresh = [], []
        for run in range(args.runs):
            with Workspace(Path(tmp) / f"fresh{run}", 2**26) as work:
                config = ToolContext(run_services=RunServices(work)).to_config()
                start = time.perf_counter()
                tools["fetch_webpage"].invoke({"url": url, "page": 2}, config=config)  # downloads and converts
                fresh.append(time.perf_counter() - start)
                start = time.perf_counter()
                tools["fetch_webpage"].invoke({"url": url, "page": 2}, config=config)  # the run's cache
                cached.append(time.perf_counter() - start)

    print(f"Article: {len(html):,} bytes of HTML, {total_pages} pages of at most {limit:,} characters; "
          f"the fact is on page {TARGET_PAGE}.")
    print("Tokens read to reach the fact (characters / 4):")
    print(f"  find_in_page                      {tokens(found):>7,}  ({len(found):,} characters, one call)")
    print(f"  find_in_page + page 8 read whole  {tokens(found) + tokens(replies[-1]):>7,}  (two calls)")
    print(f"  paging pages 1-8                  {tokens(''.join(replies)):>7,}  ({whole:,} characters, "
          f"{TARGET_PAGE} calls)")
    print(f"  before paging (first {limit:,} chars) {tokens(old_cut):>5,}  read, fact unreachable "
          f"({'absent' if FACT not in old_cut else 'present'} from what was returned)")
    print(f"Time to page 2 (median of {args.runs}):")
    print(f"  from the run's page cache  {statistics.median(cached) * 1000:8.2f} ms")
    print(f"  refetch and convert        {statistics.median(fresh) * 1000:8.2f} ms  "
          f"({statistics.median(fresh) / statistics.median(cached):,.0f}x)")


if __name__ == "__main__":
    main()
