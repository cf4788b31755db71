"""The packaged SmolLM2 GGUF behind llama-cpp-python's OpenAI-compatible server (the ``serve`` extra).

``python -m temporag.llm.serve --port 8765`` serves the embedded reader's own model on 127.0.0.1, so the
endpoint path (``TEMPORAG_LLM_BASE_URL``, requests in flight, the API's token counts) can be run and checked
on a laptop.  One default differs between llama-cpp-python's two front ends: its server decodes a request
that names no ``repeat_penalty`` with 1.1, its in-process ``create_chat_completion`` (the embedded reader)
with 1.0.  The kit's client sends only OpenAI's own fields (temperature 0, max_tokens, stop), so against the
plain server the same prompts give other replies (all 4 differed on reader-style prompts; with 1.1 passed
to the in-process model they were equal).  This launcher starts the server with 1.0 as that default, so the
served model answers exactly what the embedded reader answers (``tests/test_served.py``).
"""

from __future__ import annotations

import argparse
import sys

from temporag.llm.backends import DEFAULT_N_CTX, find_embedded_gguf

EMBEDDED_REPEAT_PENALTY = 1.0  # llama-cpp-python's Llama.create_chat_completion default


def decode_like_the_embedded_reader() -> None:
    """Make the server's requests default to the in-process reader's ``repeat_penalty``."""
    from llama_cpp.server import types

    for request in (types.CreateCompletionRequest, types.CreateChatCompletionRequest):
        request.model_fields["repeat_penalty"].default = EMBEDDED_REPEAT_PENALTY
        request.model_rebuild(force=True)
    probe = types.CreateChatCompletionRequest(messages=[{"role": "user", "content": "x"}])
    if probe.repeat_penalty != EMBEDDED_REPEAT_PENALTY:  # a llama-cpp-python this launcher does not know
        raise RuntimeError(
            f"could not set the server's default repeat_penalty to {EMBEDDED_REPEAT_PENALTY} "
            f"(it is {probe.repeat_penalty}): its replies would differ from the embedded reader's"
        )


def server_argv(host: str, port: int, threads: int, alias: str | None) -> list[str]:
    """llama-cpp-python's server arguments for the packaged GGUF, with the embedded reader's context."""
    gguf = find_embedded_gguf()
    return [
        "--model", str(gguf),
        "--model_alias", alias or gguf.stem,
        "--n_ctx", str(DEFAULT_N_CTX),
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        "--host", host,
        "--port", str(port),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m temporag.llm.serve",
        description="serve the packaged SmolLM2 GGUF as an OpenAI-compatible endpoint (the serve extra)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of the model (default 1)")
    parser.add_argument("--alias", default=None, help="the model's name on /v1/models (default: the file's)")
    args = parser.parse_args(argv)
    try:
        decode_like_the_embedded_reader()  # before the app is imported: its routes take the request types
        from llama_cpp.server.__main__ import main as serve
    except ImportError as exc:
        sys.exit(
            f"the serve extra is not installed ({exc}): pip install -e '.[serve]' (or `make serve`, which "
            "sets it up)"
        )
    sys.argv = ["llama_cpp.server", *server_argv(args.host, args.port, max(1, args.threads), args.alias)]
    serve()


if __name__ == "__main__":
    main()
