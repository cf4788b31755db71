"""Hermetic stand-ins for the LLM and the encoder (HippoRAG habit: tests inject fakes, never a real model).

``ScriptedBackend`` replies with a function of the last user message (or one fixed reply), raises
queued failures first, and counts calls (``params`` lists each call's parameters); ``fake_llm`` wraps
it in the kit's real client with no cache, so retries, parsing and token accounting are the production
code paths.  ``FixedEncoder`` and ``BagOfWordsEncoder`` stand in for the sentence embedder where a test
needs to know every vector.  Every fake a test uses lives here.
"""

from __future__ import annotations

from collections.abc import Callable


class ScriptedBackend:
    model_name = "fake-model"
    endpoint = "fake://local"

    def __init__(
        self,
        reply: str | Callable[[str], str] = "['unknown']",
        *,
        prompt_tokens: int = 100,
        completion_tokens: int = 10,
        finish_reason: str = "stop",
        fail_when: Callable[[str], bool] | None = None,
        failures: list[BaseException] | None = None,
        usage: bool = True,
    ) -> None:
        self.reply = reply
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.finish_reason = finish_reason
        self.fail_when = fail_when
        self.failures = list(failures or [])
        self.usage = usage
        self.calls = 0
        self.seen: list[tuple[list[dict], dict]] = []

    @property
    def params(self) -> list[dict]:
        return [params for _, params in self.seen]

    def complete(self, messages, params):
        self.calls += 1
        self.seen.append((messages, params))
        if self.failures:
            raise self.failures.pop(0)
        user = messages[-1]["content"]
        if self.fail_when is not None and self.fail_when(user):
            raise ValueError(f"the fake backend refuses this prompt: {user[:60]!r}")
        text = self.reply(user) if callable(self.reply) else self.reply
        out = {
            "model": self.model_name,
            "choices": [
                {"message": {"role": "assistant", "content": text}, "finish_reason": self.finish_reason}
            ],
        }
        if self.usage:
            total = self.prompt_tokens + self.completion_tokens
            out["usage"] = {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": total,
            }
        return out


def fake_llm(reply: str | Callable[[str], str] = "['unknown']", **kwargs):
    """The kit's LLM client over a ScriptedBackend, no cache; ``.backend`` is the fake (calls, seen)."""
    from temporag.llm import LLM

    return LLM(backend=ScriptedBackend(reply, **kwargs), cache=False, retry_base_delay=0.001)


class FixedEncoder:
    """Every text gets the same vector: a ranking then rests on what the method adds (graph, dates)."""

    def __init__(self, vector):
        import numpy as np

        self.vector = np.asarray(vector, dtype=np.float32)

    def encode(self, texts, progress=False):
        import numpy as np

        return np.tile(self.vector, (len(texts), 1))


class BagOfWordsEncoder:
    """Unit bag-of-words vectors over ``vocab`` (the kit's tokenizer, normalised forms): enough to test
    grounding logic without a model."""

    def __init__(self, vocab):
        self.vocab = {w: i for i, w in enumerate(vocab)}

    def encode(self, texts, progress=False):
        import numpy as np

        from temporag.linking import tokenize

        out = np.zeros((len(texts), len(self.vocab)), dtype=np.float32)
        for i, t in enumerate(texts):
            for tok in tokenize(t):
                j = self.vocab.get(tok.norm)
                if j is not None:
                    out[i, j] = 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def server_llm(tmp_path, url, *, model="test-model", timeout=5.0, retries=3, breaker=3, concurrency=1):
    """The kit's client of the server at ``url``, cached under ``tmp_path``, backing off 1 ms; one request
    at a time unless ``concurrency`` (the order-sensitive tests)."""
    from temporag.config import get_settings
    from temporag.llm import LLM

    settings = get_settings(
        cache_dir=tmp_path / "cache",
        llm_base_url=url,
        llm_timeout=timeout,
        llm_max_retries=retries,
        llm_breaker=breaker,
        llm_concurrency=concurrency,
    ).replace(llm_model=model)
    return LLM(settings, retry_base_delay=0.001)


class CountingEndpoint:
    """A fake OpenAI-compatible server on 127.0.0.1 that answers ``answer to <prompt>`` and counts, per
    prompt, the requests it received and the answers it delivered.  A request for ``hold`` is not answered
    until ``release`` is set (``held`` is set when it arrives): a test kills a batch while a call is in
    flight.  ``with CountingEndpoint() as server:`` serves on ``server.url`` (an /v1 root)."""

    def __init__(self, hold: str | None = None) -> None:
        import json
        import threading
        from collections import Counter
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.hold = hold
        self.held, self.release = threading.Event(), threading.Event()
        self.requests: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, payload: dict) -> bool:
                body = json.dumps(payload).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return True
                except OSError:  # the caller died (a killed batch)
                    return False

            def do_GET(self):
                self._send({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                prompt = body["messages"][-1]["content"]
                with lock:
                    server.requests[prompt] += 1
                if prompt == server.hold and not server.release.is_set():
                    server.held.set()
                    server.release.wait(120)
                    return  # never answered: its caller was killed meanwhile
                message = {"role": "assistant", "content": f"answer to {prompt}"}
                reply = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "fake-model"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
                }
                if self._send(reply):
                    with lock:
                        server.answered[prompt] += 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> CountingEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def tiny_kg(entities, relations, facts):
    """A TemporalKG of hand-written (subject, relation, object, ISO day) facts, one day per fact, for
    tests that need to know every fact by heart."""
    import numpy as np

    from temporag.data.tkg import TemporalKG
    from temporag.timeutil import day_of

    ent, rel = {e: i for i, e in enumerate(entities)}, {r: i for i, r in enumerate(relations)}

    def column(i: int, table: dict) -> np.ndarray:
        return np.asarray([table[f[i]] for f in facts], dtype=np.int32)

    t = np.asarray([day_of(f[3]) for f in facts], dtype=np.int32)
    subjects, predicates, objects = column(0, ent), column(1, rel), column(2, ent)
    return TemporalKG(subjects, predicates, objects, t, t.copy(), list(entities), list(relations))


def tiny_notebook(path, parameters: str, *cells: str) -> None:
    """A notebook at ``path`` whose tagged parameters cell holds ``parameters`` and whose other code cells
    are ``cells``: what the runner's tests execute in place of a paper's notebook (seconds, not minutes)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(parameters)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, *(nbformat.v4.new_code_cell(source) for source in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


# A notebook that writes half its results, optionally sleeps (TEST_SLEEP, not a parameter, so the
# fingerprint is the same whether it sleeps or not), then completes them; value 13 makes it fail.
SLOW = """
import json, os, pathlib, time
out = pathlib.Path(output_dir); out.mkdir(parents=True, exist_ok=True)
(out / "results.json").write_text(json.dumps({"value": value, "complete": False}))
pathlib.Path(os.environ.get("TEST_PID_FILE", os.devnull)).write_text(str(os.getpid()))
time.sleep(float(os.environ.get("TEST_SLEEP", "0")))
if value == 13:
    raise ValueError("unlucky value")
(out / "results.json").write_text(json.dumps({"value": value, "complete": True}))
(out / "tables.md").open("a").write(f"## table of run {value}\\n")
"""


def slow_dirs(tmp_path) -> dict:
    """A notebook folder holding ``slow.ipynb`` (:data:`SLOW`, parameter ``value``) and the runner's three
    folders under ``tmp_path``: what the runner's reliability tests hand ``reproduce``."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(nbs / "slow.ipynb", 'profile = "smoke"\nvalue = 1\noutput_dir = None', SLOW)
    return {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
