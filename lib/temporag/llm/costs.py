"""What a notebook run cost in LLM calls, tokens and time, read from its ``results.json`` — and what the
same notebook will cost when a served model reads every question (``temporag costs``).

Why: the GPU-box runbook has to say how long a served-model paper run takes and how many tokens it
sends, and those numbers must come from the kit's own accounting, not from guesses, so they can be
recomputed whenever a run is re-done.  A run records ``llm_calls`` (calls, tokens and model seconds of
every call, cached ones included); runs from before that accounting are read from what they did record
(a usage summary metric, per-question records with token counts, or one reader record per call with a
tokens-per-question metric), and the table says which source each row comes from.

The projection is arithmetic on the run's own rates: a served paper run reads every question the
notebook scores (``reader_sample`` follows the question count once an endpoint is set), so calls and
tokens scale by ``questions / questions read``; time is calls × seconds per call — this run's, or the
one you measured against your own server (``--seconds-per-call``; the smoke profile run against the
server prints it).  That product is the model's time; a served endpoint gets ``TEMPORAG_LLM_CONCURRENCY``
requests in flight (``--concurrency``, default 16), so the LLM share of the wall time is estimated as
model hours / concurrency — measured at ≥ 0.9 of that ideal against a 64-slot stub server
(bench/bench_llm_concurrency.py), and valid when the server batches that many requests at that s/call
(measure s/call at the concurrency you will run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOURCE_FULL = "llm_calls (every call)"
SOURCE_USAGE = "usage metric"
SOURCE_RECORDS = "per-question records"
SOURCE_READER = "reader records (lower bound)"  # LLM steps that leave no per-question record are missed


@dataclass(frozen=True)
class RunCost:
    """One run's LLM cost as recorded, and the rates the projection scales."""

    notebook: str
    profile: str
    path: str
    reader: str
    questions: int | None  # questions the run scored LLM-free (the projection's default target)
    read: int | None  # questions an LLM read
    calls: int | None  # every call the run asked for, failed ones included (a healthy server answers them)
    failed: int
    tokens: int | None  # prompt + completion of the answered calls
    prompt_tokens: int | None
    model_seconds: float | None  # what the model took for the answered calls (original latency when cached)
    run_seconds: float | None
    source: str

    @property
    def calls_per_question(self) -> float | None:
        return self.calls / self.read if self.calls is not None and self.read else None

    @property
    def answered(self) -> int | None:
        return self.calls - self.failed if self.calls is not None else None

    @property
    def tokens_per_call(self) -> float | None:
        return self.tokens / self.answered if self.tokens is not None and self.answered else None

    @property
    def seconds_per_call(self) -> float | None:
        return (
            self.model_seconds / self.answered if self.model_seconds is not None and self.answered else None
        )

    def projected(
        self, questions: int | None = None, seconds_per_call: float | None = None, concurrency: int = 1
    ) -> dict:
        """Calls, tokens, LLM hours (the model's time) and wall hours (LLM hours / ``concurrency``
        requests in flight: an estimate) when the model reads ``questions`` (default: every question
        the run scored), at ``seconds_per_call`` (default: this run's own)."""
        target = questions if questions is not None else self.questions
        factor = target / self.read if target is not None and self.read else None
        calls = self.calls * factor if factor is not None and self.calls is not None else None
        per_call = self.tokens_per_call
        tokens = calls * per_call if calls is not None and per_call is not None else None
        rate = seconds_per_call if seconds_per_call is not None else self.seconds_per_call
        hours = calls * rate / 3600 if calls is not None and rate is not None else None
        wall = hours / max(1, int(concurrency)) if hours is not None else None
        return {
            "questions": target,
            "calls": calls,
            "tokens": tokens,
            "llm_hours": hours,
            "wall_hours": wall,
            "concurrency": max(1, int(concurrency)),
            "s_per_call": rate,
        }


def _usage_dicts(metrics: dict) -> list[dict]:
    """Usage summaries (``llm.usage_summary``) recorded as metric values."""
    found, needed = [], {"calls", "prompt_tokens", "completion_tokens"}
    for value in metrics.values():
        inner = value.get("value") if isinstance(value, dict) else None
        for candidate in (value, inner):
            if isinstance(candidate, dict) and needed <= set(candidate):
                found.append(candidate)
    return found


def _metric_values(metrics: dict, suffix: str) -> list[float]:
    out = []
    for key, value in metrics.items():
        if key.endswith(suffix):
            number = value.get("value") if isinstance(value, dict) else value
            if isinstance(number, (int, float)):
                out.append(float(number))
    return out


def _metric_reader(data: dict) -> str | None:
    """The reader model older runs name only beside their metrics (the most frequent one)."""
    names: dict[str, int] = {}
    for value in data.get("metrics", {}).values():
        reader = value.get("reader") if isinstance(value, dict) else None
        if isinstance(reader, str) and reader and " " not in reader:  # a model name, not a description
            names[reader] = names.get(reader, 0) + 1
    return max(names, key=names.get) if names else None


def _questions_read(params: dict) -> int | None:
    """Questions an LLM read: the agent sample where a notebook has one (SAR), else the reader sample,
    per data set where the notebook reads several (IA-RAG)."""
    for key in ("agent_sample", "reader_sample"):
        value = params.get(key)
        if isinstance(value, int):
            datasets = params.get("datasets")
            return value * len(datasets) if isinstance(datasets, list) and datasets else value
    return None


def _accounting(data: dict) -> tuple[dict[str, Any], str]:
    """Calls, tokens and model seconds from the best source the run recorded, and that source's name."""
    recorded = data.get("llm_calls") or {}
    metrics = data.get("metrics", {})
    predictions = data.get("predictions", {})
    if "prompt_tokens" in recorded:
        return {
            "calls": recorded["calls"],
            "failed": recorded.get("failed", 0),
            "prompt_tokens": recorded["prompt_tokens"],
            "tokens": recorded["prompt_tokens"] + recorded["completion_tokens"],
            "model_seconds": recorded.get("model_seconds"),
        }, SOURCE_FULL
    usages = _usage_dicts(metrics)
    if usages:
        failed = sum(u.get("errors", 0) for u in usages)
        seconds = sum(u.get("mean_latency_s", 0.0) * (u["calls"] - u.get("errors", 0)) for u in usages)
        return {
            "calls": sum(u["calls"] for u in usages),
            "failed": failed,
            "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
            "tokens": sum(u["prompt_tokens"] + u["completion_tokens"] for u in usages),
            "model_seconds": seconds,
        }, SOURCE_USAGE
    records = [r for rs in predictions.values() for r in rs if isinstance(r, dict) and "prompt_tokens" in r]
    if records:
        return {
            "calls": sum(int(r.get("llm_calls", 1)) for r in records),
            "failed": 0,  # a record's calls are the ones its agent made; failures end its attempt
            "prompt_tokens": sum(int(r["prompt_tokens"]) for r in records),
            "tokens": sum(int(r["prompt_tokens"]) + int(r.get("completion_tokens", 0)) for r in records),
            "model_seconds": sum(float(r.get("reader_s", 0.0)) for r in records),
        }, SOURCE_RECORDS
    reads = [r for key, rs in predictions.items() if "reader" in key for r in rs if isinstance(r, dict)]
    if reads:
        per_call = _metric_values(metrics, "/tokens_per_question")
        seconds = _metric_values(metrics, "/seconds_per_question")
        failed = sum(r.get("error") is not None for r in reads)
        answered = len(reads) - failed
        return {
            "calls": len(reads),
            "failed": failed,
            "prompt_tokens": None,
            "tokens": round(answered * sum(per_call) / len(per_call)) if per_call else None,
            "model_seconds": answered * sum(seconds) / len(seconds) if seconds else None,
        }, SOURCE_READER
    nothing = {"prompt_tokens": None, "tokens": None, "model_seconds": None}
    if "calls" in recorded:
        return {
            **nothing,
            "calls": recorded["calls"],
            "failed": recorded.get("failed", 0),
        }, "llm_calls (calls only)"
    return {**nothing, "calls": None, "failed": 0}, "nothing recorded"


def read_run(path: str | Path) -> RunCost:
    """One ``results.json`` → its :class:`RunCost` (a clear error for a file that is not one)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable results.json ({exc})") from exc
    if not isinstance(data, dict) or "parameters" not in data:
        raise ValueError(f"{path}: no 'parameters' — not a notebook's results.json")
    params = data["parameters"]
    found, source = _accounting(data)
    questions = params.get("sample_size")
    if not isinstance(questions, int):  # older runs record None for "every question": count them
        sizes = [len(rs) for rs in data.get("predictions", {}).values() if isinstance(rs, list)]
        questions = max(sizes) if sizes else None
    runtime = data.get("elapsed_s") or (data.get("metrics", {}).get("runtime_s") or {})
    settings = data.get("settings", {})
    return RunCost(
        notebook=str(data.get("notebook", path.parent.name)),
        profile=str(params.get("profile", "?")),
        path=str(path),
        reader=str(params.get("llm_model") or settings.get("llm_model") or _metric_reader(data) or "?"),
        questions=questions,
        read=_questions_read(params),
        calls=found["calls"],
        failed=found["failed"],
        tokens=found["tokens"],
        prompt_tokens=found["prompt_tokens"],
        model_seconds=found["model_seconds"],
        run_seconds=runtime.get("value") if isinstance(runtime, dict) else float(runtime),
        source=source,
    )


def _fmt(value: float | None, pattern: str = "{:,.0f}") -> str:
    return "—" if value is None else pattern.format(value)


def cost_table(
    runs: list[RunCost],
    questions: int | None = None,
    seconds_per_call: float | None = None,
    concurrency: int = 1,
) -> list[dict[str, str]]:
    """One row per run: what it recorded, and the projection for a served model reading every question
    with ``concurrency`` requests in flight."""
    rows = []
    for run in runs:
        p = run.projected(questions, seconds_per_call, concurrency)
        rows.append(
            {
                "notebook": run.notebook,
                "profile": run.profile,
                "reader": run.reader,
                "questions read": _fmt(run.read),
                "LLM calls": _fmt(run.calls),
                "failed": _fmt(run.failed),
                "calls/question": _fmt(run.calls_per_question, "{:.2f}"),
                "tokens/call": _fmt(run.tokens_per_call),
                "s/call": _fmt(run.seconds_per_call, "{:.2f}"),
                "run s": _fmt(run.run_seconds),
                "source": run.source,
                "served: questions": _fmt(p["questions"]),
                "served: calls": _fmt(p["calls"]),
                "served: tokens": _fmt(p["tokens"]),
                "served: LLM h": _fmt(p["llm_hours"], "{:.2f}"),
                f"served: wall h at {p['concurrency']}": _fmt(p["wall_hours"], "{:.2f}"),
            }
        )
    return rows


def default_paths(figures_dir: Path) -> list[Path]:
    return sorted(figures_dir.glob("*/results.json"))
