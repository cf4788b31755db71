"""The kit's question-cue lexicon: the words that say where in time a question's answer lies.

Every LLM-free reading of a question's wording — the template reader's classifier
(:mod:`temporag.answer.template_reader`), TECQA's question-guided chain (:mod:`temporag.methods.tecqa.guided`)
and TimeR4's before/after constraint (:mod:`temporag.methods.timer4.rerank`) — reads its ordinal
(first / last), its direction (before / after) and a "same year / month / day as" clause from these lists.
A cue is a word or a short phrase; matching ignores case.

Word lists kept elsewhere on purpose: STAR-RAG's released code's two lists (``star_rag/time_words.py``, a
replica of that code), SAR's RE-ORDER words (``sar/search.py``: SAR's own rule for its sub-queries) and
IA-RAG's T4 cue (``ia_rag/classify.py``: Fig. 6's event-to-event definition, which includes "when",
"while", "during").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from temporag.linking import normalise_token

FIRST = ("first", "earliest", "initial", "initially", "firstly")
LAST = ("last", "latest", "final", "finally", "lastly", "recently", "most recent", "most recently")
BEFORE = ("before", "prior", "prior to", "earlier", "earlier than", "until", "till", "preceding", "ahead")
AFTER = ("after", "since", "following", "later", "later than", "subsequent", "subsequently")

#: "in the same month as X", "that year": the clause's granularity is the group.
SAME_PERIOD = re.compile(r"\b(?:same|that)\s+(year|month|day)\b", re.I)


def cue_pattern(cues: Sequence[str]) -> re.Pattern:
    """A regular expression that finds any of ``cues`` as whole words in a text."""
    phrases = sorted(cues, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(c) for c in phrases) + r")\b", re.I)


def cue_positions(norms: Sequence[str], cues: Sequence[str]) -> list[int]:
    """Token positions where one of ``cues`` starts, in a question's normalised tokens
    (:func:`temporag.linking.tokenize`'s ``norm``)."""
    keys = [tuple(normalise_token(w) for w in cue.split()) for cue in cues]
    return [i for i in range(len(norms)) if any(tuple(norms[i : i + len(key)]) == key for key in keys)]
