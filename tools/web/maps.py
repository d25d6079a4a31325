"""geocode, route and nearby: places, road distances and the nearest features, from OpenStreetMap services.

geocode asks Nominatim (NOMINATIM_URL); route geocodes both places and asks OSRM (OSRM_URL), whose
coordinates are `lon,lat` (the reverse of Nominatim's); nearby geocodes the place and asks Overpass
(OVERPASS_URL). The public OSRM demo serves car routes only whatever profile the URL names: the reply
names the profile that answered (judged from the route's average speed too) and says when `mode`
could not be honoured.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.core.errors import MissingDependency, ToolFailure
from tools.web.geocoding import NOMINATIM_INTERVAL_S, Geocoder, Place, distance_m, nominatim_service
from tools.web.overpass import MAX_SHOWN, parse_elements, query, tag_for
from tools.web.service import MinInterval, NotFound, Service, tool_timeout

Mode = Literal["driving", "walking", "cycling"]
_MODES: dict[str, Mode] = {"driving": "driving", "drive": "driving", "car": "driving", "walking": "walking",
                           "walk": "walking", "foot": "walking", "cycling": "cycling", "bike": "cycling",
                           "bicycle": "cycling"}
DEMO_HOSTS = ("router.project-osrm.org",)
MAX_RADIUS_M = 50_000


def _hms(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def answered_profile(distance: float, duration: float) -> Mode:
    """The profile a route's average speed betrays: above 25 km/h a car, above 9 km/h a bicycle, else on foot."""
    kmh = (distance / 1000) / (duration / 3600) if duration > 0 else 0.0
    return "driving" if kmh > 25 else "cycling" if kmh > 9 else "walking"


def describe_route(body: dict[str, Any], asked: Mode, start: Place, end: Place, demo: bool) -> str:
    """The route reply: distance in km and miles, duration, the profile that answered, the geocoded endpoints."""
    best = (body.get("routes") or [{}])[0]
    distance, duration = float(best.get("distance") or 0.0), float(best.get("duration") or 0.0)
    got: Mode = "driving" if demo else answered_profile(distance, duration)
    lines = [f"Route ({got}): {distance / 1000:.1f} km ({distance / 1609.344:.1f} miles), about {_hms(duration)}",
             f"From: {start.name} ({start.lat:.5f}, {start.lon:.5f})", f"To: {end.name} ({end.lat:.5f}, {end.lon:.5f})"]
    if got != asked:
        why = "the public OSRM demo serves car routes only" if demo else \
            f"this OSRM server answered with a {got} route (judged from its average speed)"
        lines.append(f"Note: mode {asked!r} could not be honoured: {why}. The distance is by road; for a walking "
                     f"time assume about 5 km/h ({_hms(distance / 1000 / 5 * 3600)}), cycling about 15 km/h "
                     f"({_hms(distance / 1000 / 15 * 3600)}).")
    crow = distance_m(start.lat, start.lon, end.lat, end.lon)
    lines.append(f"Straight-line distance: {crow / 1000:.1f} km ({crow / 1609.344:.1f} miles)")
    return "\n".join(lines)


def make_map_tools(settings: Settings, nominatim_limit: MinInterval | None = None) -> list[BaseTool]:
    """Build geocode, route and nearby; an empty NOMINATIM_URL removes all three, OSRM_URL / OVERPASS_URL one each.

    `nominatim_limit` is the application's limiter (injected by the registry's deps); a registry built
    without one (the tools CLI, a test) spaces its own requests.
    """
    if not settings.NOMINATIM_URL:
        raise MissingDependency(["geocode", "route", "nearby"], "NOMINATIM_URL is empty; set it to "
                                                                "https://nominatim.openstreetmap.org")
    timeout_s = tool_timeout(settings)
    throttle = nominatim_limit if nominatim_limit is not None else MinInterval(NOMINATIM_INTERVAL_S)
    geocoder = Geocoder(nominatim_service(settings.NOMINATIM_URL, timeout_s, settings.HTTP_USER_AGENT, throttle))
    made = [_geocode_tool(geocoder)]
    limited: dict[str, str] = {}
    if settings.OSRM_URL:
        made.append(_route_tool(geocoder, Service("OSRM", settings.OSRM_URL, timeout_s, settings.HTTP_USER_AGENT,
                                                  fallback="web_search for the distance")))
    else:
        limited["route"] = "OSRM_URL is empty; set it to https://router.project-osrm.org"
    if settings.OVERPASS_URL:
        made.append(_nearby_tool(geocoder, Service("Overpass", settings.OVERPASS_URL, timeout_s,
                                                   settings.HTTP_USER_AGENT, fallback="web_search")))
    else:
        limited["nearby"] = "OVERPASS_URL is empty; set it to https://overpass-api.de/api/interpreter"
    made[0].metadata = {"limited": limited}
    return made


def _geocode_tool(geocoder: Geocoder) -> BaseTool:
    @tool
    def geocode(place: str) -> str:
        """Find a place's coordinates on OpenStreetMap (Nominatim): up to 5 matches, best first.

        Each match gives its full name (address), its type, latitude and longitude.

        Args:
            place: A place name or address, e.g. "Eiffel Tower" or "10 Downing Street, London".
        """
        places = geocoder.search(place)
        lines = [f"{len(places)} match{'es' if len(places) != 1 else ''} for {place.strip()!r}:"]
        lines += [f"{i}. {p.name} — {p.kind or 'place'} — lat {p.lat:.6f}, lon {p.lon:.6f}"
                  for i, p in enumerate(places, start=1)]
        return "\n".join(lines)

    return geocode


def _route_tool(geocoder: Geocoder, osrm: Service) -> BaseTool:
    demo = (urlsplit(osrm.base_url).hostname or "") in DEMO_HOSTS

    @tool
    def route(origin: str, destination: str, mode: str = "driving") -> str:
        """Road route between two places (OSRM): distance in km and miles, duration, and the places as geocoded.

        Places are geocoded first (check the "From"/"To" lines name the places you meant).

        Args:
            origin: Where the route starts, e.g. "Brandenburg Gate, Berlin".
            destination: Where it ends, e.g. "Alexanderplatz, Berlin".
            mode: driving, walking or cycling (the public OSRM server answers car routes only; the reply says so).
        """
        asked = _MODES.get((mode or "driving").strip().lower())
        if asked is None:
            raise ToolFailure(f"mode must be driving, walking or cycling, not {mode!r}.", "bad_arguments")
        start, end = geocoder.first(origin), geocoder.first(destination)
        path = f"route/v1/{asked}/{start.lon:.6f},{start.lat:.6f};{end.lon:.6f},{end.lat:.6f}"
        try:
            body = osrm.get_json(path, {"overview": "false"}, accept=(400,))
        except NotFound:
            raise osrm.failure("has no route service at this address (HTTP 404)", "http_error") from None
        if body.get("code") != "Ok":
            raise ToolFailure(f"OSRM found no route ({body.get('code')}: {body.get('message', '')}). Check that "
                              "both places are on the same landmass, or give nearer addresses.", "no_results")
        return describe_route(body, asked, start, end, demo)

    return route


def _nearby_tool(geocoder: Geocoder, overpass: Service) -> BaseTool:
    @tool
    def nearby(place: str, kind: str, radius_m: int = 2000) -> str:
        """The nearest OpenStreetMap features of a kind around a place (Overpass), nearest first.

        Each gives its name, distance from the place (straight line), and lat/lon. `kind` is an
        OpenStreetMap tag (railway=station, amenity=library) or a plain word such as station, library,
        hospital, museum, bus stop, airport (the README lists the words).

        Args:
            place: The place to search around, e.g. "British Museum, London".
            kind: What to look for: a tag such as amenity=library, or a word such as station.
            radius_m: Search radius in metres (up to 50000).
        """
        key, value = tag_for(kind)
        radius = int(radius_m)
        if not 1 <= radius <= MAX_RADIUS_M:
            raise ToolFailure(f"radius_m must be between 1 and {MAX_RADIUS_M}, not {radius_m}.", "bad_arguments")
        centre = geocoder.first(place)
        try:
            body = overpass.get_json("", method="POST", data={"data": query(key, value, centre.lat, centre.lon,
                                                                             radius, overpass.timeout_s - 1)})
        except NotFound:
            raise overpass.failure("has no interpreter at this address (HTTP 404)", "http_error") from None
        features = parse_elements(body if isinstance(body, dict) else {}, centre.lat, centre.lon)
        remark = body.get("remark") if isinstance(body, dict) else None
        head = f"Around {centre.name} ({centre.lat:.5f}, {centre.lon:.5f}), {key}={value} within {radius} m:"
        if not features:
            raise ToolFailure(f"no {key}={value} within {radius} m of {centre.name}" +
                              (f" (Overpass: {remark})" if remark else "") + ". Widen radius_m or try another kind.",
                              "no_results")
        lines = [f"{head} {len(features)} found, nearest first"]
        for i, f in enumerate(features[:MAX_SHOWN], start=1):
            lines.append(f"{i}. {f.name} — {f.distance_m:,.0f} m — lat {f.lat:.6f}, lon {f.lon:.6f} ({f.osm})")
        if len(features) > MAX_SHOWN:
            lines.append(f"…and {len(features) - MAX_SHOWN} more further away")
        if remark:
            lines.append(f"Note: Overpass remarked: {remark} (the list may be incomplete)")
        return "\n".join(lines)

    return nearby
