"""§3.2's offline text rules: sentence splitting, the mandatory-subject rule (a pronoun made explicit
where the page's entity is the only reading) and clause splitting at time expressions.  Used by the
offline IEU extractor; kept apart so the extractor module holds the IEU record and the extractors."""

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


_PRONOUN = re.compile(r"\b(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Hh]im)\b")
_IT = re.compile(r"^(?:It|Its)\b")
_CLEFT = re.compile(
    r"^It (?:is|was|has been|had been|will be)\b.*\b(?:that|who|when)\b"
    r"|^It (?:is|was) (?:not|also|then|during)"
)


def _replacement(word: str, who: str) -> str:
    return f"{who}'s" if word.lower() in ("his", "its") else who


def resolve_subject(sentence: str, title: str) -> tuple[str, bool]:
    """(the sentence with its first pronoun made explicit, whether it was): 'he' / 'she' / 'his' / 'her'
    become the page's entity only when the page is about a person and no other person is named before
    the pronoun in the sentence; a leading 'It' / 'Its' becomes the page's entity only when the page is
    not about a person (and the sentence is no cleft such as 'It was in 1990 that ...').  Anything
    ambiguous stays as written: the unit keeps its sentence, and its title tells the reader the page."""
    if person_like(title):
        m = _PRONOUN.search(sentence)
        if m is None:
            return sentence, False
        before = sentence[: m.start()]
        others = [n.group(0) for n in _NAME.finditer(before) if person_like(n.group(0))]
        surnames = set(title.split())
        if any(not set(o.split()) & surnames for o in others):
            return sentence, False
        word = m.group(0)
        if word.lower() == "her" and re.match(
            r"\s*(?:[,.;)]|$|to\b|in\b|by\b|as\b|and\b)", sentence[m.end() :]
        ):
            word_out = title  # object 'her' ('married her in 1990')
        else:
            word_out = _replacement(word, title)
        return sentence[: m.start()] + word_out + sentence[m.end() :], True
    m = _IT.match(sentence)
    if m and title and not _CLEFT.match(sentence):
        return _replacement(m.group(0), title) + sentence[m.end() :], True
    return sentence, False


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


_CLAUSE_BREAK = re.compile(
    r";\s*|,\s+(?=(?:and|but|while|whereas|then|before|after|when|where|until|later)\b)|\s+and then\s+"
)
_VERBISH = re.compile(ACTION.pattern + r"|\b\w{3,}ed\b|\b(?:has|had|have|be|been|being|are)\b", re.I)


def split_by_times(sentence: str, times: Sequence[TimeExpression]) -> list[tuple[str, TimeExpression]]:
    """'Never merge information across different time expressions': one unit per expression.  A
    sentence is cut between two expressions only at a clause break (';', ', and', ', while', ', then',
    ', when', ...) that leaves a verb on both sides; otherwise every expression keeps the whole
    sentence, so no unit is a fragment such as 'Hughes Medal in 1951.'"""
    if len(times) <= 1:
        return [(sentence, t) for t in times]
    cuts = [0]
    for a, b in zip(times, times[1:]):
        between = sentence[a.end : b.start]
        ok = [
            a.end + m.start()
            for m in _CLAUSE_BREAK.finditer(between)
            if _VERBISH.search(sentence[cuts[-1] : a.end + m.start()])
            and _VERBISH.search(sentence[a.end + m.end() :])
        ]
        if not ok:
            return [(sentence, t) for t in times]
        cuts.append(ok[-1])
    cuts.append(len(sentence))
    clauses = [sentence[cuts[i] : cuts[i + 1]].strip(" ,;") for i in range(len(times))]
    clauses = [re.sub(r"^(?:and then|and|but|while|whereas|then)\s+", "", c) for c in clauses]
    return list(zip(clauses, times))
