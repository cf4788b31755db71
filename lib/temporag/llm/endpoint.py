"""Where a served endpoint's key may go, and over what.

A grid, a notebook parameter or a shared runbook can name the endpoint, so the key sent there must be
the one the user meant for it: ``TEMPORAG_LLM_API_KEY`` (the kit's own key variable) for the configured
endpoint; ``OPENAI_API_KEY`` only to OpenAI's own host, or anywhere when ``TEMPORAG_LLM_SEND_OPENAI_KEY=1``
says so.  Plain ``http://`` carries the key and the prompts in clear, so it goes only to this machine
(loopback) unless ``TEMPORAG_LLM_ALLOW_HTTP=1``.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from temporag.config import SettingError, Settings
from temporag.redact import redact_url

OPENAI_HOST = "api.openai.com"
#: what the ``openai`` client is given when no key may be sent: local servers (vLLM, llama.cpp) ignore it
NO_KEY = "EMPTY"


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_transport(url: str, allow_http: bool) -> None:
    """A one-line :class:`SettingError` for plain ``http://`` to a host other than this machine's
    loopback, unless ``allow_http`` (``TEMPORAG_LLM_ALLOW_HTTP=1``)."""
    if allow_http or not url.strip().lower().startswith("http://") or is_loopback(_host(url)):
        return
    raise SettingError(
        f"TEMPORAG_LLM_BASE_URL={redact_url(url)!r} is plain http:// to another machine, which would carry "
        "your key and prompts in clear: use https://, or set TEMPORAG_LLM_ALLOW_HTTP=1 on a network you trust"
    )


def api_key_for(settings: Settings) -> str:
    """The key sent to ``settings.llm_base_url``: ``TEMPORAG_LLM_API_KEY``, else ``OPENAI_API_KEY`` for
    OpenAI's own host (or when ``TEMPORAG_LLM_SEND_OPENAI_KEY=1``), else :data:`NO_KEY`."""
    if settings.llm_api_key:
        return settings.llm_api_key
    openai_key = os.environ.get("OPENAI_API_KEY")
    if openai_key and (settings.llm_send_openai_key or _host(settings.llm_base_url or "") == OPENAI_HOST):
        return openai_key
    return NO_KEY


def client_url(url: str) -> tuple[str, dict[str, str]]:
    """(base URL, query parameters) for the ``openai`` client: a query string in the configured URL
    (``?api-version=...``) is sent with every request rather than glued into the request path."""
    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), dict(parse_qsl(parts.query))
