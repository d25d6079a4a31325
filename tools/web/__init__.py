"""The web tools: search, pages read in pages with find, Wikipedia through time, Wayback snapshots, arXiv papers.

Also scholarly databases (OpenAlex, Crossref, Unpaywall, ORCID) and maps (Nominatim, OSRM, Overpass).

Every download of a model-chosen URL goes through tools.web.download (size cap, BLOCKED_DOMAINS, every hop's
address checked by tools.web.netguard); the APIs the operator configured (search providers,
WIKIPEDIA_API_URL, WAYBACK_API_URL, ARXIV_API_URL) are trusted as configured. Timeouts derive from
TOOL_TIMEOUT, so every tool finishes (and says why) before the executor gives up on it.
"""

from langchain_core.tools import BaseTool

from config import Settings
from tools.web.arxiv import make_arxiv_tools
from tools.web.fetch import make_fetch_tools
from tools.web.maps import make_map_tools
from tools.web.scholarly import make_orcid_tools, make_scholarly_tools
from tools.web.search import make_search_tools
from tools.web.wayback import make_wayback_tools
from tools.web.wikipedia import make_wikipedia_tools


def make_web_tools(settings: Settings) -> list[BaseTool]:
    """web_search, fetch_webpage and find_in_page: the base tier's web tools."""
    return make_search_tools(settings) + make_fetch_tools(settings)


__all__ = ["make_arxiv_tools", "make_fetch_tools", "make_map_tools", "make_orcid_tools", "make_scholarly_tools",
           "make_search_tools", "make_wayback_tools", "make_web_tools", "make_wikipedia_tools"]
