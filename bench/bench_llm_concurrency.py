"""Concurrent LLM requests against a simulated batching GPU server, no GPU needed.

The stub (:mod:`temporag.llm.stub`) answers every request in a fixed service time with a fixed number of
slots, the way vLLM serves up to ``--max-num-seqs`` sequences at once.  Two parts:

1. 1,000 calls at concurrency 1 / 8 / 32 / 64 (0.4 s a call, 64 slots), each as its efficiency: the ideal
   wall time N·t / min(C, slots) divided by the measured one (target ≥ 0.9 at 32).  Concurrency 1 makes 50
   calls (1,000 would take 400 s) and its figure is for those 50 — extrapolated, the same ratio.
2. The LLM side of three paper methods through their own code paths, sequential (C = 1) vs concurrent
   (C = 16, the default), on a documented subset at 0.1 s a call (2 shared cores here): SAR's agent
   (policy, decomposer, verifier turns per question, ``SAR.pipeline``), TECQA's three-prompt LLM parser
   then the reader (``LLMParser.parse_many``, ``readers.read_many``), IA-RAG's T1-T5 classifier then the
   reader (``classify_llm``, ``read_many``).  The stub's replies are scripted (SAR: SEARCH, FINISH, VALID),
   so each question takes the same number of calls in both runs; the two runs' answers are checked equal.

Every call goes through the real client: a fresh sqlite cache per run, HTTP on 127.0.0.1, the OpenAI SDK;
part 1's stub runs in its own process, as a GPU server would.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from temporag.config import get_settings
from temporag.llm import LLM
from temporag.llm.stub import StubServer, agent_reply

SERVICE_S, SLOTS, N_CALLS = 0.4, 64, 1000
N_SEQUENTIAL = 50
PROFILE_SERVICE_S, PROFILE_CONCURRENCY = 0.1, 16
N_SAR, N_TECQA, N_IA_RAG = 60, 120, 150


def client(url: str, concurrency: int, cache_dir: Path) -> LLM:
    settings = get_settings(cache_dir=cache_dir, llm_base_url=url, llm_concurrency=concurrency)
    return LLM(settings.replace(llm_model="stub"))


def stub_reply(prompt: str) -> str:
    """SAR's turns (:func:`agent_reply`), a JSON type for the classifier and a list for everything else
    (parsers, readers)."""
    return agent_reply(prompt, otherwise=lambda p: '{"type": "T4"}' if "JSON" in p else "['Iran']")


def calls_at(url: str, concurrency: int, n: int, tmp: Path) -> float:
    llm = client(url, concurrency, tmp / f"c{concurrency}")
    prompts = [[{"role": "user", "content": f"call {concurrency}-{i}"}] for i in range(n)]
    t0 = time.perf_counter()
    out = llm.chat_many(prompts, progress=False)
    wall = time.perf_counter() - t0
    assert all(r.ok for r in out), [r.error for r in out if not r.ok][:3]
    return wall


@contextlib.contextmanager
def stub_process(service_s: float, slots: int) -> Iterator[str]:
    """The stub in its own process, as a GPU server is (the client's threads do not share its GIL)."""
    cmd = [sys.executable, "-m", "temporag.llm.stub", "--service", str(service_s), "--slots", str(slots)]
    proc = subprocess.Popen([*cmd, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        found = re.search(r"(http://\S+/v1)", line)
        if not found:
            raise RuntimeError(f"the stub server did not start: {line!r}")
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def part_one(tmp: Path) -> None:
    print(f"stub server: {SERVICE_S} s a call, {SLOTS} slots; efficiency = ideal N·t/min(C, slots) / wall")
    print(f"{'concurrency':>11} {'calls':>6} {'wall s':>8} {'ideal s':>8} {'efficiency':>10}")
    with stub_process(SERVICE_S, SLOTS) as url:
        calls_at(url, 8, 16, tmp / "warm")  # import and connect once
        for c in (1, 8, 32, 64):
            n = N_SEQUENTIAL if c == 1 else N_CALLS
            wall = calls_at(url, c, n, tmp)
            ideal = n * SERVICE_S / min(c, SLOTS)
            note = f"  (extrapolated to {N_CALLS}: {wall * N_CALLS / n:.0f} s)" if n != N_CALLS else ""
            print(f"{c:>11} {n:>6} {wall:>8.1f} {ideal:>8.1f} {ideal / wall:>10.2f}{note}")


def part_two(tmp: Path) -> None:
    from temporag.answer.readers import read_many
    from temporag.data import multitq
    from temporag.methods.ia_rag.classify import classify_llm
    from temporag.methods.sar import SAR
    from temporag.methods.tecqa.parser import make_parser
    from temporag.methods.workspace import KGWorkspace

    kg = multitq.load_kg()
    questions = multitq.load_questions()
    workspace = KGWorkspace(kg)
    offline = make_parser(kg, "offline")

    def sar(llm, qs):
        return [r.answers for r in SAR(kg, workspace=workspace).pipeline(qs, llm, progress=False)]

    def tecqa(llm, qs):
        texts = [q.question for q in qs]
        parsed = make_parser(kg, "llm", llm=llm, offline=offline).parse_many(texts, progress=False)
        # the reader sees what the parse found (its retrieval is not this benchmark's concern)
        evidence = [[kg.entity_labels[c.main]] if c.main is not None else [] for c in parsed]
        return [r.answers for r in read_many(llm, texts, evidence, progress=False)]

    def ia_rag(llm, qs):
        texts = [q.question for q in qs]
        types = classify_llm(texts, llm)
        reads = read_many(llm, texts, [[f"type {t}"] for t in types], progress=False)
        return [(t, r.answers) for t, r in zip(types, reads)]

    print(
        f"\npaper methods' LLM side: stub {PROFILE_SERVICE_S} s a call, {SLOTS} slots; sequential (C=1) vs "
        f"concurrent (C={PROFILE_CONCURRENCY})"
    )
    head = ("method", "questions", "calls", "seq s", "conc s", "speed-up", "same")
    print("{:>8} {:>9} {:>6} {:>7} {:>7} {:>8} {:>5}".format(*head))
    for name, run, n in (("SAR", sar, N_SAR), ("TECQA", tecqa, N_TECQA), ("IA-RAG", ia_rag, N_IA_RAG)):
        qs = questions[:n]
        walls, answers, calls = {}, {}, 0
        with StubServer(service_s=PROFILE_SERVICE_S, slots=SLOTS, reply=stub_reply) as server:
            for c in (1, PROFILE_CONCURRENCY):
                llm = client(server.url, c, tmp / f"{name}-{c}")
                t0 = time.perf_counter()
                with contextlib.redirect_stderr(io.StringIO()):  # the methods' own progress bars
                    answers[c] = run(llm, qs)
                walls[c] = time.perf_counter() - t0
            calls = server.total_requests // 2
        same = answers[1] == answers[PROFILE_CONCURRENCY]
        speedup = walls[1] / walls[PROFILE_CONCURRENCY]
        print(
            f"{name:>8} {n:>9} {calls:>6} {walls[1]:>7.1f} {walls[PROFILE_CONCURRENCY]:>7.1f} "
            f"{speedup:>7.1f}x {'yes' if same else 'NO':>5}"
        )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
        part_one(Path(tmp))
        part_two(Path(tmp))


if __name__ == "__main__":
    main()
