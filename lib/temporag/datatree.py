"""A data-only file format for the kit's cached structures (STAR-RAG's rule graph, IA-RAG's build).

Why not pickle: loading a pickle runs whatever its bytes say, and caches are shared and merged between
people (``temporag cache merge``), so a cache entry must never be able to run code.  This format is one
``.npz`` archive read with ``allow_pickle=False``: every numpy array of the structure as its own member,
and the rest of the tree (dataclass fields, lists, tuples, dicts, numbers, strings, enums) as JSON in the
member ``__tree__``.  Reading builds only the classes the caller names — never a class named by the file —
and sets their fields without calling ``__init__`` (as pickle does), so a loaded object equals the built
one field for field: the same arrays (dtype, shape, bytes), the same dicts (key types kept), the same
numpy scalar types.  ``functools.cached_property`` values are not stored; they are recomputed on use.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from enum import Enum
from typing import Any, BinaryIO

import numpy as np

FORMAT = 1
TREE = "__tree__"
_TAGS = ("__array__", "__scalar__", "__tuple__", "__dict__", "__enum__", "__obj__")


class FormatError(ValueError):
    """The file is not a data tree this code can read (a foreign class, a bad tag, another format)."""


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _fields(obj: Any) -> dict[str, Any]:
    """What an object is: its dataclass fields, or (a plain class) its instance attributes."""
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return dict(vars(obj))


class _Encoder:
    def __init__(self, types: dict[str, type]) -> None:
        self.types, self.arrays = types, {}

    def __call__(self, value: Any) -> Any:  # noqa: PLR0911 - one branch per kind of value
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                raise TypeError(f"an object array ({value.dtype}) cannot be stored without pickle")
            name = f"a{len(self.arrays)}"
            self.arrays[name] = value
            return {"__array__": name}
        if isinstance(value, np.generic):  # before float/int/bool: np.float64 is a float
            return {"__scalar__": value.dtype.str, "v": value.item()}
        if isinstance(value, Enum):
            return {"__enum__": self._known(type(value)), "v": value.value}
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, tuple):
            return {"__tuple__": [self(v) for v in value]}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            if all(isinstance(k, str) and not k.startswith("__") for k in value):
                return {k: self(v) for k, v in value.items()}
            return {"__dict__": [[self(k), self(v)] for k, v in value.items()]}
        cls = self._known(type(value))
        return {"__obj__": cls, "f": {k: self(v) for k, v in _fields(value).items()}}

    def _known(self, cls: type) -> str:
        name = _name(cls)
        if self.types.get(name) is not cls:
            raise TypeError(f"{name} is not one of the classes this data tree may hold")
        return name


class _Decoder:
    def __init__(self, types: dict[str, type], arrays: dict[str, np.ndarray]) -> None:
        self.types, self.arrays = types, arrays

    def __call__(self, value: Any) -> Any:  # noqa: PLR0911 - one branch per tag
        if isinstance(value, list):
            return [self(v) for v in value]
        if not isinstance(value, dict):
            return value
        tag = next((t for t in _TAGS if t in value), None)
        if tag is None:
            return {k: self(v) for k, v in value.items()}
        if tag == "__array__":
            return self.arrays[value["__array__"]]
        if tag == "__scalar__":
            return np.dtype(value["__scalar__"]).type(value["v"])
        if tag == "__tuple__":
            return tuple(self(v) for v in value["__tuple__"])
        if tag == "__dict__":
            return {_hashable(self(k)): self(v) for k, v in value["__dict__"]}
        cls = self._cls(value[tag])
        if tag == "__enum__":
            return cls(value["v"])
        obj = cls.__new__(cls)
        for k, v in value["f"].items():
            object.__setattr__(obj, k, self(v))  # frozen dataclasses too, as pickle restores them
        return obj

    def _cls(self, name: Any) -> type:
        try:
            return self.types[name]
        except (KeyError, TypeError):
            raise FormatError(f"names class {name!r}, not one of the classes expected here") from None


def _hashable(key: Any) -> Any:
    if isinstance(key, list):
        raise FormatError("a dict key decodes to a list")
    return key


def _types(types: Iterable[type]) -> dict[str, type]:
    return {_name(t): t for t in types}


def dump(obj: Any, f: BinaryIO, types: Iterable[type]) -> None:
    """Write ``obj`` — a tree of ``types`` instances, containers, numbers, strings and arrays — to ``f``."""
    encode = _Encoder(_types(types))
    tree = json.dumps({"format": FORMAT, "root": encode(obj)}, ensure_ascii=False).encode("utf-8")
    np.savez(f, **{TREE: np.frombuffer(tree, dtype=np.uint8)}, **encode.arrays)


def load(f: BinaryIO, types: Iterable[type]) -> Any:
    """The tree :func:`dump` wrote; :class:`FormatError` (or numpy's ValueError for a member that would
    need pickle) when the file is anything else."""
    with np.load(f, allow_pickle=False) as archive:
        if TREE not in archive.files:
            raise FormatError(f"no {TREE} member")
        arrays = {name: archive[name] for name in archive.files if name != TREE}
        doc = json.loads(archive[TREE].tobytes().decode("utf-8"))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise FormatError(f"format {doc.get('format') if isinstance(doc, dict) else '?'}, expected {FORMAT}")
    return _Decoder(_types(types), arrays)(doc["root"])
