"""Parameters checked where they enter: a notebook's ``start()``, the runner's ``-p``, method constructors.

A bad value that slips through does not fail loudly: ``K = 0`` made TECQA write a chain recall of 0.0
into the figures, a negative sample size surfaced as numpy's "negative dimensions" error, and papermill
only warns about a misspelt name.  Every rule lives here once, keyed by the parameter's name (the same
name means the same thing in every notebook), and a violation is one line naming the parameter, the
value given and the values allowed.  Names without a rule pass: a notebook may declare its own knobs,
and the runner rejects names a notebook does not declare.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ParameterError(ValueError):
    """A parameter value (or name) that cannot be used; the message is one line with the fix."""


@dataclass(frozen=True)
class Rule:
    ok: Callable[[Any], bool]
    allowed: str


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _at_least(low: int, optional: bool = False, meaning: str = "") -> Rule:
    text = f"a whole number ≥ {low}" + (" or None (the profile's default)" if optional else "")
    return Rule(lambda v: (optional and v is None) or (_whole(v) and v >= low), text + meaning)


def _choice(*values: Any) -> Rule:
    return Rule(lambda v: v in values, "one of " + ", ".join(repr(v) for v in values))


def _text(optional: bool = True) -> Rule:
    return Rule(
        lambda v: (optional and v is None) or (isinstance(v, (str, Path)) and str(v).strip() != ""),
        "a non-empty string" + (" or None" if optional else ""),
    )


def _existing_file(v: Any) -> bool:
    return v is None or (isinstance(v, (str, Path)) and Path(v).expanduser().is_file())


RULES: dict[str, Rule] = {
    "profile": _choice("smoke", "paper"),
    "seed": _at_least(0),
    "sample_size": _at_least(1, optional=True),
    "reader_sample": _at_least(0, optional=True),
    "parse_sample": _at_least(0, optional=True),
    "heatmap_reader_sample": _at_least(0, optional=True),
    "questions_file": Rule(_existing_file, "None or the path of an existing question file"),
    "split": _text(optional=False),
    "output_dir": _text(),
    "llm_model": _text(),
    "llm_base_url": Rule(
        lambda v: v is None or (isinstance(v, str) and v.startswith(("http://", "https://"))),
        "None or an http(s):// URL of an OpenAI-compatible server (its /v1 root)",
    ),
    "k": _at_least(1),
    "ks": Rule(
        lambda v: isinstance(v, (list, tuple)) and len(v) > 0 and all(_whole(x) and x >= 1 for x in v),
        "a non-empty list of whole numbers ≥ 1",
    ),
    "K": _at_least(1),
    "N": _at_least(0, meaning=" (0: explicit anchors only)"),
    "K1": _at_least(1, optional=True, meaning=" (None: the notebook's per-data-set default, IA-RAG)"),
    "K2": _at_least(1),
    "K_type": _at_least(1),
    "reader_k": _at_least(1),
    "reader_facts": _at_least(1, optional=True),
    "min_support": Rule(
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1,
        "a share in (0, 1]",
    ),
    "parser": _choice("offline", "llm"),
    "reader_style": _choice(None, "plain", "appendix-e"),
}


def check(**values: Any) -> None:
    """Raise :class:`ParameterError` for the first value that breaks its rule (names without a rule pass)."""
    for name, value in values.items():
        rule = RULES.get(name)
        if rule is not None and not rule.ok(value):
            raise ParameterError(
                f"parameter {name} = {value!r} is not allowed: {name} must be {rule.allowed}"
            )


def check_names(names: Iterable[str], declared: Iterable[str], notebook: str) -> None:
    """Reject parameter names a notebook does not declare (papermill would only warn and ignore them)."""
    declared = list(declared)
    unknown = [n for n in names if n not in declared]
    if unknown:
        raise ParameterError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} for "
            f"notebook {notebook}; its parameters are: {', '.join(declared)}"
        )


def validate(params: dict[str, Any]) -> dict[str, Any]:
    """Check a notebook's parameters dict (``start()`` calls this first); returns it unchanged."""
    check(**params)
    return params
