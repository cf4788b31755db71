"""MultiTQ (Chen et al., ACL 2023): the ICEWS05-15 KG and its questions.

The KG file is tab-separated with CRLF line ends and CSV-quoted names (a plain ``split('\\t')``
leaves five entity names in their quoted form), so it is read with the csv module.
"""

from __future__ import annotations

import csv
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from temporag.data._read import load_question_file, read_json_file, split_file
from temporag.data.errors import DataFormatError
from temporag.data.paths import data_file, open_text
from temporag.data.tkg import TemporalKG, day_number

log = logging.getLogger(__name__)
DATASET = "multitq"
KG_FILE = "multitq/kg/full.txt"
QUESTION_FILES = {
    "test_sample_shared": "multitq/questions/test_sample_shared.json",
    "test": "multitq/questions/test.json",
    "dev": "multitq/questions/dev.json",
    "train": "multitq/questions/train.json",
}
# The official chronological split (TLogic/xERTE) as 0-based half-open fact ranges of full.txt.
SPLITS = {"train": (0, 322_958), "valid": (322_958, 392_182), "test": (392_182, 461_329)}
QTYPES = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_KG_HINT = "expected 'subject<TAB>relation<TAB>object<TAB>YYYY-MM-DD' — is this the MultiTQ KG full.txt?"


@dataclass(frozen=True)
class Question:
    quid: int
    question: str
    answers: tuple[str, ...]
    answer_type: str  # "entity" | "time"
    time_level: str  # "day" | "month" | "year"
    qtype: str
    qlabel: str  # "Single" | "Multiple"


def _load_id_map(relative: str, data_dir) -> list[str] | None:
    """Names ordered by their MultiTQ id, or None when the map file is absent."""
    try:
        path = data_file(relative, DATASET, data_dir)
    except FileNotFoundError:
        return None
    mapping = read_json_file(path, "expected {name: id}")
    names = [""] * len(mapping)
    for name, idx in mapping.items():
        if not isinstance(idx, int) or not 0 <= idx < len(names) or names[idx]:
            raise DataFormatError(path, None, f"id {idx!r} of {name!r} is not a unique 0..n-1 integer")
        names[idx] = name
    return names


def parse_kg_file(
    path: str | Path, entities: list[str] | None = None, relations: list[str] | None = None
) -> TemporalKG:
    """Parse a MultiTQ-format KG file; ids follow the given name lists, else first appearance."""
    ent_id = {n: i for i, n in enumerate(entities)} if entities else {}
    rel_id = {n: i for i, n in enumerate(relations)} if relations else {}
    fixed_ents, fixed_rels = bool(entities), bool(relations)
    ent_names = list(entities) if entities else []
    rel_names = list(relations) if relations else []
    s_col, r_col, o_col, t_col = [], [], [], []
    date_cache: dict[str, int] = {}
    with open_text(path, newline="") as f:
        for lineno, row in enumerate(csv.reader(f, delimiter="\t"), start=1):
            if len(row) != 4:
                raise DataFormatError(
                    path, lineno, f"expected 4 tab-separated fields, got {len(row)}", _KG_HINT
                )
            subj, rel, obj, date = row
            ids = []
            for name, table, names, fixed, kind in (
                (subj, ent_id, ent_names, fixed_ents, "entity"),
                (rel, rel_id, rel_names, fixed_rels, "relation"),
                (obj, ent_id, ent_names, fixed_ents, "entity"),
            ):
                idx = table.get(name)
                if idx is None:
                    if fixed:
                        raise DataFormatError(
                            path,
                            lineno,
                            f"{kind} {name!r} is not in the {kind}2id map",
                            "KG and id maps must come from the same MultiTQ release",
                        )
                    idx = table[name] = len(names)
                    names.append(name)
                ids.append(idx)
            day = date_cache.get(date)
            if day is None:
                if not _DATE.match(date):
                    raise DataFormatError(path, lineno, f"bad date {date!r}", _KG_HINT)
                try:
                    day = date_cache[date] = day_number(date)
                except ValueError as exc:
                    raise DataFormatError(path, lineno, f"bad date {date!r}", _KG_HINT) from exc
            s_col.append(ids[0])
            r_col.append(ids[1])
            o_col.append(ids[2])
            t_col.append(day)
    if not s_col:
        raise DataFormatError(path, None, "the KG file is empty", _KG_HINT)
    t = np.asarray(t_col, dtype=np.int32)
    n = len(s_col)
    splits = {k: v for k, v in SPLITS.items() if v[1] <= n} if n == SPLITS["test"][1] else {}
    return TemporalKG(
        s=np.asarray(s_col, dtype=np.int32),
        r=np.asarray(r_col, dtype=np.int32),
        o=np.asarray(o_col, dtype=np.int32),
        t_start=t,
        t_end=t.copy(),
        entities=ent_names,
        relations=rel_names,
        name="MultiTQ (ICEWS05-15)",
        granularity="day",
        splits=splits,
    )


_KG_CACHE: dict[str, TemporalKG] = {}


def load_kg(data_dir: str | Path | None = None) -> TemporalKG:
    """The full MultiTQ KG (461,329 facts), ids as in MultiTQ's entity2id/relation2id maps."""
    path = data_file(KG_FILE, DATASET, data_dir)
    key = str(path.resolve())
    if key not in _KG_CACHE:
        entities = _load_id_map("multitq/kg/entity2id.json", data_dir)
        relations = _load_id_map("multitq/kg/relation2id.json", data_dir)
        kg = parse_kg_file(path, entities, relations)
        if not kg.splits:
            log.warning(
                "%s holds %s facts, MultiTQ's full.txt %s: the official train/valid/test splits are not "
                "defined for it (is it cut short? `temporag data check multitq`)",
                path,
                f"{len(kg):,}",
                f"{SPLITS['test'][1]:,}",
            )
        _KG_CACHE[key] = kg
    return _KG_CACHE[key]


_FIELDS = ("quid", "question", "answers", "answer_type", "time_level", "qtype", "qlabel")


def parse_questions(path: str | Path) -> list[Question]:
    """Questions in MultiTQ's own JSON format (a list of records with the 7 official fields)."""
    records = read_json_file(path, "expected a JSON list of MultiTQ question records")
    if not isinstance(records, list):
        raise DataFormatError(
            path, 1, "top level is not a list", "expected a JSON list of MultiTQ question records"
        )
    out = []
    for i, rec in enumerate(records):
        missing = [k for k in _FIELDS if not isinstance(rec, dict) or k not in rec]
        if missing:
            raise DataFormatError(
                path, None, f"record {i} lacks field(s) {missing}", f"each record needs {list(_FIELDS)}"
            )
        answers = rec["answers"]
        if not isinstance(answers, list) or not answers:
            raise DataFormatError(
                path, None, f"record {i} (quid {rec['quid']}): 'answers' must be a non-empty list"
            )
        if rec["answer_type"] not in ("entity", "time"):
            raise DataFormatError(
                path, None, f"record {i}: answer_type {rec['answer_type']!r} is not entity/time"
            )
        out.append(
            Question(
                int(rec["quid"]),
                str(rec["question"]),
                tuple(str(a) for a in answers),
                rec["answer_type"],
                rec["time_level"],
                rec["qtype"],
                rec["qlabel"],
            )
        )
    return out


def load_questions(
    split: str = "test_sample_shared",
    data_dir: str | Path | None = None,
    questions_file: str | Path | None = None,
) -> list[Question]:
    """Questions of a split, or of any file in MultiTQ's format (``questions_file`` wins)."""
    return load_question_file(
        parse_questions, questions_file, lambda: split_file(QUESTION_FILES, split, DATASET, data_dir)
    )
