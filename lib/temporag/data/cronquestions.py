"""CronQuestions (Saxena et al., ACL 2021): the Wikidata temporal KG and Complex-CronQuestions.

The KG is the CronKGQA release's quintuple format, ``head<TAB>relation<TAB>tail<TAB>start_year<TAB>end_year``
with Wikidata ids (``Q…``/``P…``), plus ``wd_id2entity_text.txt``/``wd_id2relation_text.txt``
(``id<TAB>label``).  The KG facts are not in the shared folder (Google Drive only): ``load_kg`` raises
``MissingDataError`` there, and works on any folder that has ``cronquestions/kg/full.txt``.  Questions
are SubGTR's Complex-CronQuestions (first_last / before_after / time_join), converted to JSON lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from temporag.data._read import (
    get_field,
    get_int,
    get_list,
    get_str,
    load_question_file,
    need_dict,
    parse_int,
    read_jsonl,
    read_label_map,
    read_tsv,
    split_file,
)
from temporag.data.errors import DataFormatError
from temporag.data.paths import data_file
from temporag.data.tkg import TemporalKG

DATASET = "cronquestions"
KG_FILES = {
    "full": "cronquestions/kg/full.txt",
    "train": "cronquestions/kg/train",
    "valid": "cronquestions/kg/valid",
    "test": "cronquestions/kg/test",
}
ENTITY_TEXT_FILE = "cronquestions/kg/wd_id2entity_text.txt"
RELATION_TEXT_FILE = "cronquestions/kg/wd_id2relation_text.txt"
COMPLEX_QUESTION_FILES = {
    split: f"cronquestions/questions_complex/{split}.jsonl" for split in ("valid", "test")
}
QUESTION_TYPES = ("simple_entity", "simple_time", "before_after", "first_last", "time_join")
_KG_HINT = (
    "expected 'head<TAB>relation<TAB>tail<TAB>start_year<TAB>end_year' with Wikidata ids "
    "(CronKGQA wikidata_big kg/full.txt)"
)
_TEXT_HINT = "expected 'Wikidata-id<TAB>label' lines (CronKGQA wd_id2*_text.txt)"
_Q_HINT = (
    'expected one CronQuestions record per line: {"question", "answers", "answer_type": "entity"|"time", '
    '"template", "entities", "times", "relations", "type", "annotation", "uniq_id", "paraphrases"}'
)


@dataclass(frozen=True)
class Question:
    """A CronQuestions record; entity answers are QIDs, time answers integer years.

    ``question`` has QIDs in place of names; ``paraphrases`` holds the surface form(s).
    ``annotation`` is the template slot filling as sorted (slot, value) pairs.
    """

    uniq_id: int
    question: str
    answers: tuple[str | int, ...]
    answer_type: str
    template: str
    entities: tuple[str, ...]
    times: tuple[int, ...]
    relations: tuple[str, ...]
    type: str
    annotation: tuple[tuple[str, str], ...]
    paraphrases: tuple[str, ...]

    @property
    def text(self) -> str:
        """The question with names instead of QIDs (first paraphrase), else the raw question."""
        return self.paraphrases[0] if self.paraphrases else self.question


def _year_day(year: int) -> int:
    """1 January of ``year`` as days since 1970-01-01 (works for any year, also BCE)."""
    return int(np.datetime64(year - 1970, "Y").astype("datetime64[D]").astype(np.int64))


def _with_labels(kg: TemporalKG, entity_text: dict[str, str], relation_text: dict[str, str]) -> TemporalKG:
    """Show Wikidata labels instead of ids when verbalising (ids without a label stay as they are)."""
    return replace(
        kg,
        entity_names=[entity_text.get(e) or e for e in kg.entities],
        relation_names=[relation_text.get(r) or r for r in kg.relations],
    )


def parse_kg(path: str | Path) -> TemporalKG:
    """A KG file in CronKGQA's quintuple format; ids follow CronKGQA's (sorted Wikidata ids)."""
    path = Path(path)
    rows = []
    for where, (head, rel, tail, start, end) in read_tsv(path, 5, _KG_HINT):
        for value, kind, prefix in ((head, "head", "Q"), (rel, "relation", "P"), (tail, "tail", "Q")):
            if not (value.startswith(prefix) and value[1:].isdigit()):
                raise where.error(f"{kind} {value!r} is not a Wikidata {prefix}-id")
        first, last = parse_int(start, where, "start year"), parse_int(end, where, "end year")
        if first > last:
            raise where.error(f"start year {first} is after end year {last}")
        rows.append((head, rel, tail, first, last))
    if not rows:
        raise DataFormatError(path, None, "the KG file is empty", _KG_HINT)
    heads, rels, tails, firsts, lasts = zip(*rows, strict=True)
    entities = sorted(set(heads) | set(tails))
    relations = sorted(set(rels))
    ent_id = {e: i for i, e in enumerate(entities)}
    rel_id = {r: i for i, r in enumerate(relations)}
    years = sorted(set(firsts) | set(lasts))
    year_day = {y: _year_day(y) for y in years}
    return TemporalKG(
        s=np.asarray([ent_id[h] for h in heads], dtype=np.int32),
        r=np.asarray([rel_id[r] for r in rels], dtype=np.int32),
        o=np.asarray([ent_id[t] for t in tails], dtype=np.int32),
        t_start=np.asarray([year_day[y] for y in firsts], dtype=np.int32),
        t_end=np.asarray([year_day[y] for y in lasts], dtype=np.int32),
        entities=entities,
        relations=relations,
        name="CronQuestions (Wikidata)",
        granularity="year",
    )


def load_entity_text(data_dir: str | Path | None = None) -> dict[str, str]:
    """QID → English label (125,726 entities in the release)."""
    return read_label_map(data_file(ENTITY_TEXT_FILE, DATASET, data_dir), _TEXT_HINT)


def load_relation_text(data_dir: str | Path | None = None) -> dict[str, str]:
    """PID → relation label (203 relations)."""
    return read_label_map(data_file(RELATION_TEXT_FILE, DATASET, data_dir), _TEXT_HINT)


def load_kg(split: str = "full", data_dir: str | Path | None = None, labels: bool = True) -> TemporalKG:
    """The CronQuestions KG (absent from the shared folder); ``labels`` verbalises with Wikidata labels."""
    if split not in KG_FILES:
        raise KeyError(f"unknown KG split {split!r}; known: {sorted(KG_FILES)}")
    kg = parse_kg(data_file(KG_FILES[split], DATASET, data_dir))
    if labels:
        kg = _with_labels(kg, load_entity_text(data_dir), load_relation_text(data_dir))
    return kg


def parse_questions(path: str | Path) -> list[Question]:
    """CronQuestions records as JSON lines (the kit's conversion of the release's pickles)."""
    out = []
    for where, value in read_jsonl(path, _Q_HINT):
        rec = need_dict(value, where)
        answer_type = get_str(rec, "answer_type", where)
        if answer_type not in ("entity", "time"):
            raise where.error(f"answer_type {answer_type!r} is not 'entity' or 'time'")
        answers = get_list(rec, "answers", str if answer_type == "entity" else int, where)
        qtype = get_str(rec, "type", where)
        if qtype not in QUESTION_TYPES:
            raise where.error(f"type {qtype!r} is not one of {QUESTION_TYPES}")
        annotation = get_field(rec, "annotation", dict, where)
        if not all(isinstance(v, str) for v in annotation.values()):
            raise where.error("annotation values should be strings (Wikidata ids or words)")
        out.append(
            Question(
                uniq_id=get_int(rec, "uniq_id", where),
                question=get_str(rec, "question", where),
                answers=answers,
                answer_type=answer_type,
                template=get_str(rec, "template", where),
                entities=get_list(rec, "entities", str, where),
                times=get_list(rec, "times", int, where),
                relations=get_list(rec, "relations", str, where),
                type=qtype,
                annotation=tuple(sorted(annotation.items())),
                paraphrases=get_list(rec, "paraphrases", str, where),
            )
        )
    return out


def load_complex_questions(
    split: str = "valid", data_dir: str | Path | None = None, questions_file: str | Path | None = None
) -> list[Question]:
    """Complex-CronQuestions (valid: 5,020 shared; test held out), or any file in the same format."""
    return load_question_file(
        parse_questions, questions_file, lambda: split_file(COMPLEX_QUESTION_FILES, split, DATASET, data_dir)
    )
