"""JupyterLab, the other half of the kit's use: ``make lab`` starts as root, and in a
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
from collections.abc import Iterator
from contextlib import contextmanager
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


def _make_lab_lines(tmp_path: Path, *overrides: str) -> list[str]:
    """Every command ``make lab`` runs after setup (with setup treated as done)."""
    stamp = tmp_path / "stamp"
    stamp.touch()
    out = subprocess.run(
        ["make", "-n", "-s", "-C", str(REPO), "lab", f"STAMP={stamp}", *overrides],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('echo "JupyterLab: '))
    return [ln.strip() for ln in lines[start:]]


def test_make_lab_allows_root_only_when_root(tmp_path):
    line = _make_lab_line(tmp_path)
    assert line.startswith(f".venv/bin/jupyter lab --ServerApp.root_dir='{REPO}' --port=8888 ")
    assert "--ServerApp.port_retries=0" in line  # the port the SSH hint names, or a clear error
    assert ("--allow-root" in line) == (os.getuid() == 0)


def test_make_lab_opens_the_checkout_and_says_how_to_reach_it_over_ssh(tmp_path):
    lines = _make_lab_lines(tmp_path, "LAB_PORT=8123")
    script = "\n".join(ln for ln in lines if ln.startswith("echo "))
    said = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    user = os.environ.get("USER") or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout
    user = user.strip()
    assert f"JupyterLab: {REPO} on port 8123 of {socket.gethostname()}" in said
    assert re.search(rf"From a laptop: ssh -N -L 8123:localhost:8123 {re.escape(user)}@\S+", said), said
    assert "http://localhost:8123/lab?token=" in said
    [lab] = [ln for ln in lines if "jupyter lab" in ln]
    assert "--port=8123" in lab and f"--ServerApp.root_dir='{REPO}'" in lab
    # notebooks/ saved as git keeps them: running one in Lab leaves `git status` clean
    assert "--ContentsManager.pre_save_hook=temporag.run.nbstrip.lab_pre_save" in lab


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


@contextmanager
def _lab(
    root: Path, tmp_path: Path, shared_data: Path, extra_env: dict[str, str]
) -> Iterator[tuple[str, str]]:  # noqa: E501
    """JupyterLab serving ``root`` with the flags ``make lab`` adds (--allow-root as root) on a free port;
    yields (base URL, token) and shuts it down."""
    make_line = _make_lab_line(tmp_path)
    flags = [f for f in make_line.split() if f == "--allow-root" or f.startswith("--ContentsManager.")]
    port, token = _free_port(), secrets.token_hex(16)
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"
    cmd = [
        jupyter,
        "lab",
        f"--ServerApp.root_dir={root}",
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
        **extra_env,
    }
    log = tmp_path / "lab.log"
    server = subprocess.Popen(cmd, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(f"{base}/api/status?token={token}", server, log)
        yield base, token
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


def _open_notebook(page, base: str, token: str, path: str) -> None:
    page.goto(f"{base}/lab/tree/{path}?token={token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=180_000)
    page.wait_for_function(
        "() => { const p = window.jupyterapp.shell.currentWidget; "
        "return p && p.sessionContext && p.sessionContext.session && "
        "p.sessionContext.session.kernel && p.sessionContext.session.kernel.status === 'idle'; }",
        timeout=180_000,
    )


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
    assert 'profile: str = "smoke"' in params.source
    params.source, n = re.subn(
        r"^output_dir(: [^=]+)? = None", f"output_dir = {str(out_dir)!r}", params.source, flags=re.M
    )
    assert n == 1
    nbformat.write(nb, root / "00_tour.ipynb")

    env = {
        # the reference embedder, as the notebook smoke tests (the tour's "profile=smoke" line is read from
        # the notebook model, not the DOM, which may be scrolled past it)
        "TEMPORAG_EMBED_BACKEND": "torch",
    }
    errors: list[str] = []
    with _lab(root, tmp_path, shared_data, env) as (base, token):
        with browser_page(errors) as page:
            _open_notebook(page, base, token, "00_tour.ipynb")
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
    data = json.loads((out_dir / "results.json").read_text())  # written by the live kernel
    # every figure the run saved is shown in its cell in JupyterLab, once
    assert sum("image/png" in o for c in state["cells"] for o in c["outputs"]) == len(data["figures"]) == 2
    assert data["parameters"]["profile"] == "smoke"
    assert data["metrics"]["kg/facts"]["value"] == 461_329
    assert 0.0 <= data["metrics"]["semantic_reader/hits@1_strict"]["value"] <= 1.0


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.browser
def test_a_notebook_run_and_saved_in_jupyterlab_leaves_git_status_clean(tmp_path, shared_data):
    """A checkout served as `make lab` serves it: open the tour in JupyterLab, run its first cells, save.
    The page still shows the outputs, the file is the one in git, and `git status` is clean (without the
    pre-save hook JupyterLab writes outputs, execution counts, the kernelspec's display name and the
    kernel's language_info into it: tests/test_nbstrip.py)."""
    chromium_path()
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(REPO / ".gitignore", repo / ".gitignore")
    nb = nbformat.read(REPO / "notebooks" / "00_tour.ipynb", as_version=4)
    [params] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    out_dir = tmp_path / "tour-out"
    params.source, n = re.subn(
        r"^output_dir(: [^=]+)? = None", f"output_dir = {str(out_dir)!r}", params.source, flags=re.M
    )
    assert n == 1
    (repo / "notebooks").mkdir()
    nbformat.write(nb, repo / "notebooks" / "00_tour.ipynb")
    committed = (repo / "notebooks" / "00_tour.ipynb").read_text()
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "notebook")
    first_code = next(i for i, c in enumerate(nb.cells) if "start(" in c.source)  # loads questions, prints

    errors: list[str] = []
    with _lab(repo, tmp_path, shared_data, {}) as (base, token):
        with browser_page(errors) as page:
            _open_notebook(page, base, token, "notebooks/00_tour.ipynb")
            page.evaluate(
                f"() => {{ const p = window.jupyterapp.shell.currentWidget; p.content.activeCellIndex = "
                f"{first_code + 1}; return window.jupyterapp.commands.execute('notebook:run-all-above'); }}"
            )
            deadline = time.monotonic() + 600
            while True:
                state = page.evaluate(CELLS_JS)
                ran = [c for c in state["cells"][: first_code + 1] if c["type"] == "code"]
                if all(c["count"] for c in ran) and state["kernel"] == "idle":
                    break
                assert time.monotonic() < deadline, state
                time.sleep(2)
            assert not [o for c in ran for o in c["outputs"] if o.startswith("error")], ran
            saved_path = repo / "notebooks" / "00_tour.ipynb"
            before = saved_path.stat().st_mtime_ns
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
            deadline = time.monotonic() + 60
            while saved_path.stat().st_mtime_ns == before:
                assert time.monotonic() < deadline, "JupyterLab did not save the notebook"
                time.sleep(1)
    assert [c for c in state["cells"] if c["outputs"]], state  # the open notebook still shows its outputs
    assert saved_path.read_text() == committed
    assert _git(repo, "status", "--porcelain", "--ignored") == "!! notebooks/.ipynb_checkpoints/\n"
