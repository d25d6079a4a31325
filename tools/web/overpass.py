"""OpenStreetMap features around a point with the Overpass API, nearest first.

The query asks for nodes, ways and relations (`nwr`) with the tag within the radius and `out center`,
so ways and relations carry a `center` (they have no `lat`/`lon` of their own) and are measured to it.
Overpass lists elements by type and id, not by distance, so they are re-sorted here; a `remark`
(a runtime error such as a query timeout, with partial `elements`) is passed on.

A plain word maps to a tag (`WORD_TAGS`, documented in the README); `key=value` is used as given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tools.core.errors import ToolFailure
from tools.web.geocoding import distance_m

WORD_TAGS: dict[str, str] = {
    "station": "railway=station", "train station": "railway=station", "railway station": "railway=station",
    "subway station": "station=subway", "metro station": "station=subway", "tram stop": "railway=tram_stop",
    "bus stop": "highway=bus_stop", "bus station": "amenity=bus_station", "airport": "aeroway=aerodrome",
    "ferry terminal": "amenity=ferry_terminal", "parking": "amenity=parking", "fuel": "amenity=fuel",
    "gas station": "amenity=fuel", "library": "amenity=library", "school": "amenity=school",
    "university": "amenity=university", "hospital": "amenity=hospital", "pharmacy": "amenity=pharmacy",
    "police": "amenity=police", "fire station": "amenity=fire_station", "post office": "amenity=post_office",
    "bank": "amenity=bank", "atm": "amenity=atm", "restaurant": "amenity=restaurant", "cafe": "amenity=cafe",
    "bar": "amenity=bar", "pub": "amenity=pub", "cinema": "amenity=cinema", "theatre": "amenity=theatre",
    "church": "amenity=place_of_worship", "place of worship": "amenity=place_of_worship",
    "museum": "tourism=museum", "hotel": "tourism=hotel", "zoo": "tourism=zoo", "park": "leisure=park",
    "stadium": "leisure=stadium", "playground": "leisure=playground", "supermarket": "shop=supermarket",
    "bakery": "shop=bakery", "lighthouse": "man_made=lighthouse", "peak": "natural=peak",
}
"""Plain words -> the OpenStreetMap tag `nearby` looks for (plural forms are accepted too)."""
MAX_SHOWN = 10
_TAG = re.compile(r"^([A-Za-z0-9_:]+)=([^\"\\\]]+)$")


@dataclass(frozen=True)
class Feature:
    """One OpenStreetMap element near the place."""

    name: str
    osm: str
    """'node/123', 'way/456', 'relation/789'."""
    lat: float
    lon: float
    distance_m: float


def tag_for(kind: str) -> tuple[str, str]:
    """('key', 'value') for 'railway=station' or a plain word from WORD_TAGS; ToolFailure otherwise."""
    text = " ".join((kind or "").strip().split())
    found = _TAG.match(text)
    if found:
        return found.group(1), found.group(2)
    word = text.lower()
    singulars = (word, word[:-3] + "y" if word.endswith("ies") else word, word[:-2], word[:-1])
    tag = next((WORD_TAGS[w] for w in singulars if w in WORD_TAGS), None)
    if tag is None:
        known = ", ".join(sorted(WORD_TAGS)[:20])
        raise ToolFailure(f"{kind!r} is not a kind nearby knows. Pass an OpenStreetMap tag such as railway=station "
                          f"or amenity=library, or one of: {known}, ….", "bad_arguments")
    key, value = tag.split("=", 1)
    return key, value


def query(key: str, value: str, lat: float, lon: float, radius_m: int, timeout_s: float) -> str:
    """The Overpass QL query: nodes, ways and relations with the tag around the point, with centres."""
    return (f"[out:json][timeout:{max(1, int(timeout_s))}];\n"
            f"nwr[\"{key}\"=\"{value}\"](around:{radius_m},{lat:.7f},{lon:.7f});\n"
            "out center tags;")


def parse_elements(body: dict[str, Any], lat: float, lon: float) -> list[Feature]:
    """Every element with a position (its own, or its `center`), nearest first."""
    features = []
    for element in body.get("elements") or []:
        point = element if "lat" in element else element.get("center") or {}
        if "lat" not in point or "lon" not in point:
            continue
        tags = element.get("tags") or {}
        name = tags.get("name") or tags.get("name:en") or tags.get("ref") or "(unnamed)"
        features.append(Feature(name, f"{element.get('type')}/{element.get('id')}", float(point["lat"]),
                                float(point["lon"]), distance_m(lat, lon, float(point["lat"]), float(point["lon"]))))
    return sorted(features, key=lambda f: f.distance_m)
