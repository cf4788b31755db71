"""The one redaction every recorded URL, setting, parameter and error message passes.

Results, run stamps, locks, logs and the LLM cache are shared (a reading group merges caches, a book is
published), so nothing the kit records may carry a credential: a URL loses its userinfo
(``user:KEY@``) and its query string (``?api-key=KEY``), a value whose name is on :data:`DENY` is
masked, and in free text (an error message, a command line) every URL is redacted and every secret the
environment holds is masked.  A URL without credentials comes back unchanged, character for character,
so the LLM cache keys and run fingerprints built from a redacted endpoint stay those of before.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "<redacted>"
#: name parts (split at ``_``, ``-``, ``.`` and spaces, case-insensitive) that mark a value as a secret
DENY = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "authorization", "auth",
     "credential", "credentials", "cookie", "bearer"}
)
#: a secret from the environment shorter than this is not masked in free text (a flag's "1" is no secret)
MIN_SECRET = 8
#: the settings whose values are URLs: their userinfo and query are secrets, wherever they appear
URL_SETTINGS = ("TEMPORAG_LLM_BASE_URL",)

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_PAIR = re.compile(r"(?P<name>[A-Za-z][\w.-]*)(?P<sep>\"?\s*[:=]\s*\"?)(?P<value>[^\s\"',;&]+)")


def is_secret_name(name: str) -> bool:
    """True for ``api_key``, ``TEMPORAG_LLM_API_KEY``, ``api-key``, ``Authorization``, ``x-auth-token``…"""
    parts = [p for p in re.split(r"[_\-.\s]+", str(name).lower()) if p]
    return any(p in DENY for p in parts)


def redact_url(url: str) -> str:
    """``url`` without userinfo and query string (and fragment); unchanged when it has none of them."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if not parts.scheme or not (parts.username or parts.password or parts.query or parts.fragment):
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _environment_secrets() -> list[str]:
    """Secret values the environment holds: deny-listed variables and the credentials in URL settings."""
    found = [v for k, v in os.environ.items() if is_secret_name(k) and v]
    for name in URL_SETTINGS:
        value = os.environ.get(name)
        if not value:
            continue
        try:
            parts = urlsplit(value.strip())
        except ValueError:
            continue
        found += [parts.username or "", parts.password or "", parts.query, parts.fragment]
        found += [v for part in parts.query.split("&") for v in part.split("=")[1:]]
    return sorted({s for s in found if len(s) >= MIN_SECRET}, key=len, reverse=True)


def _redact_match(match: re.Match) -> str:
    """A URL found in text, redacted; punctuation that ends the sentence around it is kept."""
    url = match.group(0)
    trail = len(url) - len(url.rstrip(".,:;)]}"))
    return redact_url(url[: len(url) - trail]) + url[len(url) - trail :]


def redact_text(text: str) -> str:
    """Free text with its URLs redacted, ``name=value`` / ``"name": "value"`` pairs of deny-listed names
    masked, and every secret of the environment (see :func:`_environment_secrets`) replaced by the mask."""
    text = _URL.sub(_redact_match, str(text))
    text = _PAIR.sub(
        lambda m: m.group("name") + m.group("sep") + MASK if is_secret_name(m.group("name")) else m.group(0),
        text,
    )
    for secret in _environment_secrets():
        text = text.replace(secret, MASK)
    return text


def redact(value: Any, name: str = "") -> Any:
    """A setting, a parameter or a nested dict/list of them, safe to record: a non-empty value under a
    deny-listed name is masked, a string is redacted as free text; numbers, flags and None are kept."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v, name) for v in value)
    if name and is_secret_name(name) and value not in (None, "", False, True):
        return MASK
    if isinstance(value, str):
        return redact_text(value)
    return value
