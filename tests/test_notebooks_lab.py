"""JupyterLab, the other half of the kit's use (issue 15, item 6): ``make lab`` starts as root, and in a
real headless browser JupyterLab opens the tour notebook, runs its cells in the smoke profile in the live
kernel with no error output, and its progress bar renders as a widget.

The file sorts after test_notebooks.py on purpose: that test's smoke run of the tour warms the caches
(embeddings of MultiTQ's facts, the reader's answers) this one reads, so it takes a minute or two.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browser import browser_page, chromium_path

REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT_S = 900  # the tour with warm caches takes 1-2 minutes; a cold embedding cache much longer


def _make_lab_line(tmp_path: Path) -> str:
    """The command ``make lab`` runs (with setup treated as done)."""
    stamp = tmp_path / "stamp"
    stamp.touch()
    out = subprocess.run(
        ["make", "-n", "-s", "-C", str(REPO), "lab", f"STAMP={stamp}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [line] = [ln for ln in out.splitlines() if "jupyter lab" in ln]
    return line.strip()


def test_make_lab_allows_root_only_when_root(tmp_path):
    line = _make_lab_line(tmp_path)
    assert line.startswith(".venv/bin/jupyter lab notebooks/")
    assert ("--allow-root" in line) == (os.getuid() == 0)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, f"jupyter lab exited: {log.read_text()[-3000:]}"
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except OSError:
            assert time.monotonic() < deadline, f"jupyter lab did not answer: {log.read_text()[-3000:]}"
            time.sleep(1)


CELLS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const describe = o => o.output_type === 'error' ? `error ${o.ename}: ${o.evalue}`
    : [o.output_type, ...Object.keys(o.data || {})].join(' ');
  const cells = panel.content.widgets.map((c, index) => ({index, type: c.model.type,
    count: c.model.type === 'code' ? c.model.executionCount : 0,
    outputs: c.model.type === 'code' ? c.model.outputs.toJSON().map(describe) : []}));
  return {kernel: kernel ? kernel.status : 'none', cells};
}"""
WIDGET = "application/vnd.jupyter.widget-view+json"
# every text the kernel sent, from the notebook model: JupyterLab lays out only the cells near the viewport
# (a windowed notebook), so the DOM of a page scrolled to the end need not hold the first cells' outputs
MODEL_TEXT_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .flatMap(c => c.model.type === 'code' ? c.model.outputs.toJSON() : [])
  .map(o => [].concat(o.text || (o.data && o.data['text/plain']) || []).join('')).join('\\n')"""


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.browser
def test_jupyterlab_runs_the_tour_in_a_browser(tmp_path, shared_data):
    chromium_path()  # skip (or fail in CI) before starting anything
    root = tmp_path / "lab"
    root.mkdir()
    out_dir = tmp_path / "tour-out"
    nb = nbformat.read(REPO / "notebooks" / "00_tour.ipynb", as_version=4)
    [params] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert 'profile = "smoke"' in params.source
    params.source = re.sub(r"^output_dir = None", f"output_dir = {str(out_dir)!r}", params.source, flags=re.M)
    nbformat.write(nb, root / "00_tour.ipynb")

    make_line = _make_lab_line(tmp_path)
    flags = make_line.split("jupyter lab notebooks/", 1)[1].split()  # what `make lab` adds (--allow-root)
    port, token = _free_port(), secrets.token_hex(16)
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"
    cmd = [
        jupyter,
        "lab",
        str(root),
        *flags,
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True",
        "--ServerApp.open_browser=False",
    ]
    env = {
        **os.environ,
        "TEMPORAG_DATA": str(shared_data),
        "TEMPORAG_THREADS": "1",
        "PYTHONPATH": str(REPO / "lib"),
        # the reference embedder, as the notebook smoke tests (the int8 run's DOM once lacked the tour's
        # "profile=smoke" line: the page had been scrolled to the end; that line is now read from the model)
        "TEMPORAG_EMBED_BACKEND": "torch",
    }
    log = tmp_path / "lab.log"
    server = subprocess.Popen(cmd, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    errors: list[str] = []
    try:
        _wait_for_server(f"{base}/api/status?token={token}", server, log)
        with browser_page(errors) as page:
            page.goto(f"{base}/lab/tree/00_tour.ipynb?token={token}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=180_000)
            page.wait_for_function(
                "() => { const p = window.jupyterapp.shell.currentWidget; "
                "return p && p.sessionContext && p.sessionContext.session && "
                "p.sessionContext.session.kernel && p.sessionContext.session.kernel.status === 'idle'; }",
                timeout=180_000,
            )
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while True:
                state = page.evaluate(CELLS_JS)
                done = all(c["count"] is not None for c in state["cells"]) and state["kernel"] == "idle"
                failed = [o for c in state["cells"] for o in c["outputs"] if o.startswith("error")]
                if done or failed:
                    break
                assert time.monotonic() < deadline, f"cells still running after {RUN_TIMEOUT_S} s: {state}"
                time.sleep(3)
            page.screenshot(path=str(tmp_path / "lab.png"), full_page=False)
            assert failed == [], failed
            assert sum(c["type"] == "code" for c in state["cells"]) >= 8
            # the reader's tqdm bar is a widget in the kernel's output; scrolled into view, it renders as one
            with_widget = [c["index"] for c in state["cells"] if any(WIDGET in o for o in c["outputs"])]
            assert with_widget, state
            scroll = f"p => p.content.scrollToItem({with_widget[0]}, 'center')"
            page.evaluate(f"() => ({scroll})(window.jupyterapp.shell.currentWidget)")
            bar = page.wait_for_selector(
                ".jp-OutputArea-output .widget-hprogress", state="visible", timeout=60_000
            )
            box = bar.evaluate_handle("e => e.closest('.widget-hbox')").as_element()
            assert "100%" in box.inner_text()  # the bar finished: every reader call answered
            page.screenshot(path=str(tmp_path / "lab-widget.png"), full_page=False)
            texts = page.locator(".jp-OutputArea-output").all_inner_texts()
            assert not [t for t in texts if "Error displaying widget" in t or "Traceback" in t]
            assert "profile=smoke: 40 of" in page.evaluate(MODEL_TEXT_JS)
    finally:
        try:
            urllib.request.urlopen(
                urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST"), timeout=10
            )
        except OSError:
            pass
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
    data = json.loads((out_dir / "results.json").read_text())  # written by the live kernel
    assert data["parameters"]["profile"] == "smoke"
    assert data["metrics"]["kg/facts"]["value"] == 461_329
    assert 0.0 <= data["metrics"]["semantic_reader/hits@1_strict"]["value"] <= 1.0
