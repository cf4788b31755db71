"""The kit's methods, found by name: one declaration per method package.

Each method package declares one :class:`MethodEntry` named ``ENTRY`` in its ``entry`` module: its name,
its notebook, its place in the reading order, the rows it puts on the MultiTQ leaderboard (one
:class:`Contender` each: the row's label, how to build the method from the leaderboard's shared
:class:`~temporag.methods.workspace.KGWorkspace`, and the ``k`` of its native context), what the book
shows for it (:class:`~temporag.methods.book_entry.BookEntry`) and its reading of the released code, if any.
The runner's notebook order, the leaderboard's roster and paper-vs-code table, the book and the contract
test read this registry, so a new method is a new package, not an edit to the kit's lists.

Entries are found in two places:

* every package under ``temporag.methods`` that has an ``entry`` module (the kit's own methods), and the
  kit's notebooks that compare methods rather than being one (:data:`KIT_NOTEBOOKS`: the leaderboard);
* every Python entry point in the group ``temporag.methods`` (a package outside the kit, e.g.
  ``examples/bm25_baseline``): the entry point names a module that defines ``ENTRY``, or the
  :class:`MethodEntry` itself.

The package an entry was found in (:func:`package`) is where the rest of the method's declarations live:
its notebook's parameters are ``PARAMETERS`` in ``<package>.params`` or in the package itself
(:func:`declarations`), its claims ``CLAIMS`` in ``<package>.claims``.  Every lookup of a notebook goes
through here (:func:`notebook_path`, :func:`available_notebooks`): the runner, grids, a notebook's results
and the book find a notebook installed from outside as they find the kit's.

The declarations (:class:`MethodEntry`, :class:`Contender`, the parameter vocabulary in
:mod:`temporag.methods.params`) import nothing above the methods layer; the lookups import the declaring
packages by name only, when first asked.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import temporag.methods as methods
from temporag.config import REPO_ROOT
from temporag.methods.book_entry import BookEntry
from temporag.methods.params import Parameters, check, check_names

ENTRY_POINT_GROUP = "temporag.methods"
KIT_NOTEBOOKS = ("temporag.leaderboard",)  # kit packages with an ``entry`` module that are no method
NOTEBOOK_DIR = REPO_ROOT / "notebooks"  # the kit's notebooks (an installed method ships its own file)


class RegistryError(RuntimeError):
    """Two packages declare the same name or leaderboard row, or an entry point does not name an entry."""


@dataclass(frozen=True)
class Contender:
    """One leaderboard row: ``build(workspace)`` returns the method and a note on the variant that ran;
    the leaderboard calls ``method.retrieve(questions, k, progress=False, **shared)``."""

    name: str  # the row's label, e.g. "STAR-RAG (as printed)"
    build: Callable[[Any], tuple[Any, str]]
    k: int | None = None  # the native context's k (None: the method's default_k)
    order: int = 0  # the row's place in the leaderboard's tables


@dataclass(frozen=True)
class DocumentRows:
    """A document method's rows in the leaderboard's documents section (TimeQA, TempReason, ComplexTR),
    measured by the method's own notebook steps: ``prepare(datasets, sample_size, encoder, seed,
    smoke=...)`` gives each data set's setup (its documents, a seeded question sample, the offline build);
    ``rows(setup, profile)`` the rows, ``{label: (method, units shown to the reader)}``;
    ``retrieval(method, questions, k)`` the per-question recall, tokens and latency;
    ``reader(method, questions, llm, k=...)`` the reader's scores and ``reader_mean(read, measure)`` a
    measure's mean (``{"value", "failed"}``: failed calls left out, counted)."""

    prepare: Callable[..., Mapping[str, Any]]
    rows: Callable[[Any, str], Mapping[str, tuple[Any, int]]]
    retrieval: Callable[..., Any]
    reader: Callable[..., Any]
    reader_mean: Callable[..., Mapping[str, Any]]


@dataclass(frozen=True)
class MethodEntry:
    """What a method package declares about itself."""

    name: str  # the package's name, e.g. "star_rag" (the "paper" column of the leaderboard's tables)
    notebook: str | Path | None  # a notebook in notebooks/ by name (str), or the package's own file (Path)
    order: int  # place in the reading order (``temporag reproduce`` runs notebooks in this order)
    evidence: str = "kg_fact"  # what its rankings hold: "kg_fact" or "document_unit"
    paper: bool = True  # False for a baseline that reproduces no paper (its rows name no paper)
    leaderboard: tuple[Contender, ...] = ()
    documents: DocumentRows | None = None  # its rows in the leaderboard's documents section (None: none)
    book: BookEntry | None = None  # its pages' title and first-page row in the book (None: no row)
    #: its paper vs released code rows (aspect, paper, released code, kit, from) for the leaderboard's
    #: paper-vs-code table; None: the kit has read no released code of it
    released_code: Callable[[], list[dict[str, str]]] | None = None

    @property
    def notebook_name(self) -> str | None:
        """The notebook's name as the runner knows it (its file name without ``.ipynb``)."""
        return None if self.notebook is None else Path(self.notebook).stem

    @property
    def notebook_path(self) -> Path | None:
        """The notebook file of a package that ships its own (None: the notebook lives in notebooks/)."""
        return self.notebook if isinstance(self.notebook, Path) else None


def _kit_entries() -> list[tuple[MethodEntry, str]]:
    """(entry, its package) of every kit method package with an ``entry`` module, then the kit notebooks."""
    found = []
    for info in pkgutil.iter_modules(methods.__path__):
        package = f"{methods.__name__}.{info.name}"
        if info.ispkg and importlib.util.find_spec(f"{package}.entry") is not None:
            found.append((importlib.import_module(f"{package}.entry").ENTRY, package))
    for package in KIT_NOTEBOOKS:
        found.append((importlib.import_module(f"{package}.entry").ENTRY, package))
    return found


def _entry_point_entries() -> list[tuple[MethodEntry, str]]:
    """(entry, the module its entry point names) of every installed ``temporag.methods`` entry point."""
    found = []
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = point.load()
        entry = getattr(loaded, "ENTRY", loaded)
        if not isinstance(entry, MethodEntry):
            raise RegistryError(
                f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP}) names no MethodEntry"
            )
        found.append((entry, point.module))
    return found


@functools.cache
def _found() -> dict[str, tuple[MethodEntry, str]]:
    """Every registered method by name, with the package it was found in (imports each one once)."""
    found = _kit_entries() + _entry_point_entries()
    names = [e.name for e, _ in found]
    rows = [c.name for e, _ in found for c in e.leaderboard]
    for what, values in (("method", names), ("leaderboard row", rows)):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise RegistryError(f"{what} name(s) declared twice: {twice}")
    return {e.name: (e, package) for e, package in found}


def entries() -> tuple[MethodEntry, ...]:
    """Every registered method, in reading order (imports each method package once)."""
    return tuple(sorted((e for e, _ in _found().values()), key=lambda e: (e.order, e.name)))


def refresh() -> None:
    """Forget the entries found so far (after installing a package with an entry point, or in tests)."""
    _found.cache_clear()


def get(name: str) -> MethodEntry:
    """The entry of the method called ``name``."""
    for entry in entries():
        if entry.name == name:
            return entry
    raise KeyError(f"no registered method {name!r}; registered: {[e.name for e in entries()]}")


def package(name: str) -> str:
    """The package the method called ``name`` was found in: ``temporag.methods.<name>`` for the kit's
    own, the module its entry point names for an installed one."""
    get(name)  # the error that lists what is registered
    return _found()[name][1]


def contenders() -> list[tuple[MethodEntry, Contender]]:
    """Every leaderboard row with the entry that declares it, in the tables' order."""
    rows = [(e, c) for e in entries() for c in e.leaderboard]
    return sorted(rows, key=lambda pair: (pair[1].order, pair[0].order))


def notebooks() -> list[str]:
    """The registered methods' notebooks, in reading order."""
    return [e.notebook_name for e in entries() if e.notebook is not None]


def output_name(notebook: str) -> str:
    """The folder a notebook's outputs go to: '00_tour' → 'tour' (a leading reading-order number dropped)."""
    return notebook.split("_", 1)[1] if notebook[:2].isdigit() and "_" in notebook else notebook


def find(notebook: str) -> tuple[MethodEntry, str] | None:
    """The entry and package of the registered notebook called ``notebook`` (its file name, its output
    folder or its method's name: '00_tour', 'tour' and 'semantic' are one), None if none is."""
    for entry in entries():
        own = (entry.notebook_name, output_name(entry.notebook_name)) if entry.notebook else ()
        if notebook == entry.name or notebook in own:
            return entry, _found()[entry.name][1]
    return None


def _may_register(name: str) -> bool:
    """Whether the registry could know a notebook ``name`` the folder does not hold: a kit package's name
    (a method's name stands for its notebook) or any installed entry point (it may ship its own file).
    Asked without importing a method package."""
    kit = {info.name for info in pkgutil.iter_modules(methods.__path__) if info.ispkg}
    kit |= {package.rsplit(".", 1)[-1] for package in KIT_NOTEBOOKS}
    return name in kit or bool(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def notebook_path(name: str, notebook_dir: Path | None = None) -> Path | None:
    """The one way to find a notebook's file, by its file name, output folder or method ('00_tour', 'tour',
    'semantic'): a notebook in ``notebook_dir`` (default notebooks/) so named, or whose output folder is
    ``name`` (one nobody registers, e.g. a test's own, included), else the registered notebook (the file an
    installed package ships, or its file in ``notebook_dir``).  The folder is read first and the registry
    only when it could know the name: its first lookup imports every method package (seconds), which a
    notebook run of a test's own notebook never needs."""
    folder = notebook_dir or NOTEBOOK_DIR
    if (folder / f"{name}.ipynb").exists():
        return folder / f"{name}.ipynb"
    here = next((p for p in sorted(folder.glob("*.ipynb")) if output_name(p.stem) == name), None)
    found = find(name) if here is None and _may_register(name) else None
    if found is not None and found[0].notebook is not None:
        entry = found[0]
        path = entry.notebook_path or folder / f"{entry.notebook_name}.ipynb"
        return path if path.exists() else None
    return here


def available_notebooks(notebook_dir: Path | None = None) -> list[str]:
    """Notebook names present in ``notebook_dir`` or registered by a method package with its own
    notebook file, in the kit's reading order (tour first, leaderboard last, others after it)."""
    notebook_dir = notebook_dir or NOTEBOOK_DIR
    names = {p.stem for p in notebook_dir.glob("*.ipynb")}
    names |= {e.notebook_name for e in entries() if e.notebook_path and e.notebook_path.exists()}
    order = notebooks()
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))


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
    found = find(notebook)
    return declared_in((f"{found[1]}.params", found[1])) if found else None
