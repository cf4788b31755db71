"""How much untrusted input the kit reads, and the one JSON decoder that keeps to it.

Questions files, predictions files and LLM replies come from other people and other machines.  Python's
``json`` recurses once per nesting level (a file of 100,000 nested lists is a ``RecursionError``, which no
caller expects) and reads any size it is given.  Every such input is decoded by :func:`decode`, which
refuses a value nested deeper than ``TEMPORAG_MAX_JSON_DEPTH`` levels and a number too long for Python to
convert, with a :class:`LimitError` whose message the caller turns into its own one-line error (naming the
file and line, or the endpoint).  The size caps are read here too: ``TEMPORAG_MAX_INPUT_BYTES`` for a data
or predictions file, ``TEMPORAG_LLM_MAX_REPLY_BYTES`` for one reply.  None of them changes a number the kit
computes: the shared data sets are far inside every cap.
"""

from __future__ import annotations

import json
from json.decoder import WHITESPACE
from typing import Any

from temporag.config import _env_number

MIB = 1 << 20
DEFAULT_INPUT_BYTES = 512 * MIB
DEFAULT_JSON_DEPTH = 64
DEFAULT_REPLY_BYTES = 1 * MIB
_DECODER = json.JSONDecoder()


class LimitError(ValueError):
    """An input past one of the caps (too deep, too long a number); the message says which and the
    setting that raises it."""


def max_input_bytes() -> int:
    """``TEMPORAG_MAX_INPUT_BYTES``: the largest questions, predictions or data file read (512 MiB)."""
    return int(
        _env_number("TEMPORAG_MAX_INPUT_BYTES", str(DEFAULT_INPUT_BYTES), int, 1, "bytes of a file read")
    )


def max_json_depth() -> int:
    """``TEMPORAG_MAX_JSON_DEPTH``: how deep a JSON value of a file or a reply may nest (64 levels)."""
    return int(_env_number("TEMPORAG_MAX_JSON_DEPTH", str(DEFAULT_JSON_DEPTH), int, 1, "nesting levels"))


def max_reply_bytes() -> int:
    """``TEMPORAG_LLM_MAX_REPLY_BYTES``: the longest LLM reply read (1 MiB); a longer one is malformed."""
    return int(
        _env_number("TEMPORAG_LLM_MAX_REPLY_BYTES", str(DEFAULT_REPLY_BYTES), int, 1, "bytes of one reply")
    )


def check_all() -> None:
    """Every cap's setting read once (a bad value is the kit's one-line ``SettingError``)."""
    max_input_bytes(), max_json_depth(), max_reply_bytes()


def too_large(size: int, limit: int, setting: str) -> str:
    """The problem of an input of ``size`` bytes past ``limit``, for the caller's error."""
    return f"{size:,} bytes, more than the {limit:,} the kit reads ({setting})"


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` holds lists or objects nested more than ``limit`` levels (walked without
    recursion: the check must not fail the way the decoder does)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def decode(text: str, pos: int = 0, depth: int | None = None) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, pos)`` kept to the caps: a :class:`LimitError` for a value
    nested deeper than ``depth`` (default ``TEMPORAG_MAX_JSON_DEPTH``) or a number past Python's digit
    limit; a :class:`json.JSONDecodeError` for text that is not JSON."""
    limit = max_json_depth() if depth is None else depth
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except RecursionError:
        raise LimitError(_deep(limit)) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of more than sys.get_int_max_str_digits() digits
        raise LimitError(f"a number too long to read ({str(exc).split(':')[0]})") from None
    if nested_deeper(value, limit):
        raise LimitError(_deep(limit))
    return value, end


def loads(text: str, depth: int | None = None) -> Any:
    """One JSON document (JSON's own whitespace around it), decoded by :func:`decode`: ``json.loads``
    within the caps."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    value, end = decode(text, WHITESPACE.match(text, 0).end(), depth)
    end = WHITESPACE.match(text, end).end()
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _deep(limit: int) -> str:
    return f"nested more than {limit} levels deep (TEMPORAG_MAX_JSON_DEPTH)"
