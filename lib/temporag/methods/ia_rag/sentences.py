"""§3.2's offline text rules: sentence splitting, the mandatory-subject rule (pronouns resolved to the
document's subject or dropped) and clause splitting at time expressions.  Used by the offline IEU
extractor; kept apart so the extractor module holds the IEU record and the two extractors only."""

from __future__ import annotations

import re
from collections.abc import Sequence

from temporag.timeutil import TimeExpression

_ABBREV = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "st",
    "jr",
    "sr",
    "prof",
    "gen",
    "col",
    "lt",
    "capt",
    "sgt",
    "rev",
    "inc",
    "co",
    "corp",
    "ltd",
    "no",
    "vs",
    "etc",
    "mt",
    "ft",
    "u.s",
    "u.k",
    "e.g",
    "i.e",
    "c",
    "ca",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "fr",
    "gov",
}
_END = re.compile(r"[.!?](?:[\"')\]]+)?(?=\s+[\"'(\[]?[A-Z0-9]|[A-Z][a-z])|\n+")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of sentences; initials ('D . Baker'), abbreviations and glued Wikipedia
    paragraphs ('historian.Kalifa was') are handled."""
    spans, start = [], 0
    for m in _END.finditer(text):
        end = m.end() if text[m.start()] != "\n" else m.start()
        if text[m.start()] == ".":
            word = re.search(r"([\w.]+)\s*$", text[start : m.start()])
            w = word.group(1).lower() if word else ""
            if len(w) == 1 and w.isalpha() or w.rstrip(".") in _ABBREV:
                continue
        if text[start:end].strip():
            spans.append((start, end))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        out.append((s, e))
    return out


# ----------------------------------------------------------------------------------------------------
# subjects

SUBJECT_PRONOUNS = {"he", "she", "they", "it"}
_PERSONAL = re.compile(r"\b(?:He|She|he|she|Him|him)\b")
_POSSESSIVE = re.compile(r"\b(?:His|his|Her|her)\b(?=\s+[a-z])")
_THEY = re.compile(r"^(?:They|It|Its|Their)\b")
_LEAD_NP = re.compile(r"^(?:The\s+)?((?:[A-Z][\w.'\-]*\s*){1,6})")
ACTION = re.compile(
    r"\b(?:was|were|is|served|serves|worked|works|played|plays|held|holds|studied|lived|owned|became|"
    r"joined|moved|returned|won|married|taught|led|managed|coached|represented|elected|appointed|"
    r"signed|founded|left|went|attended|graduated|received|remained|continued|transferred|member)\b",
    re.I,
)


_NOT_PERSON = re.compile(
    r"\b(?:House|Club|F\.?C|University|College|School|Party|Company|Church|Station|River|Council|"
    r"Association|Team|League|Cup|Band|Group|Corporation|Ministry|Museum|Hospital|Bridge|Building|"
    r"Stadium|Airport|Society|Institute|Academy|Records|Island|Park|City|County|Province|Republic|"
    r"Kingdom|Award|Prize|Festival|Series|Order|Army|Navy|Force|Brigade|Regiment|Parliament)\b"
)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z]\s?\.|[A-Z][a-z]+|de|van|von|der|da)){1,3}\b")


def person_like(name: str) -> bool:
    """Two to five capitalised words and no organisation / place word: who 'he' or 'she' can be."""
    words = name.split()
    return 2 <= len(words) <= 6 and not _NOT_PERSON.search(name) and name[:1].isupper()


def last_person(text: str) -> str | None:
    """The last person-like name in a text (for pages whose title is a place or an organisation)."""
    names = [m.group(0) for m in _NAME.finditer(text) if person_like(m.group(0))]
    return names[-1] if names else None


def resolve_subject(
    sentence: str, title: str, previous_subject: str | None, person: str | None = None
) -> str | None:
    """The sentence with its subject pronouns replaced by an explicit name, or None when a subject
    pronoun cannot be resolved (the paper drops such sentences).  'he' / 'she' resolve to the page
    title when it names a person, else to ``person`` (the last person named before)."""
    out = sentence
    if _PERSONAL.search(out) or _POSSESSIVE.search(out):
        who = title if person_like(title) else person
        if not who:
            return None
        out = _POSSESSIVE.sub(f"{who}'s", out)
        out = _PERSONAL.sub(who, out)
    m = _THEY.match(out)
    if m:
        who = previous_subject or title
        if not who:
            return None
        word = m.group(0)
        out = (f"{who}'s" if word in ("Its", "Their") else who) + out[len(word) :]
    first = out.split(maxsplit=1)[0].lower().strip(",") if out.split() else ""
    return None if first in SUBJECT_PRONOUNS else out


def lead_subject(sentence: str) -> str | None:
    """The capitalised noun phrase a sentence starts with (its explicit subject), if any."""
    m = _LEAD_NP.match(sentence)
    if not m:
        return None
    words = m.group(1).split()
    while words and words[-1].lower() in {"in", "on", "at", "from", "the", "of"}:
        words.pop()
    np_ = " ".join(words)
    return np_ if np_ and np_.split()[0].lower() not in _NOT_SUBJECT else None


_NOT_SUBJECT = {
    "in",
    "on",
    "at",
    "from",
    "after",
    "before",
    "during",
    "between",
    "since",
    "until",
    "by",
    "built",
    "born",
    "following",
    "when",
    "while",
    "although",
    "because",
    "as",
    "with",
    "under",
    "for",
    "later",
    "then",
    "there",
    "this",
    "that",
    "these",
    "those",
    "upon",
    "despite",
    "however",
    "also",
    "early",
    "late",
    "around",
    "about",
    "throughout",
    "within",
}


def split_by_times(sentence: str, times: Sequence[TimeExpression]) -> list[tuple[str, TimeExpression]]:
    """'Never merge information across different time expressions': one clause per expression, cut at
    the last ';' / ',' / ' and ' between consecutive expressions (the whole sentence when there is none)."""
    if len(times) <= 1:
        return [(sentence, t) for t in times]
    cuts = [0]
    for a, b in zip(times, times[1:]):
        between = sentence[a.end : b.start]
        seps = [m.end() for m in re.finditer(r";|,\s|\band\b|\bwhile\b|\bthen\b", between)]
        if not seps:
            return [(sentence, t) for t in times]
        cuts.append(a.end + seps[-1])
    cuts.append(len(sentence))
    clauses = [sentence[cuts[i] : cuts[i + 1]].strip(" ,;") for i in range(len(times))]
    return list(zip(clauses, times))
