"""Prompt and generation speed of the embedded reader (SmolLM2-135M, llama-cpp-python) per setting.

Why: every smoke notebook's time is dominated by reader calls, and a reader call's time by prompt
evaluation (prefill).  This measures, on this machine's cores:

1. the prompt lengths the notebooks really send: ``prompt_tokens`` of every embedded-reader reply in the
   LLM cache (``TEMPORAG_CACHE/llm.sqlite``; a fixed set when the cache holds none), as a distribution;
2. for each setting tried (threads, ``n_batch`` / ``n_ubatch``, flash attention, KV cache type), prefill
   and generation tokens/s at the cache's median, 90th percentile and longest prompt, from llama.cpp's own
   counters (``llama_perf_context``: the time llama.cpp itself spent evaluating), beside the wall time
   the caller saw, and llama-bench's two standard figures (pp512: a 512-token prompt; tg128: 128
   generated tokens) through the same library;
3. whether each setting's greedy replies equal today's setting's token for token (the kit keeps only a
   setting whose replies are identical, so no smoke number can move).

Prompts are MultiTQ facts verbalised the way the readers show evidence ("s r o on YYYY-MM-DD"), cut to
each length in the model's own tokens.  ``--quick`` measures two settings at one length (a smoke check).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import sqlite3
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

from temporag.config import get_settings
from temporag.data import multitq
from temporag.data._read import read_tsv
from temporag.data.paths import data_file
from temporag.llm.backends import DEFAULT_N_CTX, find_embedded_gguf, llama_settings

N_GEN = 32  # greedy tokens per reply: what the readers ask for, about
FALLBACK_LENGTHS = (600, 1400, 2424)  # when the cache holds no embedded reply yet


@dataclass(frozen=True)
class Setting:
    name: str
    threads: int
    n_batch: int
    n_ubatch: int
    flash_attn: bool = False
    type_kv: str = "f16"


def settings_to_try(threads: int) -> list[Setting]:
    today = Setting("today (batch 512, ubatch 512)", threads, 512, 512)
    return [
        today,
        replace(today, name="ubatch 256", n_ubatch=256),
        replace(today, name="batch 2048, ubatch 1024", n_batch=2048, n_ubatch=1024),
        replace(today, name="batch 2048, ubatch 2048", n_batch=2048, n_ubatch=2048),
        replace(today, name="flash attention", flash_attn=True),
        replace(today, name="flash attention, ubatch 2048", flash_attn=True, n_batch=2048, n_ubatch=2048),
        replace(today, name="flash attention, KV q8_0", flash_attn=True, type_kv="q8_0"),
        replace(today, name="1 thread", threads=1),
    ]


def cached_prompt_lengths(cache_dir: Path) -> list[int]:
    """prompt_tokens of every reply the embedded reader gave, from the LLM cache."""
    path = cache_dir / "llm.sqlite"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT response FROM responses WHERE endpoint LIKE 'embedded%'").fetchall()
    finally:
        conn.close()
    lengths = []
    for (response,) in rows:
        try:
            lengths.append(int(json.loads(response)["prompt_tokens"]))
        except (ValueError, KeyError, TypeError):
            continue
    return sorted(lengths)


def evidence_text(n_lines: int = 4000) -> str:
    """MultiTQ facts as the readers verbalise them (the first lines of the KG file, read the kit's way)."""
    lines = []
    for _, (s, r, o, t) in read_tsv(data_file(multitq.KG_FILE, "multitq"), 4, "MultiTQ's KG"):
        lines.append(f"{s.replace('_', ' ')} {r.replace('_', ' ')} {o.replace('_', ' ')} on {t}")
        if len(lines) >= n_lines:
            break
    return "Question: Who negotiated with Iran last?\nFacts:\n" + "\n".join(lines)


def load(model_path: Path, setting: Setting):
    import llama_cpp

    kv = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0}[setting.type_kv]
    return llama_cpp.Llama(
        model_path=str(model_path), n_ctx=DEFAULT_N_CTX, n_threads=setting.threads,
        n_threads_batch=setting.threads, n_batch=setting.n_batch, n_ubatch=setting.n_ubatch,
        flash_attn=setting.flash_attn, type_k=kv, type_v=kv, verbose=False,
    )


def timed_reply(llama, tokens: list[int], n_gen: int) -> dict:
    """One greedy reply from an empty context: llama.cpp's own prefill / generation counters and the wall."""
    import llama_cpp

    llama.reset()
    llama_cpp.llama_perf_context_reset(llama.ctx)
    t0 = time.perf_counter()
    out = llama.create_completion(tokens, max_tokens=n_gen, temperature=0.0, top_k=1, seed=0)
    wall = time.perf_counter() - t0
    perf = llama_cpp.llama_perf_context(llama.ctx)
    return {
        "prefill_tps": perf.n_p_eval / max(perf.t_p_eval_ms, 1e-9) * 1000,
        "gen_tps": perf.n_eval / max(perf.t_eval_ms, 1e-9) * 1000 if perf.n_eval else float("nan"),
        "wall_s": wall,
        "text": out["choices"][0]["text"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two settings, one length (a smoke check)")
    parser.add_argument("--threads", type=int, default=None, help="default: TEMPORAG_THREADS")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure to this file")
    args = parser.parse_args()
    kit = get_settings()
    threads = args.threads or kit.threads
    model_path = find_embedded_gguf()

    lengths_seen = cached_prompt_lengths(kit.cache_dir)
    if lengths_seen:
        q = statistics.quantiles(lengths_seen, n=10)
        targets = sorted({int(statistics.median(lengths_seen)), int(q[-1]), max(lengths_seen)})
        print(f"prompts the notebooks sent (LLM cache, {len(lengths_seen)} embedded replies): "
              f"p10 {int(q[0])}, median {int(statistics.median(lengths_seen))}, p90 {int(q[-1])}, "
              f"max {max(lengths_seen)} tokens")
    else:
        targets = list(FALLBACK_LENGTHS)
        print(f"no embedded replies in {kit.cache_dir / 'llm.sqlite'}: fixed lengths {targets}")
    targets = [min(t, DEFAULT_N_CTX - N_GEN - 8) for t in targets]
    settings = settings_to_try(threads)
    if args.quick:
        settings, targets = settings[:2], targets[-1:]

    import llama_cpp

    print(f"model {model_path.name}; {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"llama.cpp: {ctypes.string_at(llama_cpp.llama_print_system_info()).decode().strip()}")
    print(f"the kit's reader uses: {llama_settings()}")
    text = evidence_text()
    rows, reference = [], {}
    for setting in settings:
        llama = load(model_path, setting)
        all_tokens = llama.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        figures = {"setting": setting.name}
        same = True
        for n in targets:
            r = timed_reply(llama, all_tokens[:n], N_GEN)
            figures[f"prefill {n}"] = r["prefill_tps"]
            figures[f"gen {n}"] = r["gen_tps"]
            figures[f"wall {n}"] = r["wall_s"]
            reference.setdefault(n, r["text"])
            same &= r["text"] == reference[n]
        pp = timed_reply(llama, all_tokens[:512], 1)
        tg = timed_reply(llama, all_tokens[:8], 128)
        figures["pp512"], figures["tg128"] = pp["prefill_tps"], tg["gen_tps"]
        figures["same replies"] = same
        rows.append(figures)
        llama.close()
        shown = (f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items())
        print(f"  {setting.name}: " + ", ".join(list(shown)[1:]), flush=True)

    base = rows[0]
    print("\n| setting | " + " | ".join(f"prefill t/s @{n}" for n in targets)
          + f" | gen t/s @{targets[-1]} | pp512 | tg128 | prefill vs today | same replies |")
    print("|---" * (len(targets) + 6) + "|")
    for r in rows:
        speedup = r[f"prefill {targets[-1]}"] / base[f"prefill {targets[-1]}"]
        print(f"| {r['setting']} | " + " | ".join(f"{r[f'prefill {n}']:.0f}" for n in targets)
              + f" | {r[f'gen {targets[-1]}']:.0f} | {r['pp512']:.0f} | {r['tg128']:.0f} | {speedup:.2f}x"
              + f" | {'yes' if r['same replies'] else 'no'} |")
    if args.json:
        args.json.write_text(json.dumps({"lengths": targets, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
