"""An executed notebook reads clean: no library log chatter under the runner, no frozen progress bars."""

from __future__ import annotations

import logging

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
