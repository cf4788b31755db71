"""A run with missing LLM answers (failed calls, a served model's unparsed replies) is published as
*incomplete*, never current: the next plain ``reproduce`` runs it again and sends only the missing calls.

A real papermill run of a tiny notebook against the kit's stub OpenAI-compatible server, which fails
some prompts (500s and prose) until the test "fixes" it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import tiny_notebook

from temporag.batch.book import Run, _run_facts
from temporag.batch.index import find_runs
from temporag.llm.stub import StubServer
from temporag.run.runner import RESUME, _llm_verdict, reproduce
from temporag.run.summary import summary

# Six questions through the kit's client and Results: the stub's 500s are failed calls, its prose
# for a list an unparsed reply (not cached: a re-run asks again).
PARTIAL = """
from temporag.config import get_settings
from temporag.llm import LLM
from temporag.notebook.results import Results
res = Results("partial", {"profile": profile, "output_dir": output_dir}, out_dir=output_dir)
settings = get_settings(llm_base_url=url, llm_max_retries=0, llm_breaker=100).replace(llm_model="stub")
replies = LLM(settings).chat_many(
    [[{"role": "user", "content": f"q{i}"}] for i in range(6)],
    accept=lambda text: text.startswith("["),
    progress=False,
)
res.metric("answered", sum(r.error is None and not r.unparsed for r in replies))
"""


def _notebook(path: Path) -> None:
    """A tiny notebook (:func:`fakes.tiny_notebook`) with this file's parameters."""
    tiny_notebook(path, 'profile = "smoke"\nurl = None\noutput_dir = None', PARTIAL)


@pytest.mark.slow
def test_partial_run_is_incomplete_and_the_same_command_completes_it(tmp_path, tmp_cache):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "partial.ipynb")
    dirs = {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
    broken = {"on": True}

    def fault(prompt: str, n: int) -> str | None:
        if not broken["on"]:
            return None
        return {"q3": "500", "q4": "500", "q5": "I think the answer is Iraq."}.get(prompt)

    with StubServer(service_s=0.0, reply=lambda prompt: "['x']", fault=fault) as server:
        extra = {"url": server.url}
        [first] = reproduce(["partial"], extra=extra, **dirs)
        assert first.status == "incomplete"
        assert first.shown == "incomplete (2/6 LLM calls failed; 1 unparsed reply)"
        assert RESUME in first.note and "could not be parsed" in first.note
        folder = dirs["runs_dir"] / "smoke" / "partial"
        stamp = json.loads((folder / "_run.json").read_text())
        assert stamp["status"] == "incomplete"  # published (the best numbers there are), marked
        assert json.loads((folder / "results.json").read_text())["metrics"]["answered"] == 3
        assert "incomplete (2/6 LLM calls failed; 1 unparsed reply)" in summary([first])
        [entry] = find_runs([dirs["runs_dir"]])
        assert entry.status == "incomplete" and RESUME in entry.note  # the index marks it
        facts = _run_facts(Run("partial", folder, None, {}, stamp), "files")
        assert "<b>Incomplete run</b>" in facts  # so does the book

        broken["on"] = False  # the server is fixed; the same command, no --force
        [second] = reproduce(["partial"], extra=extra, **dirs)
        assert (second.status, second.counts, second.note) == ("ok", "", "")
        # answers received came from the cache: only the three missing calls were sent again
        assert dict(server.requests) == {"q0": 1, "q1": 1, "q2": 1, "q3": 2, "q4": 2, "q5": 2}
        data = json.loads((folder / "results.json").read_text())
        assert data["metrics"]["answered"] == 6
        calls = data["llm_calls"]
        assert (calls["calls"], calls["cached"], calls["failed"], calls["unparsed"]) == (6, 3, 0, 0)
        assert json.loads((folder / "_run.json").read_text())["status"] == "ok"

        [third] = reproduce(["partial"], extra=extra, **dirs)
        assert third.status == "skipped"  # complete and current now
        assert server.total_requests == 9


def test_verdict_of_missing_answers(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"llm_calls": {"calls": 6, "failed": 2, "last_error": "boom\nmore"}}))
    verdict, note = _llm_verdict(path)
    assert verdict == "incomplete"
    assert note == f"2 of 6 LLM calls failed (left out of the reader metrics) — last error: boom; {RESUME}"
    path.write_text(
        json.dumps({"llm_calls": {"calls": 6, "failed": 0, "unparsed": 2, "unparsed_pending": 2}})
    )
    assert _llm_verdict(path) == (
        "incomplete",
        f"2 replies of the served model could not be parsed (not cached); {RESUME}",
    )
    # the embedded model's unparsed replies are its deterministic answer, not a missing one
    path.write_text(
        json.dumps({"llm_calls": {"calls": 6, "failed": 0, "unparsed": 2, "unparsed_pending": 0}})
    )
    assert _llm_verdict(path) == ("", "")


def test_the_note_of_an_incomplete_run_is_printed_once_and_cut_at_a_word(tmp_path, monkeypatch, capsys):
    from temporag import cli
    from temporag.batch.jobs import Job
    from temporag.run.runner import RunOutcome
    from temporag.run.summary import clip_note

    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "partial.ipynb")
    error = "the endpoint said " + " ".join(f"word{i}" for i in range(80))  # a long last error
    note = f"2 of 6 LLM calls failed (left out of the reader metrics) — last error: {error}; {RESUME}"
    outcome = RunOutcome("partial", "incomplete", 1.0, None, output_dir=tmp_path / "p", note=note)
    monkeypatch.setattr(Job, "run_here", lambda job, on_cell=None, on_progress=None: outcome)
    argv = ["reproduce", "-n", "partial", "--notebook-dir", str(nbs), "--runs-dir", str(tmp_path / "runs")]
    assert cli.main(argv) == 1
    out, err = capsys.readouterr()
    assert (out + err).count("2 of 6 LLM calls failed") == 1  # the summary's note line only
    [line] = [x for x in out.splitlines() if x.startswith("    note: ")]
    assert line.endswith(f"…; {RESUME}") and len(line) <= len("    note: ") + 300
    cut = line.split("…")[0].rsplit(" ", 1)[1]
    assert cut in error.split()  # a whole word, not one cut in the middle
    assert clip_note("short; " + RESUME) == "short; " + RESUME and clip_note("x " * 10) == "x " * 10
