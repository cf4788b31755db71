"""A real headless browser for tests: Debian's Chromium driven by Playwright (no browser download).

``make browser`` (run by ``make test``) installs the ``chromium`` package when it is missing and the
machine allows it (root with apt-get).  Without a browser the browser tests are skipped with the reason —
except in CI (``CI=true``), where a missing browser fails them, so CI never passes without running them.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str:
    """The browser to drive (``TEMPORAG_CHROMIUM`` or the first Chromium on PATH), else skip or fail."""
    found = os.environ.get("TEMPORAG_CHROMIUM") or next(filter(None, map(shutil.which, CANDIDATES)), None)
    problem = None
    if not found:
        problem = (
            "no headless Chromium found (apt-get install chromium, or `make browser`; TEMPORAG_CHROMIUM=path)"
        )
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "the playwright package is missing (pip install -e '.[dev]')"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run in CI: {problem}")
        pytest.skip(problem)
    return found


@contextmanager
def browser_page(errors: list[str]):
    """A fresh page whose console errors, uncaught exceptions and failed requests land in ``errors``."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on(
                "console",
                lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
            )
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
            yield page
        finally:
            browser.close()
