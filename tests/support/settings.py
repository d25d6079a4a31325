"""Settings a developer's shell may carry that tests must not inherit (besides every secret field)."""

ENDPOINT_SETTINGS = ("OPENAI_BASE_URL", "SEARXNG_URL", "SPACE_ID", "SPACE_AUTHOR_NAME", "APP_ALLOWED_USERS",
                     "FETCH_ALLOWED_HOSTS", "SANDBOX_MODE", "VISION_BASE_URL")
