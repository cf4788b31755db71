"""The one retrieval interface: Retrieval validation, QuestionRecord accounting, the default pipeline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fakes import fake_llm

from temporag.methods.base import Method, Retrieval, records_from


@dataclass(frozen=True)
class Q:
    quid: int
    question: str
    answer_type: str = "entity"


class Listed(Method):
    """A method that returns fixed rankings over a tiny 'corpus' of lines."""

    name = "listed"
    evidence = "document_unit"

    def __init__(self, corpus: list[str], rankings: list[list[int]]):
        self.corpus, self.rankings = corpus, rankings

    def retrieve(self, questions, k, *, progress=True):
        return Retrieval([r[:k] for r in self.rankings], np.full(len(questions), 0.5), evidence=self.evidence)

    def evidence_lines(self, ids):
        return [self.corpus[i] for i in ids]


def test_retrieval_validates_lengths_and_kind():
    with pytest.raises(ValueError, match="2 rankings but 1 latencies"):
        Retrieval([[1], [2]], [0.1])
    with pytest.raises(ValueError, match="evidence must be one of"):
        Retrieval([[1]], [0.1], evidence="passage")
    r = Retrieval([[3, 1, 2], [5]], [0.1, 0.2])
    assert [x.tolist() for x in r.top(2)] == [[3, 1], [5]]
    assert r.sizes().tolist() == [3, 1]
    with pytest.raises(ValueError, match="k must be a positive"):
        r.top(0)


def test_pipeline_reads_through_the_one_reader_and_counts_calls():
    corpus = ["Kenya praised Uganda on 2009-03-02", "Kenya praised Rwanda on 2010-01-20", "noise"]
    method = Listed(corpus, [[1, 0, 2], [2]])
    questions = [Q(7, "Who did Kenya praise last?"), Q(8, "FAIL this one")]
    llm = fake_llm("Answer: ['Rwanda', 'Uganda']", fail_when=lambda user: "FAIL" in user)
    records = method.pipeline(questions, llm, k=2, top_k=5, progress=False)
    first, failed = records
    assert first.quid == 7 and first.evidence_ids == [1, 0]
    assert first.answers == ["Rwanda", "Uganda"] and first.answered
    assert (first.llm_calls, first.prompt_tokens, first.completion_tokens) == (1, 100, 10)
    assert first.retrieval_s == 0.5
    # the evidence the reader saw is the method's own lines, in ranked order
    user = llm.backend.seen[0][0][-1]["content"]
    assert user.index("Rwanda on 2010") < user.index("Uganda on 2009") and "noise" not in user
    assert failed.error is not None and failed.answers == [] and not failed.answered
    assert failed.prompt_tokens == 0
    assert "trace" not in first.to_dict()


def test_records_without_reader_have_no_calls():
    r = Retrieval([[4, 2]], [0.01], traces=[{"anchors": [4]}])
    (rec,) = records_from([Q(1, "q")], r)
    assert rec.llm_calls == 0 and rec.answers == [] and rec.trace == {"anchors": [4]}
    with pytest.raises(ValueError, match="2 questions but 1 rankings"):
        records_from([Q(1, "q"), Q(2, "q")], r)
