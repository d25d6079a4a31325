"""Recorded YouTube responses served at the HTTP layer of yt-dlp and youtube-transcript-api.

Neither library lets its YouTube endpoints be redirected by a setting, so tests replace the one
place each sends requests through: `YoutubeDL.urlopen` (every extractor and downloader request of
yt-dlp) and the `requests.Session` youtube-transcript-api is given (`tools.media.video.youtube.new_session`).
The responses have the shape YouTube's have: the watch page (ytcfg with INNERTUBE_API_KEY and
ytInitialPlayerResponse), the innertube `player` JSON (videoDetails, streamingData, captions),
the timedtext XML of a caption track, and the media bytes of a progressive format on the CDN.

    yt = RecordedYouTube(video_bytes=make_video(tmp_path / "v.mp4").read_bytes())
    yt.install(monkeypatch)
    watch_video("https://youtu.be/" + yt.video_id)
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from html import escape
from typing import Any

VIDEO_ID = "Xa7ZpQ3mT9k"
CDN = "https://rr3---sn-test.googlevideo.com/videoplayback"


@dataclass
class RecordedYouTube:
    """One video: its details, its caption lines (None: no captions) and its file's bytes (None: no formats)."""

    video_id: str = VIDEO_ID
    title: str = "Moons of Jupiter in five seconds"
    seconds: int = 5
    channel: str = "Sky Notes"
    captions: list[tuple[float, float, str]] | None = field(default_factory=lambda: [
        (0.0, 2.4, "Galileo saw four moons"), (2.4, 2.6, "circling Jupiter in 1610")])
    video_bytes: bytes | None = None
    unavailable: bool = False
    """True: YouTube says "Video unavailable" (removed or private)."""
    bot_check: bool = False
    """True: YouTube refuses this host ("Sign in to confirm you’re not a bot", LOGIN_REQUIRED), as it does to
    cloud addresses; youtube-transcript-api raises RequestBlocked on exactly this playability status."""
    user_agents: list[str] = field(default_factory=list)
    """The User-Agent of every request the transcript session sent."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(method, URL) of every request either library sent."""

    # -- recorded bodies -------------------------------------------------------------------------
    def player(self) -> dict[str, Any]:
        """The innertube player response."""
        if self.unavailable:
            return {"playabilityStatus": {"status": "ERROR", "reason": "Video unavailable"}}
        if self.bot_check:
            return {"playabilityStatus": {"status": "LOGIN_REQUIRED", "reason": "Sign in to confirm you’re not a bot",
                                          "errorScreen": {"playerErrorMessageRenderer": {"subreason": {"runs": [
                                              {"text": "This helps protect our community. Learn more"}]}}}}}
        data: dict[str, Any] = {
            "playabilityStatus": {"status": "OK", "playableInEmbed": True},
            "videoDetails": {"videoId": self.video_id, "title": self.title, "lengthSeconds": str(self.seconds),
                             "author": self.channel, "channelId": "UCskynotes000000000000", "viewCount": "1234",
                             "shortDescription": "Four moons, one telescope.", "isLiveContent": False},
            "microformat": {"playerMicroformatRenderer": {"uploadDate": "2024-03-05", "publishDate": "2024-03-05",
                                                          "ownerChannelName": self.channel}},
        }
        if self.video_bytes is not None:
            data["streamingData"] = {"expiresInSeconds": "21540", "formats": [{
                "itag": 18, "url": f"{CDN}?id={self.video_id}&itag=18",
                "mimeType": 'video/mp4; codecs="avc1.42001E, mp4a.40.2"',
                "width": 640, "height": 360, "bitrate": 200000, "contentLength": str(len(self.video_bytes)),
                "quality": "medium", "qualityLabel": "360p", "fps": 10, "audioQuality": "AUDIO_QUALITY_LOW",
                "approxDurationMs": str(self.seconds * 1000), "audioSampleRate": "44100", "audioChannels": 1}]}
        if self.captions is not None:
            data["captions"] = {"playerCaptionsTracklistRenderer": {"captionTracks": [{
                "baseUrl": f"https://www.youtube.com/api/timedtext?v={self.video_id}&lang=en&fmt=srv3",
                "name": {"runs": [{"text": "English"}]}, "vssId": ".en", "languageCode": "en",
                "isTranslatable": False}], "translationLanguages": []}}
        return data

    def watch_page(self) -> str:
        """The watch page's HTML, with the config both libraries read."""
        config = {"INNERTUBE_API_KEY": "AIzaRecordedKey0000000000000000000000",
                  "INNERTUBE_CLIENT_VERSION": "2.20260101.00.00",
                  "INNERTUBE_CONTEXT": {"client": {"clientName": "WEB", "clientVersion": "2.20260101.00.00"}}}
        return ("<!DOCTYPE html><html><head><title>" + escape(self.title) + " - YouTube</title></head><body>"
                f"<script>ytcfg.set({json.dumps(config)});</script>"
                f"<script>var ytInitialPlayerResponse = {json.dumps(self.player())};</script>"
                "</body></html>")

    def timedtext(self) -> str:
        """The caption track as YouTube's timedtext XML."""
        lines = "".join(f'<text start="{start}" dur="{dur}">{escape(text)}</text>'
                        for start, dur, text in self.captions or [])
        return f'<?xml version="1.0" encoding="utf-8" ?><transcript>{lines}</transcript>'

    def answer(self, method: str, url: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a request."""
        self.requests.append((method, url))
        if "/watch?" in url:
            return 200, "text/html; charset=utf-8", self.watch_page().encode()
        if "/youtubei/v1/player" in url:
            return 200, "application/json", json.dumps(self.player()).encode()
        if "/youtubei/v1/next" in url:
            return 200, "application/json", b'{"contents": {}}'
        if "/api/timedtext" in url and self.captions is not None:
            return 200, "text/xml; charset=utf-8", self.timedtext().encode()
        if url.startswith(CDN) and self.video_bytes is not None:
            return 200, "video/mp4", self.video_bytes
        return 404, "text/plain", b"not recorded"

    # -- the two HTTP layers ---------------------------------------------------------------------
    def install(self, monkeypatch: Any) -> None:
        """Serve both libraries from this recording for the rest of the test."""
        import requests
        import yt_dlp
        from yt_dlp.networking import Request, Response
        from yt_dlp.networking.exceptions import HTTPError

        recording = self

        def urlopen(_ydl: Any, req: Any) -> Any:
            req = Request(req) if isinstance(req, str) else req
            status, kind, body = recording.answer(req.method, req.url)
            response = Response(io.BytesIO(body), req.url, {"Content-Type": kind, "Content-Length": str(len(body))},
                                status=status)
            if status >= 400:
                raise HTTPError(response)
            return response

        class Adapter(requests.adapters.BaseAdapter):
            def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
                recording.user_agents.append(request.headers.get("User-Agent", ""))
                status, kind, body = recording.answer(request.method, request.url)
                response = requests.Response()
                response.status_code, response.url, response.request = status, request.url, request
                response.headers["Content-Type"] = kind
                response._content = body
                response.encoding = "utf-8"
                return response

            def close(self) -> None:
                pass

        def new_session(timeout: float, user_agent: str = "") -> Any:
            session = requests.Session()
            if user_agent:
                session.headers["User-Agent"] = user_agent
            session.mount("https://", Adapter())
            session.mount("http://", Adapter())
            return session

        monkeypatch.setattr(yt_dlp.YoutubeDL, "urlopen", urlopen)
        monkeypatch.setattr("tools.media.video.youtube.new_session", new_session)

    def hosts(self) -> set[str]:
        """The hosts the libraries asked for."""
        from urllib.parse import urlsplit

        return {urlsplit(url).hostname or "" for _, url in self.requests}
