"""A local stand-in for Hugging Face's OpenID provider, for a real gradio/authlib sign-in on 127.0.0.1.

Shapes follow the real provider: the discovery document of https://huggingface.co/.well-known/openid-configuration
(issuer, authorization/token/userinfo endpoints, jwks_uri, RS256 id tokens, `code` flow, client_secret_basic/post),
and the userinfo claims documented in huggingface.js `UserInfo` (packages/hub/src/lib/oauth-handle-redirect.ts:
sub, name, preferred_username, picture, profile, isPro, and `orgs` with sub/name/preferred_username/roleInOrg).
The id token carries those claims (authlib reads the login from it) and the nonce of the authorize request.

    with OpenIdStandIn(user={"preferred_username": "the-owner"}) as idp:
        env = {"OPENID_PROVIDER_URL": idp.url, "OAUTH_CLIENT_ID": idp.client_id, ...}
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.jwk import RSAKey


class OpenIdStandIn:
    """Authorize (auto-approves the configured user), token, userinfo and JWKS endpoints on a free port."""

    def __init__(self, user: dict[str, Any], client_id: str = "client-id",
                 client_secret: str = "client-secret") -> None:
        self.client_id, self.client_secret = client_id, client_secret
        self.user = {"sub": "6500000000000000000000aa", "name": user.get("preferred_username", "someone"),
                     "picture": "https://cdn-avatars.huggingface.co/v1/production/uploads/x.png",
                     "profile": f"https://huggingface.co/{user.get('preferred_username', 'someone')}",
                     "isPro": False, "orgs": [], **user}
        self.key = RSAKey.generate_key(2048, parameters={"kid": "standin-1", "use": "sig", "alg": "RS256"})
        self._codes: dict[str, dict[str, str]] = {}
        self.tokens: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def discovery(self) -> dict[str, Any]:
        """The discovery document, as huggingface.co serves it (URLs pointed here)."""
        return {"issuer": self.url, "authorization_endpoint": f"{self.url}/oauth/authorize",
                "token_endpoint": f"{self.url}/oauth/token", "userinfo_endpoint": f"{self.url}/oauth/userinfo",
                "jwks_uri": f"{self.url}/.well-known/jwks.json", "end_session_endpoint": f"{self.url}/oauth/logout",
                "response_types_supported": ["code"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"], "code_challenge_methods_supported": ["S256"],
                "scopes_supported": ["openid", "profile", "email", "read-repos", "write-repos", "inference-api"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]}

    def _token(self, code: str) -> dict[str, Any] | None:
        grant = self._codes.pop(code, None)
        if grant is None:
            return None
        now = int(time.time())
        claims = {**self.user, "iss": self.url, "aud": self.client_id, "iat": now, "exp": now + 3600,
                  "auth_time": now, "nonce": grant.get("nonce", "")}
        id_token = jwt.encode({"alg": "RS256", "kid": "standin-1"}, claims, self.key)
        access = "hf_oauth_" + secrets.token_hex(16)
        self.tokens.append(access)
        return {"access_token": access, "token_type": "bearer", "expires_in": 28800, "id_token": id_token,
                "scope": grant.get("scope", "openid profile")}

    def _client_ok(self, authorization: str, form: dict[str, str]) -> bool:
        """client_secret_basic (authlib's default) or client_secret_post, as the provider accepts."""
        if authorization.startswith("Basic "):
            pair = base64.b64decode(authorization[6:]).decode()
            client, _, secret = pair.partition(":")
            return urllib.parse.unquote(client) == self.client_id and urllib.parse.unquote(secret) == self.client_secret
        return form.get("client_id") == self.client_id and form.get("client_secret") == self.client_secret

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                if url.path == "/.well-known/openid-configuration":
                    return self._json(200, owner.discovery())
                if url.path == "/.well-known/jwks.json":
                    return self._json(200, {"keys": [owner.key.as_dict(private=False)]})
                if url.path == "/oauth/userinfo":
                    return self._json(200, owner.user)
                if url.path == "/oauth/authorize":
                    if query.get("client_id") != owner.client_id or query.get("response_type") != "code":
                        return self._json(400, {"error": "invalid_request"})
                    code = secrets.token_urlsafe(12)
                    owner._codes[code] = {"nonce": query.get("nonce", ""), "scope": query.get("scope", "")}
                    back = query["redirect_uri"]
                    sep = "&" if "?" in back else "?"
                    self.send_response(302)
                    answer = urllib.parse.urlencode({"code": code, "state": query.get("state", "")})
                    self.send_header("Location", f"{back}{sep}{answer}")
                    self.end_headers()
                    return None
                return self._json(404, {"error": "Not Found"})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                if urllib.parse.urlsplit(self.path).path != "/oauth/token":
                    return self._json(404, {"error": "Not Found"})
                if not owner._client_ok(self.headers.get("Authorization", ""), form):
                    return self._json(401, {"error": "invalid_client"})
                token = owner._token(form.get("code", "")) if form.get("grant_type") == "authorization_code" else None
                if token is None:
                    return self._json(400, {"error": "invalid_grant", "error_description": "Invalid code"})
                return self._json(200, token)

        return Handler

    def __enter__(self) -> OpenIdStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
