"""The command line's check of every ``TEMPORAG_*`` setting before it starts anything.

It sits with the command line, above the layers whose settings it checks (the LLM endpoint's transport,
the input caps), so none of them needs to reach up to the settings object's module or back."""

from __future__ import annotations

import os

from temporag import limits
from temporag.config import Settings, _env_number
from temporag.llm.endpoint import check_transport


def check_environment() -> Settings:
    """Every ``TEMPORAG_*`` setting read and checked once (a :class:`SettingError` names the first bad
    one, its value and the values allowed) — what the command line runs before it starts any kernel."""
    settings = Settings()
    if settings.llm_base_url is not None:
        check_transport(settings.llm_base_url, settings.llm_allow_http)
    raw = os.environ.get("TEMPORAG_KERNEL_START_TIMEOUT")
    if raw not in (None, ""):
        _env_number("TEMPORAG_KERNEL_START_TIMEOUT", "60", float, 0.001, "seconds a kernel may take to start")
    limits.check_all()
    return settings
