"""Where a notebook's numbers go: <output folder>/{*.png,*.svg,*.csv,tables.md,results.json}.

The output folder is ``figures/<paper>/`` for the committed paper-profile run on the shared questions
and ``runs/<profile>[-<question set>]/<paper>/`` otherwise, both published by the runner; a notebook run
outside the runner (JupyterLab, plain papermill) writes to ``runs/interactive/<paper>/`` (see
:mod:`temporag.notebook.outputs`); one run at a time writes a folder (it is locked while a ``Results`` holds
it).

``results.json`` holds every number the notebook shows, the resolved parameters, the reader model,
library version and data checksums, the per-question predictions and evidence ids, so any figure can
be recomputed or audited, and ``llm_calls``: how many LLM calls the run made and how many failed (a
failed call is not a wrong answer; the runner reports a run whose calls all failed as failed), and
``data_mismatches`` when a data file read differs from its pinned release (the runner names both), and
``artifacts``: the seed and sha256 of every model, graph or calibration the run trained or loaded
(``artifacts_changed``: those made again that differ from the first, also named by the runner).  It is
rewritten atomically after every addition.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

from temporag import __version__
from temporag.cache import atomic_write, data_checksums, heals
from temporag.config import REPO_ROOT, Settings, get_settings, repo_relative, torch_device
from temporag.data.paths import mismatches
from temporag.llm import call_stats
from temporag.methods import artifacts, registry
from temporag.notebook import outputs
from temporag.redact import redact
from temporag.reported import PaperRef
from temporag.retrieval.embed_onnx import check_backend


def portable(text: str) -> str:
    """Machine paths → paths others can read: the repo as '.', its parent as '..', the home as '~'."""
    home = str(Path.home())
    for prefix, short in ((str(REPO_ROOT), "."), (str(REPO_ROOT.parent), ".."), (home, "~")):
        if prefix and prefix != "/" and prefix in text:
            # a whole path only: a one-folder parent ("/ws") must not rewrite a name ("methods/wsgi.py")
            text = re.sub(rf"(?<![\w.~/-]){re.escape(prefix)}(?![\w.~-])", lambda _, s=short: s, text)
    return text


def kit_modules() -> list[str]:
    """The kit's source files this process has imported, relative to the package (``methods/sar/agent.py``):
    the code a run actually ran, so that editing one paper's package leaves the other papers' runs current."""
    package = Path(__file__).resolve().parents[1]
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and file.endswith(".py") and Path(file).resolve().is_relative_to(package):
            found.add(Path(file).resolve().relative_to(package).as_posix())
    return sorted(found)


def _jsonable(value: Any) -> Any:
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (Path, str)):
        return portable(str(value))
    return value


def _cell_formatter(column, float_format: str):
    """How a float column's cells read in tables.md.  A count column that pandas turned into floats
    because one row has no value (None) reads as whole numbers, not '527516.000'; so does a column named
    as a count ("n", "n_…", "failed"), whose values are whole."""
    present = column.dropna()
    whole = len(present) > 0 and bool((present == present.round()).all())
    named_count = str(column.name) in {"n", "failed"} or str(column.name).startswith(("n_", "n "))
    counts = whole and (named_count or len(present) < len(column))

    def cell(v: float) -> str:
        if v != v:
            return ""
        return f"{int(v):,}" if counts else float_format.format(v)

    return cell


ONE_LINE = ("kit_modules",)  # results.json keys written on one line


def write_results_json(path: str | Path, data: dict) -> Path:
    """results.json: readable (indented) except per-question predictions, one compact record per line,
    so that a 954-question run stays small enough to keep in git."""
    predictions = data.get("predictions", {})
    head = {k: v for k, v in data.items() if k not in ("predictions", "outcomes", *ONE_LINE)}
    body = json.dumps(_jsonable(head), indent=2, ensure_ascii=False, default=str)
    for key in (k for k in ONE_LINE if k in data):  # long lists a reader skims: one line each
        line = json.dumps(_jsonable(data[key]), ensure_ascii=False)
        body = body[:-2] + f",\n  {json.dumps(key)}: {line}\n}}"
    parts = []
    for key, records in predictions.items():
        lines = ",\n".join(
            "    " + json.dumps(_jsonable(r), ensure_ascii=False, default=str) for r in records
        )
        parts.append(f"  {json.dumps(key)}: [\n{lines}\n  ]")
    text = body[:-2]
    if "outcomes" in data:  # one compact line per outcome vector ({quid: value})
        vectors = ",\n".join(
            f"    {json.dumps(key)}: {json.dumps(_jsonable(v), ensure_ascii=False)}"
            for key, v in data["outcomes"].items()
        )
        text += ',\n  "outcomes": {' + (f"\n{vectors}\n  " if vectors else "") + "}"
    text += ',\n  "predictions": {\n' + ",\n".join(parts) + "\n  }\n}\n"

    def _write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    return atomic_write(path, _write)


FIGURE_DPI = 150  # the saved PNG's resolution


def in_kernel() -> bool:
    """True inside a Jupyter kernel, where a figure is shown in its cell (never imports IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def show_png(data: bytes, screen_dpi: float) -> None:
    """Display PNG bytes as the cell's image output (one ``image/png`` output; nothing outside a kernel).

    The saved PNG is rendered at ``FIGURE_DPI``; it is shown at the figure's own dpi (the house style's
    screen size), so it stays sharp on high-density screens.  Matplotlib's inline backend is not involved:
    plots.py selects Agg, and the figure is closed after saving, so no backend shows it a second time."""
    if not in_kernel():
        return
    from IPython.display import Image, display

    width = int.from_bytes(data[16:20], "big")  # the PNG header's IHDR width, in pixels
    display(Image(data=data, format="png", width=max(1, round(width * screen_dpi / FIGURE_DPI))))


def _close(fig) -> None:
    """Release a saved figure (pyplot keeps every figure it made open until closed)."""
    import matplotlib.pyplot as plt

    plt.close(fig)


def replaced_split(params: dict) -> str | None:
    """``questions_file:<file name>`` when a run read a question file instead of its split, else None: the
    ``split`` parameter then still holds its default, which the run did not read."""
    given = params.get("questions_file")
    return f"questions_file:{Path(str(given)).name}" if given else None


class Results:
    """Collects one notebook run's outputs in its output folder (``out_dir``, else
    :func:`temporag.notebook.outputs.interactive_output_dir`: the runner always passes its staging folder)."""

    def __init__(
        self,
        name: str,
        params: dict,
        out_dir: str | Path | None = None,
        settings: Settings | None = None,
        data_files: list[str | Path] = (),
    ) -> None:
        self.name = name
        self.settings = settings or get_settings()
        #: ``questions_file:<name>`` when a question file replaced the split (recorded as the split, and
        #: beside every paper number: the paper's was measured on other questions); None otherwise
        self.question_set = replaced_split(params)
        defaults = None
        if "profile" in params:
            found = registry.notebook_path(name)
            defaults = outputs.declared_parameters(found) if found is not None else {}
        # the runner always names the folder (its staging folder); a run outside it goes to its own
        self.dir = Path(out_dir) if out_dir else outputs.interactive_output_dir(name)
        #: where these outputs end up: the runner stages a run and moves it here when it finished
        self.final_dir = outputs.final_dir_for(self.dir)
        if "profile" in params:  # a notebook run: never anything but the committed run under figures/
            outputs.check_output_dir(self.final_dir, params, defaults)
        if self.final_dir == self.dir:  # not staged by the runner: never into a folder the runner publishes
            outputs.check_unpublished(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.final_dir == self.dir:  # a staged run's folder is locked by the runner that staged it
            outputs.acquire(self.dir)  # one writer per folder; released when this process ends
        self.tables_md = self.dir / "tables.md"
        self.tables_md.write_text(
            f"# {name}: tables\n\nGenerated by temporag {__version__}; "
            f"parameters and checksums in results.json.\n",
            encoding="utf-8",
        )
        device = torch_device(self.settings)
        self.data: dict[str, Any] = {
            "notebook": name,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "temporag_version": __version__,
            "python": platform.python_version(),
            "parameters": redact(
                _jsonable({**params, "output_dir": str(self.final_dir)} if "output_dir" in params else params)
                | ({"split": self.question_set} if self.question_set and "split" in params else {})
            ),
            "output_dir": _jsonable(self.final_dir),
            # the data folder as the checkout reaches it (../shared/data), not this machine's path
            "settings": {**self.settings.to_dict(), "data_dir": repo_relative(self.settings.data_dir)},
            "device": device,  # where torch embedded and trained (TEMPORAG_DEVICE)
            "embed_backend": check_backend(self.settings.embed_backend, device),  # as run
            "data_checksums": data_checksums(list(data_files)),
            "metrics": {},
            "tables": {},
            "figures": [],
            "predictions": {},
            "llm_calls": {"calls": 0, "cached": 0, "failed": 0, "last_error": None},
            "elapsed_s": 0.0,  # from this object's creation (the notebook's start) to the last save
        }
        self._llm_before = call_stats()
        self._heals_before = len(heals())  # like the LLM calls: the repairs of this run, from here on
        self._t0 = time.perf_counter()
        self.save()

    def save(self) -> Path:
        now = call_stats()
        self.data["llm_calls"] = {
            **{k: now[k] - self._llm_before[k] for k in ("calls", "cached", "failed")},
            # replies the caller could not parse (prose for a list): counted apart, never cached
            "unparsed": now["unparsed"] - self._llm_before["unparsed"],
            # ... of which a re-run asks again (a served endpoint's): the runner calls the run incomplete
            "unparsed_pending": now["unparsed_pending"] - self._llm_before["unparsed_pending"],
            "last_error": now["last_error"] if now["failed"] > self._llm_before["failed"] else None,
            # the cost of the run's successful calls (cached ones included), read by `temporag costs`
            **{k: now[k] - self._llm_before[k] for k in ("prompt_tokens", "completion_tokens")},
            "model_seconds": round(now["model_seconds"] - self._llm_before["model_seconds"], 3),
        }
        healed = heals()[self._heals_before :]
        if healed:  # cache repairs this kernel made: the runner's summary shows them on the console
            self.data["cache_heals"] = healed
        mismatched = mismatches()
        if mismatched:  # the runner names them in its summary line: they reach the console
            self.data["data_mismatches"] = mismatched
        made = artifacts.used()  # trained / sampled artifacts: seed and sha256 of each one used
        if made:
            self.data["artifacts"] = made
            self.data["artifacts_changed"] = artifacts.changed()  # named in the runner's summary line
        self.data["elapsed_s"] = round(time.perf_counter() - self._t0, 1)
        self.data["kit_modules"] = kit_modules()  # what the run's fingerprint hashes (the runner reads it)
        return write_results_json(self.dir / "results.json", self.data)

    def metric(self, key: str, value: Any, **context: Any) -> Any:
        """Record one shown number (with optional context such as the paper's value or reader model)."""
        self.data["metrics"][key] = _jsonable({"value": value, **context}) if context else _jsonable(value)
        self.save()
        return value

    def compare(
        self,
        key: str,
        kit: float | None,
        paper: PaperRef | None = None,
        *,
        n: int | None = None,
        reader: str | None = None,
        rule: str | None = None,
        note: str = "",
        failed: int | None = None,
        **context: Any,
    ) -> dict[str, Any]:
        """The kit's number beside the paper's, recorded once: the ``results.json`` metric ``key`` and the
        returned table row carry the same kit value, paper value (None where the paper prints none), n,
        reader and scoring rule; ``failed`` (reader calls that failed, left out of the value) is added
        to both when given, so a table shows n answered next to n failed.  Extra ``context`` (a CI, the
        settings it was measured at) goes into the metric only."""
        source = paper.label() if paper is not None else None
        if source is not None and self.question_set:  # the same metric, on other questions than the paper's
            source = f"{source} (on the paper's questions; this run read another question set: "
            source += f"{self.question_set})"
        row = {
            "metric": key,
            "kit": None if kit is None else float(kit),
            "paper": paper.value() if paper is not None else None,
            "n": n,
            "reader": reader,
            "rule": rule,
            "paper_source": source,
            "note": note,
        }
        if failed is not None:
            row["failed"] = int(failed)
        self.metric(
            key, row["kit"], **{k: v for k, v in row.items() if k not in ("metric", "kit")}, **context
        )
        return row

    def table(self, key: str, frame, caption: str = "", float_format: str = "{:.3f}") -> None:
        """Save a table as CSV, append it to tables.md, keep its records in results.json.  Returns nothing,
        so a cell ending with it shows no machine path (the cell shows the frame itself)."""
        csv_path = self.dir / f"{key}.csv"
        frame = frame.copy()
        for col in frame.columns:
            if frame[col].dtype.kind not in "biufcmM":  # text columns (object or pandas str)
                frame[col] = frame[col].map(lambda v: portable(v) if isinstance(v, str) else v)
        frame.to_csv(csv_path, index=False)
        shown = frame.copy()
        for col in shown.columns:
            if shown[col].dtype.kind == "f":
                shown[col] = shown[col].map(_cell_formatter(shown[col], float_format))
        markdown = shown.to_markdown(index=False, disable_numparse=True)
        with open(self.tables_md, "a", encoding="utf-8") as f:
            f.write(f"\n## {key}\n\n{portable(caption)}\n\n{markdown}\n")
        self.data["tables"][key] = {"caption": caption, "records": _jsonable(frame.to_dict(orient="records"))}
        self.save()

    def figure(self, key: str, fig) -> None:
        """Save a matplotlib figure as PNG (for reading) and SVG (for papers/slides), show the PNG in the
        cell when running in a kernel (JupyterLab, papermill, nbconvert), and close the figure.

        Returns None, so a cell ending with this call shows the figure and no machine path under it."""
        png = self.dir / f"{key}.png"
        fig.savefig(png, dpi=FIGURE_DPI, bbox_inches="tight")
        fig.savefig(self.dir / f"{key}.svg", bbox_inches="tight")
        if key not in self.data["figures"]:
            self.data["figures"].append(key)
        self.save()
        show_png(png.read_bytes(), fig.dpi)
        _close(fig)

    def overview(self) -> Any:
        """What this run saved and where, as a short Markdown list: a notebook's last cell shows it (the
        tables and figures themselves are shown where they are made)."""
        from IPython.display import Markdown

        def names(keys) -> str:
            return ", ".join(f"`{k}`" for k in keys) or "none"

        predictions = ", ".join(f"{k} ({len(v):,})" for k, v in self.data["predictions"].items())
        lines = [
            f"**Saved in `{portable(str(self.final_dir))}`:**",
            "",
            f"- `results.json`: {len(self.data['metrics']):,} numbers with the parameters, settings, reader "
            f"and data checksums; per-question records: {predictions or 'none'}",
            f"- `tables.md` and one CSV per table: {names(self.data['tables'])}",
            f"- PNG and SVG per figure: {names(self.data['figures'])}",
        ]
        return Markdown("\n".join(lines))

    def outcomes(self, measure: str, values: dict[str, Any], quids: list | None = None) -> None:
        """Per-question outcome vectors the claims are judged on (``temporag.claims``): ``values`` maps
        each arm to its outcomes, either ``{quid: value}`` or a sequence aligned with ``quids``; stored
        as ``outcomes[f"{measure}/{arm}"] = {quid: value}`` (NaN → null: a failed read), so a verdict can
        be recomputed from results.json without re-running the method.  A str value is kept as it is (a
        digest of the evidence an arm handed the reader: ``temporag.claims.judge.EVIDENCE``)."""
        import math

        store = self.data.setdefault("outcomes", {})
        for arm, vector in values.items():
            pairs = vector.items() if isinstance(vector, dict) else zip(quids, vector, strict=True)
            store[f"{measure}/{arm}"] = {
                str(q): (v if isinstance(v, str) else None if v is None or math.isnan(float(v)) else float(v))
                for q, v in pairs
            }
        self.save()

    def skip_outcomes(self, measure: str, why: str) -> None:
        """Say that this run leaves ``measure`` out on purpose (e.g. no reader in the smoke profile): its
        claims read "not run here" with ``why`` instead of failing as undeclared."""
        self.data.setdefault("outcomes_skipped", {})[measure] = why
        self.save()

    def predictions(self, key: str, records: list[dict]) -> None:
        """Per-question predictions and retrieved evidence ids."""
        self.data["predictions"][key] = _jsonable(records)
        self.save()
