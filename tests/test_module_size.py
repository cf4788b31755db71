"""CONTRIBUTING §3's size rule, checked: no module of the kit over 600 lines, data included."""

from __future__ import annotations

from pathlib import Path

KIT = Path(__file__).resolve().parents[1] / "lib" / "temporag"
MAX_LINES = 600


def test_no_module_is_over_600_lines():
    sizes = {str(p.relative_to(KIT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in KIT.rglob("*.py")}
    assert len(sizes) > 100  # the scan sees the kit
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split each where it holds two jobs): {over}"
