"""Hermetic stand-ins for the LLM (HippoRAG habit: tests inject fakes, never a real model).

``ScriptedBackend`` replies with a function of the last user message (or one fixed reply) and counts
calls; ``fake_llm`` wraps it in the kit's real client with no cache, so retries, parsing and token
accounting are the production code paths.
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
    ) -> None:
        self.reply = reply
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.finish_reason = finish_reason
        self.fail_when = fail_when
        self.calls = 0
        self.seen: list[tuple[list[dict], dict]] = []

    def complete(self, messages, params):
        self.calls += 1
        self.seen.append((messages, params))
        user = messages[-1]["content"]
        if self.fail_when is not None and self.fail_when(user):
            raise ValueError("the fake backend refuses this prompt")
        text = self.reply(user) if callable(self.reply) else self.reply
        return {
            "model": self.model_name,
            "choices": [
                {"message": {"role": "assistant", "content": text}, "finish_reason": self.finish_reason}
            ],
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens},
        }


def fake_llm(reply: str | Callable[[str], str] = "['unknown']", **kwargs):
    """The kit's LLM client over a ScriptedBackend, no cache; ``.backend`` is the fake (calls, seen)."""
    from temporag.llm import LLM

    return LLM(backend=ScriptedBackend(reply, **kwargs), cache=False, retry_base_delay=0.001)
