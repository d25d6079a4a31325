"""geocode, route and nearby against loopback doubles of Nominatim, the OSRM demo and Overpass."""

from __future__ import annotations

import pytest

from config import load_settings
from tests.support.map_doubles import (
    ALEX,
    ALEX_BUS,
    GATE,
    STATIONS,
    AnyPath,
    NominatimDouble,
    OsrmDemoDouble,
    OverpassDouble,
)
from tests.support.web_server import LocalWebServer
from tools.core.errors import ToolFailure
from tools.core.registry import build_registry
from tools.web import make_map_tools
from tools.web.geocoding import distance_m
from tools.web.overpass import tag_for
from tools.web.service import MinInterval


@pytest.fixture(scope="module")
def maps():
    nominatim = NominatimDouble([GATE, ALEX, ALEX_BUS])
    osrm = OsrmDemoDouble({((52.516, 13.378), (52.522, 13.413)): (3284.6, 471.2)})
    overpass = OverpassDouble(STATIONS, distance_m)
    with LocalWebServer({"/search": nominatim}) as n_server, LocalWebServer({}) as o_server, \
            LocalWebServer({"/api/interpreter": overpass}) as p_server:
        o_server.routes = AnyPath(osrm)
        settings = load_settings(NOMINATIM_URL=n_server.base, OSRM_URL=o_server.base,
                                 OVERPASS_URL=p_server.url("/api/interpreter"), HTTP_USER_AGENT="maps-test/1.0 (x@y)")
        tools = {t.name: t for t in make_map_tools(settings)}
        yield tools, nominatim, osrm, overpass, n_server


def test_geocode_lists_matches_with_type_and_coordinates(maps):
    tools, nominatim, *_ = maps
    out = tools["geocode"].invoke({"place": "Alexanderplatz, Berlin"})
    assert out.splitlines()[0] == "2 matches for 'Alexanderplatz, Berlin':"
    assert "1. Alexanderplatz, Mitte, Berlin, 10178, Deutschland — highway/pedestrian — lat 52.521981, lon 13.413205" \
        in out and "2. S+U Alexanderplatz Bhf" in out


def test_route_sends_lon_lat_and_says_the_demo_answers_by_car(maps):
    tools, _, osrm, *_ = maps
    out = tools["route"].invoke({"origin": "Brandenburg Gate", "destination": "Alexanderplatz", "mode": "walking"})
    assert out.startswith("Route (driving): 3.3 km (2.0 miles), about 8 min")
    assert "From: Brandenburger Tor, Pariser Platz" in out and "To: Alexanderplatz, Mitte" in out
    assert "mode 'walking' could not be honoured" in out and osrm.profiles[-1] == "walking"
    assert "Straight-line distance: 2.5 km" in out


def test_route_failure_says_what_to_try(maps):
    tools, *_ = maps
    with pytest.raises(ToolFailure, match="OSRM found no route .*NoRoute"):
        tools["route"].func(origin="Alexanderplatz", destination="Brandenburg Gate")
    with pytest.raises(ToolFailure, match="driving, walking or cycling"):
        tools["route"].func(origin="a", destination="b", mode="teleport")
    with pytest.raises(ToolFailure, match="no place called 'Atlantis'"):
        tools["geocode"].func(place="Atlantis")


def test_nearby_counts_nodes_ways_and_relations_nearest_first(maps):
    tools, _, _, overpass, _ = maps
    out = tools["nearby"].invoke({"place": "Alexanderplatz", "kind": "stations", "radius_m": 3000})
    lines = out.splitlines()
    assert "railway=station within 3000 m: 3 found, nearest first" in lines[0]
    assert lines[1].startswith("1. Berlin Alexanderplatz — 155 m") and "(relation/3003)" in lines[1]
    assert lines[2].startswith("2. Jannowitzbrücke") and "(way/2002)" in lines[2]
    assert lines[3].startswith("3. Ostbahnhof") and "Far away" not in out
    assert "out center" in overpass.queries[-1] and 'nwr["railway"="station"](around:3000,' in overpass.queries[-1]


def test_nearby_passes_an_overpass_remark_on(maps):
    tools, _, _, overpass, _ = maps
    overpass.remark = 'runtime error: Query timed out in "query" at line 2 after 26 seconds.'
    try:
        out = tools["nearby"].invoke({"place": "Alexanderplatz", "kind": "amenity=library"})
    finally:
        overpass.remark = None
    assert "1. Stadtbibliothek" in out and "Overpass remarked: runtime error: Query timed out" in out


def test_plain_words_map_to_tags():
    assert tag_for("Libraries") == ("amenity", "library") and tag_for("bus stop") == ("highway", "bus_stop")
    assert tag_for("shop=books") == ("shop", "books")
    with pytest.raises(ToolFailure, match="railway=station"):
        tag_for("unicorn stable")


def test_nominatim_requests_are_a_second_apart_and_cached(maps):
    tools, nominatim, _, _, server = maps
    before = len(nominatim.times)
    tools["geocode"].invoke({"place": "Brandenburg Gate, Berlin"})
    tools["geocode"].invoke({"place": "alexanderplatz berlin"})
    tools["geocode"].invoke({"place": "Brandenburg Gate, Berlin"})  # cached: no third request
    times = nominatim.times[before:]
    assert len(times) == 2 and times[1] - times[0] >= 0.95
    assert server.requests[-1].headers["User-Agent"] == "maps-test/1.0 (x@y)"


def test_min_interval_spaces_calls_across_callers():
    now, slept = [100.0], []
    limit = MinInterval(1.0, clock=lambda: now[0], sleep=lambda s: slept.append(round(s, 3)))
    limit()
    limit()
    now[0] += 0.25
    limit()
    assert slept == [1.0, 1.75]


def test_an_empty_nominatim_url_removes_the_map_tools():
    registry = build_registry(load_settings(NOMINATIM_URL=""))
    assert not {"geocode", "route", "nearby"} & set(registry.names)
    assert "NOMINATIM_URL is empty" in registry.missing["route"]
