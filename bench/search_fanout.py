"""web_search latency: fan-out (SEARCH_FANOUT=all) vs failover (first), two loopback providers of LATENCY_S each.

    PYTHONPATH=. python bench/search_fanout.py [rounds]

The failover case is the one where it must ask both providers (the first answers with no results), which is
when a sequential search costs the sum; the fan-out asks both in any case. Prints the median times and their ratio.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Mapping

from config import load_settings
from tests.support.web_server import LocalWebServer, Reply, Request
from tools.web import make_web_tools

LATENCY_S = 0.5
WIKI = {"query": {"search": [{"ns": 0, "title": "Mercedes Sosa", "pageid": 1, "snippet": "Argentine singer"}]}}


def _slow(body: Mapping[str, object]) -> Callable[[Request], Reply]:
    def answer(request: Request) -> Reply:
        time.sleep(LATENCY_S)
        return Reply.json(body)
    return answer


def _median_s(fanout: str, rounds: int) -> float:
    with LocalWebServer({"/search": _slow({"results": []}), "/w/api.php": _slow(WIKI)}) as server:
        settings = load_settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                                 WIKIPEDIA_API_URL=server.url("/w/api.php"), SEARCH_FANOUT=fanout)
        tool = next(t for t in make_web_tools(settings) if t.name == "web_search")
        times = []
        for _ in range(rounds):
            began = time.perf_counter()
            tool.invoke({"query": "Mercedes Sosa"})
            times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    """Print both medians and the ratio."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    fan, first = _median_s("all", rounds), _median_s("first", rounds)
    print(f"two providers at {LATENCY_S:.1f} s each, {rounds} rounds (median)")
    print(f"fan-out (all):     {fan:.3f} s")
    print(f"failover (first):  {first:.3f} s")
    print(f"ratio fan-out / failover: {fan / first:.2f}")


if __name__ == "__main__":
    main()
