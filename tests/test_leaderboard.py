"""The leaderboard's scoring, tables and figure: values on a hand-made timeline, the headline table's
three columns read from committed-run files (and its clear failure when one is missing), the gathered
paper-vs-code table, and the TimeR4 rule that the leaderboard never trains."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fakes import tiny_kg

from temporag.answer.template_reader import TemplateReader, analyse
from temporag.data.multitq import Question
from temporag.data.tkg import TemporalKG
from temporag.leaderboard import report, scores
from temporag.question.parsing import Constraints
from temporag.reported import lookup

ENTITIES = ["Iraq", "Iran", "Kenya", "France"]
RELATIONS = ["Make_a_visit"]
FACTS = [  # subject, relation, object, day
    ("Iran", "Make_a_visit", "Iraq", "2005-01-10"),  # 0
    ("Kenya", "Make_a_visit", "Iraq", "2005-02-15"),  # 1
    ("France", "Make_a_visit", "Iraq", "2005-03-20"),  # 2
]


@pytest.fixture(scope="module")
def tiny() -> TemporalKG:
    return tiny_kg(ENTITIES, RELATIONS, FACTS)


def _question(quid, text, answers, qtype, qlabel="Single", answer_type="entity"):
    return Question(quid, text, tuple(answers), answer_type, "day", qtype, qlabel)


def _parse(kg, text):
    return Constraints(text, (0,), (0,), 0, main_mention="Iraq", raw={"constraint_entities": []})


QUESTIONS = [
    _question(1, "Who first visited Iraq?", ["Iran"], "first_last"),
    _question(2, "Who last visited Iraq?", ["France"], "first_last"),
    _question(3, "Who visited Iraq after 1 March 2005?", ["France"], "before_after", "Multiple"),
]


def _scores(kg, contexts, name="m"):
    templates = [analyse(q.question, _parse(kg, q.question)) for q in QUESTIONS]
    readings = TemplateReader(kg).read_many(templates, contexts)
    lines = lambda ids: kg.verbalise_many(ids)  # noqa: E731
    return scores.score_contexts(
        name, kg, QUESTIONS, contexts, readings, lines, [0.001, 0.002, 0.003], (1, 2)
    )


def test_context_that_holds_the_answer_but_not_its_support_scores_recall_without_hits(tiny):
    # question 1's context lacks Iran's visit (the first): France is in it at rank 1, Kenya after —
    # the reader answers Kenya (the earliest it sees) and misses; question 2's context supports France
    contexts = [[2, 1], [2, 0], [0, 1]]
    s = _scores(tiny, contexts)
    # recall: Q1's gold Iran is not in [2, 1]; Q2's France at rank 1; Q3's France not in [0, 1]
    assert s.recall[1].tolist() == [0.0, 1.0, 0.0]
    assert s.context_recall.tolist() == [0.0, 1.0, 0.0]
    assert s.answers[0][0] == "Kenya" and s.answers[1][0] == "France"
    assert s.strict.tolist() == [0.0, 1.0, 0.0] and s.lenient.tolist() == [0.0, 1.0, 0.0]
    assert s.facts.tolist() == [2, 2, 2] and (s.tokens > 5).all()
    # the whole timeline supports every answer
    full = _scores(tiny, [[0, 1, 2]] * 3)
    assert full.strict.tolist() == [1.0, 1.0, 1.0]


def test_summary_row_and_breakdown_carry_intervals_around_the_mean(tiny):
    s = _scores(tiny, [[0, 1, 2], [2, 0], [0, 1]])
    row = scores.summary_row(s)
    assert row["n"] == 3 and row["template Hits@1 strict"] == pytest.approx(2 / 3)
    assert row["template Hits@1 strict CI low"] <= 2 / 3 <= row["template Hits@1 strict CI high"]
    assert row["retrieval p50 ms"] == pytest.approx(2.0)
    frame = scores.breakdown_table(QUESTIONS, [s], "template Hits@1 strict")
    by = {(r.group, r.category): r["mean"] for _, r in frame.iterrows()}
    assert by[("qlabel", "Single")] == 1.0 and by[("qlabel", "Multiple")] == 0.0
    pivot = report.pivot(frame)
    assert pivot.category.tolist()[:3] == ["overall", "Single", "Multiple"]
    assert pivot.loc[0, "m"].startswith("0.667 [")
    table = report.leaderboard_table([row], {}, {"m": "a note"})
    assert table.loc[0, "variant"] == "a note" and table.loc[0, "reader n"] == 0
    assert not any("CI" in c for c in table.columns)


def test_summary_figure_has_one_point_per_method_and_the_ceiling(tiny):
    rows = [
        scores.summary_row(_scores(tiny, [[0, 1, 2]] * 3, "a")),
        scores.summary_row(_scores(tiny, [[0]] * 3, "b")),
    ]
    fig = report.summary_figure(rows, ceilings={"ceiling": 0.9}, note="test")
    left, right = fig.axes[:2]
    assert len(left.containers) == 2 and len(right.containers) == 2  # one errorbar per method
    assert any(abs(line.get_ydata()[0] - 0.9) < 1e-9 for line in right.lines if len(line.get_ydata()) == 2)


def _committed(root, paper, metrics, parameters=None):
    folder = root / paper
    folder.mkdir(parents=True)
    data = {"metrics": metrics, "parameters": parameters or {}}
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")


def test_each_papers_headline_is_declared_once_for_the_book_and_the_leaderboard():
    """The book's first-page paper number is the leaderboard's headline row, one declaration in the
    paper's entry: MultiTQ papers in reading order, then IA-RAG's three document data sets."""
    from temporag.methods import registry

    printed = report.headlines()
    assert [(h.ref.paper, h.ref.dataset, h.metric) for h in printed] == [
        ("tecqa", "MultiTQ", "table1/strict/Overall"),
        ("star_rag", "MultiTQ", "table2/MultiTQ/STAR-RAG/hits@1"),
        ("timer4", "MultiTQ", "table3/whole/Overall"),
        ("sar", "MultiTQ", "table1/SAR/llm/Overall"),
        *(("ia_rag", ds, f"table2/{ds}/IA-RAG/accuracy") for ds in ("TimeQA", "TempReason", "ComplexTR")),
    ]
    for name in ("tecqa", "star_rag", "timer4", "sar", "ia_rag"):
        assert registry.get(name).book.headline.paper_number in printed  # the same declaration
    assert registry.get("semantic").book.headline.printed == ()  # the tour prints no paper headline


def test_headline_table_reads_the_committed_run_and_fails_clearly_without_it(tmp_path):
    tecqa_kit = {"value": 0.1, "paper": 0.811, "n": 40, "reader": "SmolLM2", "rule": "strict"}
    _committed(tmp_path, "tecqa", {"table1/strict/Overall": tecqa_kit})
    common = {"TECQA (paper-faithful)": {"value": 0.75, "n": 954, "how": "template reader"}}
    with pytest.raises(report.MissingPaperRun, match="temporag run star_rag --profile paper"):
        report.headline_table(common, tmp_path, require=True)
    with pytest.raises(report.MissingPaperRun, match="sar, star_rag, timer4"):
        report.check_paper_runs(tmp_path)
    table = report.headline_table(common, tmp_path, require=False)
    row = table[table.paper == "tecqa"].iloc[0]
    assert row["paper value"] == lookup("tecqa", "Table 1", "TECQA", "Overall", "MultiTQ") == 0.811
    assert row["kit, paper's protocol"] == "0.100 (n = 40)"
    assert row["kit, common protocol"] == "0.750 (n = 954)"
    assert "Qwen3-8B" in row["why they differ"] and "SmolLM2" in row["why they differ"]
    missing = table[table.paper == "timer4"].iloc[0]
    assert missing["kit, paper's protocol"].startswith("missing — run `temporag run timer4")
    assert len(table) == len(report.headlines()) and set(table.paper) == {
        "tecqa",
        "star_rag",
        "timer4",
        "sar",
        "ia_rag",
    }


def test_code_table_is_gathered_from_the_packages_and_the_committed_runs(tmp_path):
    from temporag.methods.star_rag.code_tables import PAPER_VS_CODE as STAR
    from temporag.methods.timer4.released import PAPER_VS_CODE as TIMER4

    _committed(tmp_path, "tecqa", {}, {"K": 40, "N": 2})
    table = report.code_table(tmp_path)
    assert (table.method == "star_rag").sum() >= len(STAR) and (table.method == "timer4").sum() >= len(TIMER4)
    k = table[(table.method == "tecqa") & (table.aspect == "K")].iloc[0]
    assert k["paper"].startswith("40 (Figure 4") and k["kit"] == "K = 40"
    assert k["released code (our reading)"] == "no released code read by the kit"
    sar_k = table[(table.method == "sar") & (table.aspect == "K")].iloc[0]
    assert sar_k["kit"] == "figures/sar/results.json missing"
    # the committed table's order: declared released-code readings, then KG methods, then document ones
    assert list(dict.fromkeys(table.method)) == ["star_rag", "timer4", "tecqa", "sar", "ia_rag"]
    star_k1 = table[(table.method == "star_rag") & (table.aspect == "K1")].iloc[0]
    assert star_k1["released code (our reading)"] == "see this method's released-code rows"


def test_the_leaderboards_own_profile_defaults_win_over_the_kits():
    from temporag.methods.params import ParameterError
    from temporag.methods.registry import declarations

    declared = declarations("leaderboard")
    smoke = declared.resolve({"profile": "smoke", "reader_sample": None, "document_sample": 7})
    assert (smoke["reader_sample"], smoke["document_sample"], smoke["require_paper_runs"]) == (1, 7, False)
    assert smoke["datasets"] == ["TimeQA", "TempReason", "ComplexTR"]
    assert declared.resolve({"profile": "paper"})["require_paper_runs"] is True
    with pytest.raises(ParameterError, match="profile must be one of 'smoke', 'paper'"):
        declared.resolve({"profile": "full"})


def test_the_leaderboard_never_trains_timer4(kg, tmp_cache):
    from temporag.methods.timer4 import entry

    assert entry.cached_time_retriever(kg, 96) is None  # an empty cache: no model, and none was trained
    assert not (tmp_cache / "timer4_retriever").exists()
    assert entry.cached_share(kg, "no-such-model") == 0.0


def test_the_leaderboard_finds_timer4s_model_where_training_saves_it(kg, tmp_cache):
    """The entry asks the training module for the folder (no second spelling of the cache path): a
    finished training's folder, under the notebook's default config, is the one the leaderboard loads."""
    from temporag.methods.timer4 import entry, negatives, train

    folder = train.model_folder(negatives.build_examples(kg, 12, seed=3), train.TrainConfig(seed=3))
    assert folder.parent == tmp_cache / "timer4_retriever"
    folder.mkdir(parents=True)
    assert entry.cached_time_retriever(kg, 12, seed=3) is None  # not finished: no training record yet
    (folder / train.TRAINING_META).write_text("{}")
    assert entry.cached_time_retriever(kg, 12, seed=3) == folder
    assert entry.cached_time_retriever(kg, 12, seed=4) is None  # another seed is another model


class _Workspace:
    """The KG workspace, shrunk to what the ceilings need: the parse, templates and the reader."""

    def __init__(self, kg) -> None:
        self.kg = kg
        self.parser = self

    def parse_many(self, texts):
        return [_parse(self.kg, t) for t in texts]

    def templates(self, texts):
        return [analyse(t, c) for t, c in zip(texts, self.parse_many(texts))]

    def read_contexts(self, questions, contexts):
        templates = self.templates([q.question for q in questions])
        return TemplateReader(self.kg).read_many(templates, contexts)


def test_ceilings_read_every_fact_of_the_main_entity_and_the_full_subgraph(tiny):
    found = scores.ceilings(tiny, QUESTIONS, _Workspace(tiny), ks=(1,))
    assert set(found) == {"main entity", "subgraph"}
    for key, ceiling in found.items():
        assert ceiling.facts.tolist() == [3.0, 3.0, 3.0], key  # Iraq's three visits, all with the relation
        assert ceiling.strict.tolist() == [1.0, 1.0, 1.0], key  # the whole timeline supports every answer
        assert ceiling.tokens.tolist() == [0.0, 0.0, 0.0]  # a ceiling is not shown to a reader


class _FixedContexts:
    """A method that returns the same ranked contexts whatever it is asked (the roster's interface)."""

    def __init__(self, kg, contexts) -> None:
        self.kg, self.contexts = kg, contexts

    def retrieve(self, questions, k, progress=False):
        from temporag.methods.base import Retrieval

        return Retrieval(self.contexts, [0.001] * len(questions))

    def evidence_lines(self, ids):
        return self.kg.verbalise_many(ids)


def test_notebook_steps_score_every_entry_and_record_under_the_committed_names(tiny, tmp_path):
    from temporag.leaderboard import experiments, record
    from temporag.leaderboard.roster import Entry
    from temporag.notebook.results import Results

    entries = [
        Entry("whole timeline", _FixedContexts(tiny, [[0, 1, 2]] * 3)),
        Entry("first visit only", _FixedContexts(tiny, [[0]] * 3)),
    ]
    found = experiments.score_methods(entries, tiny, QUESTIONS, _Workspace(tiny), (1,))
    assert [s.name for s in found] == ["whole timeline", "first visit only"]
    assert found[0].strict.tolist() == [1.0, 1.0, 1.0] and found[1].recall[1].tolist() == [1.0, 0.0, 0.0]
    assert entries[1].retrieval.ids[2].tolist() == [0]  # kept on the entry for the reader

    results = Results("leaderboard_steps", {}, out_dir=tmp_path / "out")
    ceilings = scores.ceilings(tiny, QUESTIONS, _Workspace(tiny), ks=(1,))
    hits = record.ceilings(results, experiments.ceiling_numbers(ceilings), len(QUESTIONS))
    assert hits == {c.name: 1.0 for c in ceilings.values()}
    record.breakdowns(results, experiments.breakdowns(QUESTIONS, found, seed=0), len(QUESTIONS))
    documents = pd.DataFrame(
        [
            {
                "dataset": "TimeQA",
                "method": "IA-RAG",
                "n": 4,
                "retrieval recall": 0.5,
                "CI low": 0.1,
                "CI high": 0.9,
                "context tokens / question": 80.0,
                "reader accuracy": 0.25,
                "reader n": 2,
            },
            {
                "dataset": "TimeQA",
                "method": "Vanilla RAG",
                "n": 4,
                "retrieval recall": 0.75,
                "CI low": 0.3,
                "CI high": 1.0,
                "context tokens / question": 90.0,
                "reader accuracy": 0.5,
                "reader n": 2,
            },
        ]
    )
    record.documents(results, documents, "fake-reader", 2)
    saved = json.loads((results.dir / "results.json").read_text())
    assert saved["metrics"]["template_reader/ceiling_main entity/hits@1"]["context_facts"] == 3.0
    assert saved["metrics"]["documents/TimeQA/IA-RAG/retrieval_recall"] == {
        "value": 0.5,
        "n": 4,
        "ci95": [0.1, 0.9],
        "tokens": 80.0,
    }
    assert set(saved["tables"]) == {"breakdown_template_hits1", "breakdown_recall", "documents"}
    assert saved["tables"]["documents"]["caption"].startswith("Vanilla RAG vs IA-RAG, all-MiniLM-L6-v2")

    common = experiments.common_protocol(found, documents, "fake-reader")
    assert common["whole timeline"]["value"] == 1.0 and common["first visit only"]["n"] == 3
    assert common["TimeQA/IA-RAG"] == {
        "value": 0.25,
        "n": 2,
        "how": "reader fake-reader, DyG-RAG token-level accuracy",
    }
    assert "TimeQA/Vanilla RAG" not in common  # only IA-RAG's reader stands beside its paper
    shown = experiments.predictions(found, entries, QUESTIONS)
    assert len(shown) == 6 and shown[3] == {
        "method": "first visit only",
        "quid": 1,
        "answers": found[1].answers[0][:3],
        "evidence_ids": [0],
    }


def test_timer4s_row_sees_the_fine_tuned_stores_cache_under_any_backend(tmp_cache, monkeypatch):
    """The row asks the encoder that owns the cache key whether a full store is cached: under the ONNX
    backend the key holds the backend too, which a key rebuilt from the model's name alone missed."""
    import numpy as np

    from temporag.methods.timer4 import entry
    from temporag.retrieval.embed import Encoder

    class TinyKG:
        def triple_texts(self):
            return ["Iraq make a visit Iran", "Iran host a visit Iraq", "China sign formal agreement Japan"]

    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "onnx")
    monkeypatch.setattr(Encoder, "dim", property(lambda self: 4))
    monkeypatch.setattr(Encoder, "encode", lambda self, texts, progress=None: np.ones((len(texts), 4), "f4"))
    model = tmp_cache / "timer4_retriever" / "model"
    assert entry.cached_share(TinyKG(), model) == 0.0
    encoder = Encoder(model=str(model))
    assert encoder.backend == "onnx"
    encoder.encode_cached(TinyKG().triple_texts())  # what time_store does with the fine-tuned model
    assert entry.cached_share(TinyKG(), model) == 1.0
