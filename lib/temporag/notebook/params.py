"""Notebook parameters: declared once (name, type, range, help, per-profile default), checked where they
enter (the runner's ``-p``, ``notebook.start()``, method constructors) and resolved in one place.

A bad value that slips through does not fail loudly: ``K = 0`` made TECQA write a chain recall of 0.0
into the figures, a negative sample size surfaced as numpy's "negative dimensions" error, and papermill
only warns about a misspelt name.  So every parameter is a :class:`Parameter` with one rule, and a
violation is one line naming the parameter, the value given and the values allowed.

* :data:`KIT` declares the vocabulary every notebook shares (``profile``, ``sample_size``,
  ``reader_sample`` …): the same name means the same thing, with the same rule, in every notebook.
* Each notebook's package declares its :class:`Parameters` once (``PARAMETERS`` in
  ``temporag/methods/<paper>/params.py``, ``temporag/leaderboard/params.py``,
  ``temporag/methods/semantic/params.py``), reusing the kit's declarations where the name is the kit's and
  giving them its own profile defaults; :func:`with_kit` writes the kit's opening and closing entries
  around the package's own, so no ``params.py`` repeats them.
* The parameters cell of the notebook is that declaration written out (:meth:`Parameters.cell`), one
  typed ``name: type = value  # help`` line each, so ``papermill --help-notebook`` lists them all.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporag.methods import registry
from temporag.redact import redact_text, redact_url

PROFILE_NAMES = ("smoke", "paper")
DOCUMENT_SETS = ("TimeQA", "TempReason", "ComplexTR")  # the document QA data sets, in reading order


class ParameterError(ValueError):
    """A parameter value (or name) that cannot be used; the message is one line with the fix."""


@dataclass(frozen=True)
class Rule:
    """What a value must be: ``ok(value)``, and ``allowed`` says it in words for the error message."""

    ok: Callable[[Any], bool]
    allowed: str


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def at_least(
    low: int, optional: bool = False, meaning: str = "", none: str = "the profile's default"
) -> Rule:
    """A whole number ≥ ``low`` (or None where ``optional``; ``none`` says what None means)."""
    text = f"a whole number ≥ {low}" + (f" or None ({none})" if optional else "")
    return Rule(lambda v: (optional and v is None) or (_whole(v) and v >= low), text + meaning)


def choice(*values: Any) -> Rule:
    return Rule(lambda v: v in values, "one of " + ", ".join(repr(v) for v in values))


def text(optional: bool = True) -> Rule:
    return Rule(
        lambda v: (optional and v is None) or (isinstance(v, (str, Path)) and str(v).strip() != ""),
        "a non-empty string" + (" or None" if optional else ""),
    )


def share(optional: bool = False) -> Rule:
    """A number in (0, 1]."""
    return Rule(
        lambda v: (optional and v is None) or (_number(v) and 0 < v <= 1),
        "a share in (0, 1]" + (" or None" if optional else ""),
    )


def unit() -> Rule:
    """A number in [0, 1]."""
    return Rule(lambda v: _number(v) and 0 <= v <= 1, "a number in [0, 1]")


def whole_list(optional: bool = False) -> Rule:
    return Rule(
        lambda v: (
            (optional and v is None)
            or (isinstance(v, (list, tuple)) and len(v) > 0 and all(_whole(x) and x >= 1 for x in v))
        ),
        "a non-empty list of whole numbers ≥ 1" + (" or None" if optional else ""),
    )


def flag(optional: bool = False) -> Rule:
    return Rule(
        lambda v: (optional and v is None) or isinstance(v, bool),
        "True or False" + (" or None (the profile's default)" if optional else ""),
    )


def _existing_file(v: Any) -> bool:
    return v is None or (isinstance(v, (str, Path)) and Path(v).expanduser().is_file())


EXISTING_FILE = Rule(_existing_file, "None or the path of an existing question file")


@dataclass(frozen=True)
class Served:
    """A profile default that depends on who reads: ``served`` with an OpenAI-compatible endpoint
    (``llm_base_url`` set), ``offline`` with the embedded reader."""

    offline: Any
    served: Any

    def __call__(self, settings: Any) -> Any:
        return self.served if getattr(settings, "llm_base_url", None) else self.offline


@dataclass(frozen=True)
class Parameter:
    """One notebook parameter.  ``default`` is the value its cell holds; where that is None and
    ``profiles`` names a default for the run's profile, the run uses that (a :class:`Served` default
    depends on the reader)."""

    name: str
    type: str  # the annotation the cell writes (papermill reads it): int, Optional[int], list[int], ...
    default: Any
    help: str
    rule: Rule
    profiles: Mapping[str, Any] = field(default_factory=dict)

    def but(self, **changes: Any) -> Parameter:
        """This parameter with another help, cell value or profile table (the rule stays)."""
        return dataclasses.replace(self, **changes)

    def check(self, value: Any) -> None:
        if not self.rule.ok(value):
            raise ParameterError(
                f"parameter {self.name} = {redact_text(repr(value))} is not allowed: {self.name} must be "
                f"{self.rule.allowed}"
            )

    def resolve(self, value: Any, profile: str, settings: Any = None) -> Any:
        """``value``, or where it is None the profile's default."""
        if value is not None or profile not in self.profiles:
            return value
        default = self.profiles[profile]
        return default(settings) if isinstance(default, Served) else copy.deepcopy(default)

    def profile_default(self, profile: str) -> str:
        """What the run uses when the cell is left as it is, in words (``temporag list``)."""
        if self.default is not None or profile not in self.profiles:
            return _cell_value(self.default)
        return _in_words(self.profiles[profile])


def _cell_value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


class Parameters:
    """A notebook's parameters, in the order its cell lists them."""

    def __init__(self, *parameters: Parameter) -> None:
        names = [p.name for p in parameters]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"parameters declared twice: {twice}")
        self._by_name = {p.name: p for p in parameters}

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._by_name.values())

    def __getitem__(self, name: str) -> Parameter:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    def cell_values(self) -> dict[str, Any]:
        return {p.name: p.default for p in self}

    def check(self, **values: Any) -> None:
        """Raise :class:`ParameterError` for the first value that breaks its rule (undeclared names pass)."""
        for name, value in values.items():
            if name in self._by_name:
                self._by_name[name].check(value)

    def check_given(self, values: Mapping[str, Any], notebook: str) -> None:
        """The runner's check of ``-p`` values: every name declared, every value within its rule."""
        check_names(values, self.names, notebook)
        self.check(**values)

    def resolve(self, values: Mapping[str, Any], settings: Any = None) -> dict[str, Any]:
        """Every declared parameter: the value given (else the cell's), checked, and where None the
        profile's default.  Names not declared here are kept as given."""
        given = {**self.cell_values(), **values}
        self.check(**given)
        profile = given.get("profile", "smoke")
        return {
            name: self[name].resolve(value, profile, settings) if name in self else value
            for name, value in given.items()
        }

    def cell(self) -> str:
        """The notebook's parameters cell: one typed ``name: type = value  # help`` line each (what None
        means in each profile is added to the help)."""
        heads = [f"{p.name}: {p.type} = {_cell_value(p.default)}" for p in self]
        width = min(max(len(h) for h in heads), 36)  # a long head pushes only its own help right
        lines = [f"{h.ljust(width)}  # {p.help}{_profile_note(p)}" for h, p in zip(heads, self)]
        typing = "from typing import Optional\n" if any("Optional[" in p.type for p in self) else ""
        return typing + "\n".join(lines)

    def table(self) -> list[str]:
        """One line per parameter but ``profile`` (the columns): name, type, what each profile uses,
        help (``temporag list``)."""
        rows = [("parameter", "type", *PROFILE_NAMES, "help")] + [
            (p.name, p.type, *(p.profile_default(pr) for pr in PROFILE_NAMES), p.help)
            for p in self
            if p.name != "profile"
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        return ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]


def _in_words(value: Any) -> str:
    if isinstance(value, Served):
        return f"{_in_words(value.offline)}, served {_in_words(value.served)}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return "all" if value is None else str(value)


def _profile_note(parameter: Parameter) -> str:
    """`` (smoke 2, paper 20)``: what None means, for a parameter whose None is its profile's default."""
    if parameter.default is not None or not parameter.profiles:
        return ""
    values = [parameter.profiles.get(p) for p in PROFILE_NAMES]
    if all(v == values[0] for v in values):
        return f" (None: {_in_words(values[0])})"
    return " (" + ", ".join(f"{p} {_in_words(v)}" for p, v in zip(PROFILE_NAMES, values)) + ")"


# -- the kit's vocabulary: one rule per name, shared by every notebook -------------------------------

KIT = Parameters(
    Parameter(
        "profile",
        "str",
        "smoke",
        '"smoke" (CI-sized) | "paper" (every shared question)',
        choice(*PROFILE_NAMES),
    ),
    Parameter(
        "split",
        "str",
        "test_sample_shared",
        "MultiTQ question split under TEMPORAG_DATA",
        text(optional=False),
    ),
    Parameter(
        "questions_file",
        "Optional[str]",
        None,
        "any question file in MultiTQ's format; replaces `split`",
        EXISTING_FILE,
    ),
    Parameter(
        "sample_size",
        "Optional[int]",
        None,
        "questions for LLM-free metrics",
        at_least(1, optional=True),
        {"smoke": 40, "paper": None},
    ),
    # a served model is fast enough to read every question of the paper profile
    Parameter(
        "reader_sample",
        "Optional[int]",
        None,
        "questions the reader reads",
        at_least(0, optional=True),
        {"smoke": 4, "paper": Served(offline=200, served=None)},
    ),
    Parameter("seed", "int", 0, "seed of every sample the run draws", at_least(0)),
    Parameter("llm_model", "Optional[str]", None, "None: TEMPORAG_LLM_MODEL or the embedded SmolLM2", text()),
    Parameter(
        "llm_base_url",
        "Optional[str]",
        None,
        "None: TEMPORAG_LLM_BASE_URL or offline",
        # recorded in the parameters cell, results.json and the run stamp: no credentials (redact_url)
        Rule(
            lambda v: v is None
            or (isinstance(v, str) and v.startswith(("http://", "https://")) and redact_url(v) == v),
            "None or an http(s):// URL of an OpenAI-compatible server (its /v1 root) without user:password@ "
            "or ?query (set TEMPORAG_LLM_BASE_URL and TEMPORAG_LLM_API_KEY for an endpoint that needs a key)",
        ),
    ),
    Parameter("output_dir", "Optional[str]", None, "None: figures/<paper> or runs/<profile>/<paper>", text()),
    Parameter("ks", "list[int]", [1, 5, 10, 20], "answer recall@k cut-offs", whole_list()),
    Parameter(
        "datasets",
        "Optional[list[str]]",
        None,
        "document data sets",
        Rule(
            lambda v: v is None or (isinstance(v, list) and len(v) > 0 and set(v) <= set(DOCUMENT_SETS)),
            "None (all three) or a non-empty list of " + ", ".join(map(repr, DOCUMENT_SETS)),
        ),
        {"smoke": list(DOCUMENT_SETS), "paper": list(DOCUMENT_SETS)},
    ),
    Parameter("k", "int", 20, "facts a retriever returns", at_least(1)),
)


#: the kit's entries that open and close every notebook's parameters; its own go between
OPENING = ("profile", "split", "questions_file", "sample_size", "reader_sample", "seed")
CLOSING = ("llm_model", "llm_base_url", "output_dir")


def with_kit(*own: Parameter, **instead: Parameter | tuple[Parameter, ...]) -> Parameters:
    """The kit's opening block, a notebook's ``own`` parameters, the kit's closing block, so every cell
    starts and ends alike.  ``instead`` puts other parameters in a kit entry's place: the entry with its
    own help or profiles (``reader_sample=KIT["reader_sample"].but(...)``), or a tuple where a notebook's
    own parameter stands next to it (``seed=(mine, KIT["seed"])``)."""
    unknown = sorted(set(instead) - {*OPENING, *CLOSING})
    if unknown:
        raise ValueError(f"{unknown} are not in the kit's opening or closing block")

    def block(names: tuple[str, ...]) -> list[Parameter]:
        placed = [instead.get(name, KIT[name]) for name in names]
        return [p for item in placed for p in (item if isinstance(item, tuple) else (item,))]

    return Parameters(*block(OPENING), *own, *block(CLOSING))


def check(**values: Any) -> None:
    """Check values of the kit's vocabulary (other names pass: a package checks its own)."""
    KIT.check(**values)


def check_names(names: Iterable[str], declared: Iterable[str], notebook: str) -> None:
    """Reject parameter names a notebook does not declare (papermill would only warn and ignore them)."""
    declared = list(declared)
    unknown = [n for n in names if n not in declared]
    if unknown:
        raise ParameterError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} for "
            f"notebook {notebook}; its parameters are: {', '.join(declared)}"
        )


def check_given(notebook: str, values: Mapping[str, Any], cell_names: Iterable[str]) -> None:
    """The runner's check before any kernel starts: every name declared by the notebook, every value
    within its rule.  A notebook the kit does not declare (or another notebook under a kit notebook's
    name, whose cell holds other names) is checked against the names of its cell and the kit's rules."""
    cell_names = list(cell_names)
    declared = declarations(notebook)
    if declared is not None and set(declared.names) == set(cell_names):
        declared.check_given(values, notebook)
        return
    check_names(values, cell_names, notebook)
    check(**values)


def declared_in(modules: Iterable[str], name: str = "PARAMETERS", kind: type = Parameters) -> Any:
    """``name`` (an instance of ``kind``) of the first of ``modules`` that exists and declares it."""
    for module in modules:
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module.startswith(exc.name):
                continue  # no such module: try the next place
            raise
        if isinstance(getattr(found, name, None), kind):
            return getattr(found, name)
    return None


def declarations(notebook: str) -> Parameters | None:
    """The :class:`Parameters` a registered notebook's package declares ('00_tour' and 'tour' → the tour's),
    or None for a notebook nobody declares (e.g. a test's own): ``PARAMETERS`` in ``<package>.params`` or
    ``<package>``, the package its entry was found in (the kit's, or one installed by an entry point)."""
    found = registry.find(notebook)
    return declared_in((f"{found[1]}.params", found[1])) if found else None
