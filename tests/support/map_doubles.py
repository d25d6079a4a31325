"""Loopback doubles of Nominatim, OSRM and Overpass in the real services' shapes and quirks.

Shapes from the services' documentation: Nominatim `/search?format=jsonv2` (nominatim.org/release-docs
"Search queries" and "Place Output Formats": a list, `lat`/`lon` as strings, `category` not `class`);
OSRM's HTTP API (project-osrm.org/docs/v5.24.0/api: coordinates `lon,lat`, `code: "Ok"`, routes with
`distance` in metres and `duration` in seconds, `NoRoute` with HTTP 400) — the public demo
router.project-osrm.org serves the car profile whatever profile the URL names; Overpass JSON as recorded in
DinoTools/python-overpy `tests/json/*.json` (`version`, `generator`, `osm3s`, `elements` with `tags`;
ways and relations carry `center` only under `out center`; a runtime error is a `remark`), listed by
type and id rather than by distance.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.support.web_server import Reply, Request

LICENCE = "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright"


@dataclass(frozen=True)
class NominatimPlace:
    """A place the Nominatim double knows, under the words that find it."""

    words: tuple[str, ...]
    name: str
    display_name: str
    category: str
    type: str
    lat: float
    lon: float


@dataclass
class NominatimDouble:
    """`/search`: jsonv2 hits whose words all occur in the query; the time of every request is kept."""

    places: list[NominatimPlace]
    times: list[float] = field(default_factory=list)

    def __call__(self, request: Request) -> Reply:
        self.times.append(time.monotonic())
        if request.query.get("format", ["xml"])[0] != "jsonv2":
            return Reply(200, "<?xml version='1.0'?><searchresults/>", "text/xml; charset=utf-8")
        q = request.query.get("q", [""])[0].lower()
        limit = int(request.query.get("limit", ["10"])[0])
        hits = [p for p in self.places if all(w in q for w in p.words)][:limit]
        return Reply.json([{"place_id": 100000 + i, "licence": LICENCE, "osm_type": "node", "osm_id": 2000 + i,
                            "lat": f"{p.lat:.7f}", "lon": f"{p.lon:.7f}", "category": p.category, "type": p.type,
                            "place_rank": 30, "importance": 0.5 - i / 100, "addresstype": p.type, "name": p.name,
                            "display_name": p.display_name,
                            "boundingbox": [f"{p.lat - 0.001:.7f}", f"{p.lat + 0.001:.7f}", f"{p.lon - 0.001:.7f}",
                                            f"{p.lon + 0.001:.7f}"]} for i, p in enumerate(hits)])


@dataclass
class OsrmDemoDouble:
    """`/route/v1/{profile}/{lon},{lat};{lon},{lat}`: a car route whatever the profile (the public demo's quirk).

    `routes` maps ((lat, lon), (lat, lon)) rounded to 3 places -> (distance m, duration s). Coordinates
    given as lat,lon land elsewhere and find no route, as on the real server.
    """

    routes: dict[tuple[tuple[float, float], tuple[float, float]], tuple[float, float]]
    profiles: list[str] = field(default_factory=list)

    def __call__(self, request: Request) -> Reply:
        found = re.match(r"^/route/v1/([^/]+)/([-\d.]+),([-\d.]+);([-\d.]+),([-\d.]+)$", request.path)
        if not found:
            return Reply(400, '{"code":"InvalidUrl","message":"URL string malformed close to position 1"}',
                         "application/json")
        self.profiles.append(found.group(1))
        lon1, lat1, lon2, lat2 = (float(found.group(i)) for i in range(2, 6))
        if abs(lat1) > 90 or abs(lat2) > 90:
            return Reply(400, '{"code":"InvalidValue","message":"Invalid coordinate value."}', "application/json")
        key = ((round(lat1, 3), round(lon1, 3)), (round(lat2, 3), round(lon2, 3)))
        if key not in self.routes:
            return Reply(400, '{"code":"NoRoute","message":"Impossible route between points"}', "application/json")
        distance, duration = self.routes[key]
        leg = {"steps": [], "summary": "", "weight": duration, "duration": duration, "distance": distance}
        return Reply.json({"code": "Ok", "routes": [{"legs": [leg], "weight_name": "routability", "weight": duration,
                                                     "duration": duration, "distance": distance}],
                           "waypoints": [{"hint": "abc", "distance": 3.1, "name": "Street", "location": [lon1, lat1]},
                                         {"hint": "def", "distance": 2.4, "name": "Square", "location": [lon2, lat2]}]})


@dataclass
class OverpassDouble:
    """POST `data=<Overpass QL>`: elements with the tag within the radius, nodes then ways then relations by id."""

    elements: list[dict[str, Any]]
    """Each with `type`, `id`, `tags`, and `lat`/`lon` (nodes) or `_center` (ways, relations)."""
    distance: Callable[[float, float, float, float], float]
    queries: list[str] = field(default_factory=list)
    remark: str | None = None

    def __call__(self, request: Request) -> Reply:
        text = parse_qs(request.body.decode())["data"][0]
        self.queries.append(text)
        tag = re.search(r'nwr\["([^"]+)"="([^"]+)"\]\(around:(\d+),([-\d.]+),([-\d.]+)\)', text)
        if tag is None:
            return Reply(400, "<html><body><p><strong style=\"color:#FF0000\">Error</strong>: line 2: parse error"
                              "</p></body></html>", "text/html; charset=utf-8")
        key, value, radius, lat, lon = tag.group(1), tag.group(2), float(tag.group(3)), float(tag.group(4)), \
            float(tag.group(5))
        centre = "out center" in text
        out = []
        for element in sorted(self.elements, key=lambda e: (("node", "way", "relation").index(e["type"]), e["id"])):
            point = element.get("_center") or (element["lat"], element["lon"])
            if element["tags"].get(key) != value or self.distance(lat, lon, *point) > radius:
                continue
            shown = {k: v for k, v in element.items() if k != "_center"}
            if element["type"] != "node" and centre:
                shown["center"] = {"lat": point[0], "lon": point[1]}
            out.append(shown)
        body: dict[str, Any] = {"version": 0.6, "generator": "Overpass API 0.7.61.5 4133829e",
                                "osm3s": {"timestamp_osm_base": "2024-05-01T10:00:00Z", "copyright":
                                          "The data included in this document is from www.openstreetmap.org. "
                                          "The data is made available under ODbL."}, "elements": out}
        if self.remark:
            body["remark"] = self.remark
        return Reply.json(body)


class AnyPath(dict):
    """LocalWebServer routes where every path goes to one handler (OSRM puts the coordinates in the path)."""

    def __init__(self, handler: Callable[[Request], Reply]) -> None:
        super().__init__()
        self.handler = handler

    def get(self, path: str, default: Any = None) -> Any:
        return self.handler


# Berlin, as Nominatim and OpenStreetMap know it (coordinates of the real places).
GATE = NominatimPlace(("brandenburg",), "Brandenburger Tor",
                      "Brandenburger Tor, Pariser Platz, Mitte, Berlin, 10117, Deutschland", "tourism", "attraction",
                      52.5162746, 13.3777041)
ALEX = NominatimPlace(("alexanderplatz",), "Alexanderplatz", "Alexanderplatz, Mitte, Berlin, 10178, Deutschland",
                      "highway", "pedestrian", 52.5219814, 13.4132051)
ALEX_BUS = NominatimPlace(("alexanderplatz",), "S+U Alexanderplatz Bhf", "S+U Alexanderplatz Bhf/Dircksenstraße, "
                          "Mitte, Berlin, Deutschland", "highway", "bus_stop", 52.5225, 13.4118)
STATIONS = [
    {"type": "node", "id": 1001, "lat": 52.5140, "lon": 13.4370, "tags": {"railway": "station",
                                                                          "name": "Ostbahnhof"}},
    {"type": "way", "id": 2002, "_center": (52.5150, 13.4180), "nodes": [1, 2, 3],
     "tags": {"railway": "station", "name": "Jannowitzbrücke"}},
    {"type": "relation", "id": 3003, "_center": (52.5216, 13.4110),
     "members": [{"type": "way", "ref": 9, "role": "outer"}], "tags": {"railway": "station",
                                                                       "name": "Berlin Alexanderplatz"}},
    {"type": "node", "id": 1004, "lat": 52.5230, "lon": 13.4140, "tags": {"amenity": "library",
                                                                          "name": "Stadtbibliothek"}},
    {"type": "node", "id": 1005, "lat": 52.6000, "lon": 13.5000, "tags": {"railway": "station", "name": "Far away"}},
]
