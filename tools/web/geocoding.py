"""Places to coordinates with Nominatim, under its usage policy: one request per second from the whole app.

Nominatim's policy (operations.osmfoundation.org/policies/nominatim) asks for at most one request per
second, an identifying User-Agent and cached results; one limiter (`application.Application.nominatim_limit`)
is shared by every tool and thread of the application, and answers are cached per registry. `format=jsonv2`
answers a list whose `lat`/`lon` are strings and whose class is called `category`.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from tools.core.errors import ToolFailure
from tools.web.service import MinInterval, Service

NOMINATIM_INTERVAL_S = 1.0
"""The policy's spacing between two requests."""
MAX_MATCHES = 5
_CACHE_SIZE = 256


@dataclass(frozen=True)
class Place:
    """One geocoding match."""

    name: str
    """Nominatim's display name (the full address)."""
    kind: str
    """'category/type', e.g. 'railway/station' or 'boundary/administrative'."""
    lat: float
    lon: float


def distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres (haversine, mean Earth radius)."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlmb = phi2 - phi1, math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(a))


def parse_places(body: Any) -> list[Place]:
    """Places from a `format=jsonv2` answer (a list; `lat`/`lon` as strings)."""
    places = []
    for hit in body if isinstance(body, list) else []:
        try:
            lat, lon = float(hit["lat"]), float(hit["lon"])
        except (KeyError, TypeError, ValueError):
            continue
        kind = "/".join(p for p in (hit.get("category") or hit.get("class"), hit.get("type")) if p)
        places.append(Place(hit.get("display_name") or hit.get("name") or "", kind, lat, lon))
    return places


class Geocoder:
    """`/search?format=jsonv2` on Nominatim, rate limited and cached for the process."""

    _cache: OrderedDict[tuple[str, str], list[Place]] = OrderedDict()
    _cache_lock = threading.Lock()

    def __init__(self, service: Service) -> None:
        self.service = service

    def search(self, place: str, limit: int = MAX_MATCHES) -> list[Place]:
        """Up to `limit` matches for `place`, best first; ToolFailure when there is none."""
        query = " ".join((place or "").split())
        if not query:
            raise ToolFailure("the place is empty. Pass a name or address, e.g. \"Gare du Nord, Paris\".",
                              "bad_arguments")
        key = (self.service.base_url, query.lower())
        with self._cache_lock:
            cached = self._cache.get(key)
        if cached is None:
            body = self.service.get_json("search", {"q": query, "format": "jsonv2", "limit": MAX_MATCHES})
            cached = parse_places(body)
            with self._cache_lock:
                self._cache[key] = cached
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        if not cached:
            raise ToolFailure(f"Nominatim found no place called {query!r}. Add the city or country (\"Main Street, "
                              "Springfield, Illinois\"), or use the place's official name.", "no_results")
        return cached[:limit]

    def first(self, place: str) -> Place:
        """The best match for `place`."""
        return self.search(place, 1)[0]


def nominatim_service(base_url: str, timeout_s: float, user_agent: str, throttle: MinInterval) -> Service:
    """The Nominatim service, every request waiting on `throttle` (the application's limiter)."""
    return Service("Nominatim", base_url, timeout_s, user_agent, fallback="web_search for the place's coordinates",
                   throttle=throttle)
