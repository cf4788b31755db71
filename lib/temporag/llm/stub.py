"""An OpenAI-compatible stub server on 127.0.0.1 that behaves like a batching GPU server: every request
takes a fixed service time and at most ``slots`` are served at once (vLLM's ``--max-num-seqs``).

For the concurrency benchmark (``bench/bench_llm_concurrency.py``), the tests, and a rehearsal of a served
run without a GPU::

    python -m temporag.llm.stub --service 0.4 --slots 64 --port 8000
    TEMPORAG_LLM_BASE_URL=http://127.0.0.1:8000/v1 TEMPORAG_LLM_MODEL=stub temporag run sar

``reply(prompt) -> str`` answers (default: ``['unknown']``); ``fault(prompt, n) -> str | None`` injects
faults into the ``n``-th request of a prompt (1-based): ``"429"`` (with ``Retry-After``), ``"500"``,
``"hang"`` (never answers within a client's timeout) or any other string, sent as the reply's text.
It counts requests per prompt, so a test can show that none was sent twice.  :func:`agent_reply` scripts
SAR's agent turns, for a stub (or a fake client) that drives a whole agent run.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubServer:
    """``with StubServer(service_s=0.4, slots=64) as server:`` serves on ``server.url`` (a /v1 root)."""

    def __init__(
        self,
        *,
        service_s: float = 0.4,
        slots: int = 64,
        reply: Callable[[str], str] | None = None,
        fault: Callable[[str, int], str | None] | None = None,
        retry_after_s: float = 0.2,
        hang_s: float = 30.0,
        port: int = 0,
        model: str = "stub",
    ) -> None:
        self.service_s, self.slots, self.model = service_s, slots, model
        self.reply = reply or (lambda prompt: "['unknown']")
        self.fault = fault
        self.retry_after_s, self.hang_s = retry_after_s, hang_s
        self.requests: Counter[str] = Counter()
        self.received: list[tuple[str, str]] = []  # (path, Authorization header) of every request
        self.in_flight = self.peak_in_flight = 0
        self._slots = threading.BoundedSemaphore(max(1, slots))
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one connection per client thread
            # headers and body go out as two writes: with Nagle's algorithm on, the body waits for the
            # client's delayed ACK (40 ms a call measured here); servers such as uvicorn set TCP_NODELAY too
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                body = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (a timeout)
                    pass

            def _seen(self) -> None:
                with server._lock:
                    server.received.append((self.path, self.headers.get("Authorization", "")))

            def do_GET(self):
                self._seen()
                self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})

            def do_POST(self):
                self._seen()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                prompt = str(body["messages"][-1]["content"])
                with server._lock:
                    server.requests[prompt] += 1
                    n = server.requests[prompt]
                action = server.fault(prompt, n) if server.fault else None
                if action == "429":
                    error = {"error": {"message": "rate limited", "type": "rate_limit"}}
                    self._send(429, error, {"Retry-After": f"{server.retry_after_s:g}"})
                    return
                if action == "500":
                    self._send(500, {"error": {"message": "internal error", "type": "server_error"}})
                    return
                if action == "hang":
                    server._stop.wait(server.hang_s)
                    return
                with server._slots:
                    with server._lock:
                        server.in_flight += 1
                        server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                    time.sleep(server.service_s)
                    with server._lock:
                        server.in_flight -= 1
                text = action if action is not None else server.reply(prompt)
                message = {"role": "assistant", "content": text}
                self._send(
                    200,
                    {
                        "id": "stub",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", server.model),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {
                            "prompt_tokens": len(prompt.split()),
                            "completion_tokens": len(text.split()),
                            "total_tokens": len(prompt.split()) + len(text.split()),
                        },
                    },
                )

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False
            request_queue_size = 256  # many clients connect at once

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def total_requests(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def agent_reply(prompt: str, otherwise: Callable[[str], str] = lambda prompt: "?") -> str:
    """A scripted SAR agent: SEARCH for China's visits, then FINISH with the first observed fact's subject;
    the decomposer's triple and the verifier's VALID; ``otherwise(prompt)`` for any other prompt."""
    if prompt.startswith("Question:"):
        return 'Thought: I search.\nAction: SEARCH("China visit", ANYTIME, none)'
    if prompt.startswith("Observation:"):
        first = prompt.splitlines()[1][3:] if prompt.count("\n") else "none"
        return f"Thought: found it.\nAction: FINISH({first.split(' Make')[0]})"
    if "Request:" in prompt:
        return "(China; Make a visit; ?)"
    if "Proposed answer:" in prompt:
        return "VALID"
    return otherwise(prompt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", type=float, default=0.4, help="seconds every request takes")
    parser.add_argument("--slots", type=int, default=64, help="requests served at once")
    parser.add_argument("--port", type=int, default=8000, help="0: any free port (the first line says which)")
    args = parser.parse_args()
    with StubServer(service_s=args.service, slots=args.slots, port=args.port) as server:
        what = f"{args.slots} slots, {args.service} s a request"
        print(f"serving on {server.url} ({what}); Ctrl-C stops", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
