"""An executed notebook reads clean: no library log chatter under the runner, no frozen progress bars."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import nbformat

from temporag.notebook.session import quiet_logs
from temporag.run.executed import drop_progress_bars


def test_progress_bars_leave_the_executed_copy_and_everything_else_stays():
    nb = nbformat.v4.new_notebook()
    widget = nbformat.v4.new_output(
        "display_data",
        data={"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "embedding: 0%"},
    )
    frozen = "Loading weights:   0%|          | 0/103 [00:00<?]\r"
    bar = nbformat.v4.new_output("stream", name="stderr", text=frozen)
    warning = nbformat.v4.new_output("stream", name="stderr", text="WARNING temporag.cache: healed chunk 3\n")
    table = nbformat.v4.new_output("execute_result", data={"text/plain": "recall@20  0.921"})
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [widget, bar, warning, table]
    nb.cells = [cell, nbformat.v4.new_markdown_cell("# text")]
    assert drop_progress_bars(nb) == 2
    assert [o.get("text") or o["data"]["text/plain"] for o in nb.cells[0].outputs] == [
        "WARNING temporag.cache: healed chunk 3\n",
        "recall@20  0.921",
    ]


def test_under_the_runner_only_warnings_are_logged(monkeypatch):
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    levels = {name: logging.getLogger(name).level for name in ("temporag", "faiss", "sentence_transformers")}
    try:
        quiet_logs(headless=False)  # a person in JupyterLab: the kit's INFO lines, no library chatter
        assert logging.getLogger("temporag").level == logging.NOTSET  # the kernel's root: INFO
        assert logging.getLogger("faiss.loader").getEffectiveLevel() == logging.WARNING
        quiet_logs(headless=True)  # the runner: warnings only, no transformers bars
        assert logging.getLogger("temporag.retrieval.embed").getEffectiveLevel() == logging.WARNING
        assert logging.getLogger("sentence_transformers.base.model").getEffectiveLevel() == logging.WARNING
        import os

        assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


FIGURES = Path(__file__).resolve().parents[1] / "figures"
_NOISE = re.compile(r"^(DEBUG|INFO) |\r|\d+%\|")  # a library's INFO line, a progress bar's frame


def _noise(executed: Path) -> list[str]:
    nb = nbformat.read(executed, as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data:
                found.append(f"cell {i}: a progress widget")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                found += [
                    f"cell {i}: {line[:80]!r}"
                    for line in out.get("text", "").splitlines(True)
                    if _NOISE.search(line)
                ]
    return found


def test_committed_runs_made_under_the_quiet_runner_read_clean():
    """A committed run that records the kit modules it imported (``kit_modules``) was made by the runner
    that silences library logs and drops progress bars (both came with the layered kit): its executed copy
    shows neither."""
    checked = 0
    for results in sorted(FIGURES.glob("*/results.json")):
        if "kit_modules" not in json.loads(results.read_text()):
            continue
        for executed in results.parent.glob("*.ipynb"):
            assert _noise(executed) == [], f"{executed}: library chatter in a committed run"
            checked += 1
    assert checked >= 1, "no committed run was made by the quiet runner"


def test_the_noise_check_finds_an_info_line_and_a_bar(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="INFO faiss.loader: Loading faiss.\n"),
        nbformat.v4.new_output("stream", name="stderr", text="Batches:  40%|####      | 2/5\r"),
        nbformat.v4.new_output("stream", name="stderr", text="WARNING temporag.llm: reply unparsed\n"),
    ]
    nb.cells = [cell]
    path = tmp_path / "run.ipynb"
    nbformat.write(nb, path)
    assert len(_noise(path)) == 2
