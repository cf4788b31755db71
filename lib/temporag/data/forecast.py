"""ForecastTKGQuestions (Ding et al., ISWC 2023): the ICEWS21 temporal KG and its id mappings.

No questions are available.  The KG's July (valid) and August (test) facts are ForecastTKGQA's own
files; its January–June train split was not found, so ``train`` is zrLLM's train re-encoded into
ForecastTKGQA ids — a close but incomplete stand-in (130 of 253 relations), which results must say.
zrLLM's own files (its ids, its split for zero-shot relations) are loadable as they are too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from temporag.data._read import UniqueKeys, line_of_row, read_int_table, read_name_ids, read_tsv
from temporag.data.errors import DataFormatError
from temporag.data.paths import data_file
from temporag.data.tkg import TemporalKG
from temporag.timeutil import day_of

DATASET = "forecasttkgquestions"
ROOT = "forecasttkgquestions/icews21"
ZRLLM_ROOT = "forecasttkgquestions/icews21_zrllm"
FACT_FILES = {
    "train": f"{ZRLLM_ROOT}/train.forecasttkgqa_ids.txt",
    "valid": f"{ROOT}/valid.txt",
    "test": f"{ROOT}/test.txt",
}
ZRLLM_SPLITS = ("train", "valid", "test")
SPLITS = ("train", "valid", "test")
TRAIN_CAVEAT = (
    "train = zrLLM's relation-filtered ICEWS21 train re-encoded into ForecastTKGQA ids "
    "(130 of 253 relations); the official ForecastTKGQA train split was not found"
)
_FACT_HINT = (
    "expected 'subject_id<TAB>relation_id<TAB>object_id<TAB>hour<TAB>-1' (ForecastTKGQA ICEWS21 format)"
)
_ZRLLM_HINT = "expected 'subject_id<TAB>relation_id<TAB>object_id<TAB>day' (zrLLM ICEWS21 format)"
_MAP_HINT = "expected 'name<TAB>id' lines"
_WD_HINT = "expected 'Q<id>|P<id><TAB>name' lines"


@dataclass(frozen=True)
class Mappings:
    """ForecastTKGQA's id maps: names by id, dates by timestamp id, and the Q/P-id texts."""

    entities: tuple[str, ...]
    relations: tuple[str, ...]
    dates: tuple[str, ...]
    wd_entity_text: dict[str, str]
    wd_relation_text: dict[str, str]


def _wd_map(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    ids = UniqueKeys("id")
    for where, (key, text) in read_tsv(path, 2, _WD_HINT):
        ids.add(key, where)
        out[key] = text
    return out


def load_mappings(data_dir: str | Path | None = None) -> Mappings:
    """entity2id (20,575), relation2id (253), ts2id (243 days of 2021) and the wd_id2*_text files."""

    def path(name: str) -> Path:
        return data_file(f"{ROOT}/mapping/{name}", DATASET, data_dir)

    dates = read_name_ids(path("ts2id.txt"), "expected 'YYYY-MM-DD<TAB>id' lines")
    return Mappings(
        tuple(read_name_ids(path("entity2id.txt"), _MAP_HINT)),
        tuple(read_name_ids(path("relation2id.txt"), _MAP_HINT)),
        tuple(dates),
        _wd_map(path("wd_id2entity_text.txt")),
        _wd_map(path("wd_id2relation_text.txt")),
    )


def _day_numbers(dates: tuple[str, ...] | list[str], path: Path) -> np.ndarray:
    try:
        return np.asarray([day_of(d) for d in dates], dtype=np.int32)
    except ValueError as exc:
        raise DataFormatError(path, None, f"a timestamp is not a YYYY-MM-DD date ({exc})") from exc


def parse_facts(
    path: str | Path, n_entities: int, n_relations: int, n_times: int, hours: bool = True
) -> np.ndarray:
    """Facts as an (n, 4) int32 array of (s, r, o, timestamp id).

    ``hours=True`` reads ForecastTKGQA's 5-column form (time in hours = ts id × 24, then -1);
    ``hours=False`` reads zrLLM's 4-column form (time = day index).
    """
    path = Path(path)
    hint = _FACT_HINT if hours else _ZRLLM_HINT
    table = read_int_table(path, 5 if hours else 4, hint)
    if len(table) == 0:
        raise DataFormatError(path, None, "no facts in the file", hint)
    facts = table[:, :4].copy()
    if hours:
        bad = np.flatnonzero(facts[:, 3] % 24)
        if bad.size:
            raise DataFormatError(
                path, line_of_row(path, int(bad[0])), f"hour {facts[bad[0], 3]} is not a multiple of 24", hint
            )
        facts[:, 3] //= 24
    for col, limit, name in (
        (0, n_entities, "subject"),
        (1, n_relations, "relation"),
        (2, n_entities, "object"),
        (3, n_times, "timestamp"),
    ):
        bad = np.flatnonzero((facts[:, col] < 0) | (facts[:, col] >= limit))
        if bad.size:
            raise DataFormatError(
                path,
                line_of_row(path, int(bad[0])),
                f"{name} id {facts[bad[0], col]} is outside the id map (0..{limit - 1})",
                hint,
            )
    return facts.astype(np.int32)


def _build_kg(
    parts: list[np.ndarray], names: list[str], entities, relations, days: np.ndarray, name: str
) -> TemporalKG:
    splits, start = {}, 0
    for split, part in zip(names, parts, strict=True):
        splits[split] = (start, start + len(part))
        start += len(part)
    facts = np.concatenate(parts)
    t = days[facts[:, 3]]
    return TemporalKG(
        s=facts[:, 0].copy(),
        r=facts[:, 1].copy(),
        o=facts[:, 2].copy(),
        t_start=t,
        t_end=t.copy(),
        entities=list(entities),
        relations=list(relations),
        name=name,
        granularity="day",
        splits=splits,
    )


def load_kg(splits: tuple[str, ...] = SPLITS, data_dir: str | Path | None = None) -> TemporalKG:
    """ICEWS21 in ForecastTKGQA ids as the kit's TemporalKG; ``kg.split(name)`` gives each split's facts.

    See ``TRAIN_CAVEAT``: the train split is a stand-in.
    """
    unknown = [s for s in splits if s not in FACT_FILES]
    if unknown:
        raise KeyError(f"unknown split(s) {unknown}; known: {SPLITS}")
    maps = load_mappings(data_dir)
    ts_path = data_file(f"{ROOT}/mapping/ts2id.txt", DATASET, data_dir)
    days = _day_numbers(maps.dates, ts_path)
    parts = [
        parse_facts(
            data_file(FACT_FILES[s], DATASET, data_dir),
            len(maps.entities),
            len(maps.relations),
            len(maps.dates),
        )
        for s in splits
    ]
    return _build_kg(
        parts, list(splits), maps.entities, maps.relations, days, "ForecastTKGQuestions (ICEWS21)"
    )


def load_zrllm_kg(data_dir: str | Path | None = None) -> TemporalKG:
    """zrLLM's ICEWS21 in its own ids and split (test holds only the 123 relations unseen in train)."""

    def path(name: str) -> Path:
        return data_file(f"{ZRLLM_ROOT}/{name}", DATASET, data_dir)

    entities = read_name_ids(path("entity2id.txt"), _MAP_HINT)
    relations = read_name_ids(path("relation2id.txt"), _MAP_HINT)
    n_days = 243  # 2021-01-01 … 2021-08-31, day 0 = 2021-01-01
    days = (day_of("2021-01-01") + np.arange(n_days)).astype(np.int32)
    parts = [
        parse_facts(path(f"{s}.txt"), len(entities), len(relations), n_days, hours=False)
        for s in ZRLLM_SPLITS
    ]
    return _build_kg(parts, list(ZRLLM_SPLITS), entities, relations, days, "zrLLM ICEWS21")


def load_zrllm_relation_explanations(data_dir: str | Path | None = None) -> dict[str, str]:
    """zrLLM's LLM-written description of each relation (``relation: text`` lines)."""
    path = data_file(f"{ZRLLM_ROOT}/relation_explanation.txt", DATASET, data_dir)
    out: dict[str, str] = {}
    for where, (line,) in read_tsv(path, 1, "expected 'relation name: explanation' lines"):
        name, sep, text = line.partition(": ")
        if not sep:
            raise where.error("no ': ' between relation name and explanation")
        out[name] = text
    return out
