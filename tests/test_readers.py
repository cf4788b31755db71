"""Reader prompts and the ranked-answer parser, on the kinds of replies real LLMs give."""

from __future__ import annotations

import pytest
from fakes import ScriptedBackend

from temporag.answer.readers import (
    ReaderResult,
    build_reader_prompt,
    parse_ranked_answers,
    read_answers,
    read_many,
    reader_max_tokens,
)
from temporag.config import get_settings
from temporag.llm import LLM

EVIDENCE = [
    "Iran Make statement Barack Obama on 2015-03-04",
    "Iraq Host a visit John Kerry on 2015-03-05",
    "China Express intent to cooperate Iran on 2015-02-01",
]

UGLY_OUTPUTS = [
    # (raw LLM output, expected ranked answers)
    ("['Iran', 'Iraq']", ["Iran", "Iraq"]),
    ('["Iran", "Iraq", "Iran"]', ["Iran", "Iraq"]),
    (
        "Based on the facts, the answers are: ['Iran', 'Iraq'].\nThese countries were mentioned.",
        ["Iran", "Iraq"],
    ),
    ("```python\n['Iran', 'Iraq']\n```", ["Iran", "Iraq"]),
    ('```json\n{"answers": ["Iran", "Iraq"]}\n```', ["Iran", "Iraq"]),
    ("{'answers': ['Barack Obama']}", ["Barack Obama"]),
    ('{"answer": "2015-03-04"}', ["2015-03-04"]),
    ("1. Iran\n2. Iraq\n3. Syria", ["Iran", "Iraq", "Syria"]),
    ("Here are the possible answers:\n1) Iran.\n2) Iraq.\n", ["Iran", "Iraq"]),
    ("- Iran\n- Iraq\n* Syria", ["Iran", "Iraq", "Syria"]),
    ("Answer: Iran", ["Iran"]),
    ("Answers:\n1. **Iran** - it made the statement on that date\n2. Iraq", ["Iran", "Iraq"]),
    ("Answers: Iran, Iraq and Syria", ["Iran", "Iraq", "Syria"]),
    ("['Iran', 'Ira", ["Iran"]),  # cut off by max_tokens: the partial item is dropped
    ('[\n  "Iran",\n  "Ira', ["Iran"]),
    ("['Iran', 'Iraq'", ["Iran", "Iraq"]),  # closing bracket lost, items complete
    ("", []),
    ("   \n ", []),
    ("[]", []),
    ("The answer is Iran.", ["Iran"]),
    ("Iran", ["Iran"]),
    ("\u201cIran\u201d", ["Iran"]),
    ("['Côte d'Ivoire', 'Iran']", ["Côte d'Ivoire", "Iran"]),  # apostrophe breaks the literal
    ("[Iran, Iraq]", ["Iran", "Iraq"]),
    ("['China', 'Iran', 'China']", ["China", "Iran"]),
    ("['Police (Nigeria)', 'Citizen (Nigeria)']", ["Police (Nigeria)", "Citizen (Nigeria)"]),
    ("<think>Kerry went to Baghdad.</think>['Iraq']", ["Iraq"]),
    ("Answers:\n\n['Iran', 'Iraq']", ["Iran", "Iraq"]),
    ("['Iran', 'Iraq']\n\nExplanation: Iran made a statement [fact 1].", ["Iran", "Iraq"]),
    ("Final Answer: 2015-03-04.", ["2015-03-04"]),
    ("After reviewing the facts, I think it was Iran (fact 1).\nSo the answer is Iran.", ["Iran"]),
    ("According to [fact 1], the answer is Iran.", ["Iran"]),
    ("[1] Iran\n[2] Iraq", ["Iran", "Iraq"]),
    ("Answers: Iran [1, 3]", ["Iran"]),
    ("['1. Iran', '2. Iraq']", ["Iran", "Iraq"]),
    ("[2015, 2016]", ["2015", "2016"]),
    ("['IRAN', 'iran', 'Iraq']", ["IRAN", "Iraq"]),  # dedupe ignores case, keeps the first spelling
    ("['None']", []),
    ("I cannot determine the answer because none of the facts mention that event at all, sorry.", []),
    ("Answers: ['2015-03-04', '2015-03']", ["2015-03-04", "2015-03"]),
]


@pytest.mark.parametrize(("raw", "expected"), UGLY_OUTPUTS)
def test_parse_ranked_answers(raw, expected):
    assert parse_ranked_answers(raw) == expected


def test_parse_respects_top_k_and_none():
    assert parse_ranked_answers("['a', 'b', 'c', 'd']", top_k=2) == ["a", "b"]
    assert parse_ranked_answers(None) == []


def test_prompt_shape_and_content():
    messages = build_reader_prompt("Who made a statement?", EVIDENCE, answer_type="entity", top_k=5)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "at most 5" in messages[0]["content"]
    # the worked example's answer is itself parseable — the format we ask for
    assert parse_ranked_answers(messages[2]["content"]) == ["Russia", "Ukraine"]
    user = messages[-1]["content"]
    assert user.count("Who made a statement?") == 2
    assert "1. Iran Make statement Barack Obama on 2015-03-04" in user
    assert "3. China Express" in user
    assert "names copied exactly" in user


def test_prompt_variants():
    timed = build_reader_prompt("When?", EVIDENCE, answer_type="time", example=True)
    assert "2014-07-02" in timed[2]["content"]  # a date example for time questions
    assert "YYYY-MM-DD" in timed[-1]["content"]
    bare = build_reader_prompt("When?", [], example=False, instructions="Answer the rewritten question.")
    assert [m["role"] for m in bare] == ["system", "user"]
    assert "none were retrieved" in bare[-1]["content"]
    assert bare[0]["content"].endswith("Answer the rewritten question.")
    custom = build_reader_prompt("How many?", EVIDENCE, answer_type="count of events")
    assert "count of events" in custom[-1]["content"]


def _question(prompt: str) -> str:
    return prompt.splitlines()[0].removeprefix("Question: ")


def reader_backend(replies: dict[str, str], finish_reason: str = "stop") -> ScriptedBackend:
    """The shared scripted backend replying by question text; it refuses questions containing FAIL."""
    return ScriptedBackend(
        lambda prompt: replies.get(_question(prompt), "[]"),
        finish_reason=finish_reason,
        fail_when=lambda prompt: "FAIL" in _question(prompt),
    )


@pytest.fixture()
def reader_llm(tmp_path):
    backend = reader_backend(
        {"Who spoke?": "Sure! ['Iran', 'Iraq'", "Who hosted Kerry?": "1. Iraq\n2. Iran"}
    )
    settings = get_settings(cache_dir=tmp_path / "cache", llm_max_retries=0)
    return LLM(settings, backend=backend, retry_base_delay=0.001)


def test_read_answers(reader_llm):
    result = read_answers(reader_llm, "Who spoke?", EVIDENCE, answer_type="entity", top_k=1)
    assert isinstance(result, ReaderResult) and result.ok
    assert result.answers == ["Iran"]
    assert result.raw_text == "Sure! ['Iran', 'Iraq'"
    assert result.response.prompt_tokens == 100


def test_read_many_records_failures(reader_llm):
    questions = ["Who spoke?", "FAIL please", "Who hosted Kerry?", "Unknown?"]
    results = read_many(reader_llm, questions, [EVIDENCE] * 4, answer_types="entity", progress=False)
    assert [r.question for r in results] == questions
    assert results[0].answers == ["Iran", "Iraq"]
    assert not results[1].ok and "refuses this prompt" in results[1].error and results[1].answers == []
    assert results[2].answers == ["Iraq", "Iran"]
    assert results[3].ok and results[3].answers == []
    assert reader_llm.backend.calls == 4
    again = read_many(reader_llm, questions, [EVIDENCE] * 4, progress=False, answer_types="entity")
    assert [r.response.cached for r in again if r.ok] == [True, True, True]


def test_read_many_checks_lengths(reader_llm):
    with pytest.raises(ValueError, match="pair up"):
        read_many(reader_llm, ["a", "b"], [EVIDENCE], progress=False)
    with pytest.raises(ValueError, match="answer types"):
        read_many(reader_llm, ["a"], [EVIDENCE], answer_types=["entity", "time"], progress=False)


def test_reader_budget_grows_with_k():
    assert reader_max_tokens(1) < reader_max_tokens(10) <= 512


@pytest.mark.parametrize(
    ("reply", "finish_reason", "expected"),
    [
        # the "]" stop sequence ended a complete list: it is put back before parsing
        ("['Côte d'Ivoire', 'Iran'", "stop", ["Côte d'Ivoire", "Iran"]),
        ("Iran [fact 1", "stop", ["Iran"]),
        # the token budget cut the list: the partial last item is dropped
        ("['Iran', 'Ira", "length", ["Iran"]),
    ],
)
def test_reader_stops_at_closing_bracket(tmp_path, reply, finish_reason, expected):
    backend = reader_backend({"Q?": reply}, finish_reason=finish_reason)
    client = LLM(get_settings(cache_dir=tmp_path), backend=backend)
    result = read_answers(client, "Q?", EVIDENCE, top_k=3)
    assert backend.params[0]["stop"] == ["]"]
    assert backend.params[0]["max_tokens"] == reader_max_tokens(3)
    assert result.answers == expected
    assert result.raw_text == reply


def test_read_many_takes_a_papers_prompt_and_answer_cleanup(reader_llm):
    """A paper's own prompt and clean-up go through the one reader: same call, parsing and failure
    accounting; only the messages and the answers' tidying are the paper's."""
    seen_types = []

    def prompt(question, lines, answer_type):
        seen_types.append(answer_type)
        return [{"role": "user", "content": f"Question: {question}\n" + "\n".join(lines)}]

    def tidy(answers, answer_type):
        return [a.upper() for a in answers] if answer_type == "entity" else answers

    questions = ["Who spoke?", "FAIL please", "Who hosted Kerry?"]
    results = read_many(
        reader_llm,
        questions,
        [EVIDENCE] * 3,
        answer_types=["entity", "entity", "time"],
        stop=None,
        max_tokens=77,
        progress=False,
        prompt_builder=prompt,
        postprocess=tidy,
    )
    assert seen_types == ["entity", "entity", "time"]
    assert results[0].answers == ["IRAN", "IRAQ"]  # parsed ("Sure! ['Iran', 'Iraq'"), then tidied
    assert results[1].error is not None and results[1].answers == []
    assert results[2].answers == ["Iraq", "Iran"]  # time answers left as parsed
    assert reader_llm.backend.params[0] == {
        "temperature": 0.0,
        "max_tokens": 77,
        "stop": None,
        "json_mode": False,
    }
