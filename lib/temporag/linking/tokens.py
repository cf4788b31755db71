"""Word tokens of questions and KG names, normalised so that both sides of a match compare alike.

Linking matches a question's words against the KG's names, so both go through the same tokeniser and the
same normalisation (case, accents, dots, plural -s); the date-word mask lets a linker keep month names and
numbers out of entity names.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[^\W_]+(?:[-.'\u2019][^\W_]+)*\.?")

#: Question words, auxiliaries and other tokens that never start or make up a name on their own.
FUNCTION_WORDS = frozenset(
    """a an the who whom whose which what when where why how did does do done has have had was were is are
    be been being will would could can should shall may might must after before since until during in on at
    by for from to with without into onto about against of and or than as same first last next previous
    time times year years month months day days date exact tell me you please there this that these those
    it its his her their they he she we i our your also then once ever again so not no yes""".split()
)
#: Words joining the parts of one name ("Ministry of Defence and Security", "Saud bin Faisal").


def normalise_token(token: str) -> str:
    """Casefold, strip accents and dots, unify apostrophes, and cut a plural ending (both sides alike)."""
    text = unicodedata.normalize("NFKD", token)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = text.replace("\u2019", "'").replace(".", "")
    if text == "'s":
        return text
    if len(text) > 4 and text.endswith("ies"):
        return text[:-3] + "y"
    if len(text) > 3 and text.endswith("s") and not text.endswith(("ss", "'s")):
        return text[:-1]
    return text


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    norm: str

    @property
    def capitalised(self) -> bool:
        return self.text[:1].isupper() or self.text[:1].isdigit()


def tokenize(text: str) -> list[Token]:
    """Word tokens with character offsets; a possessive "'s" becomes its own token."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        word, start = m.group(0), m.start()
        if word.endswith("."):
            # keep the dot of initials ("W."), drop a sentence-final one
            if not (len(word) == 2 and word[0].isupper()):
                word = word[:-1]
        low = word.lower().replace("\u2019", "'")
        if len(word) > 2 and low.endswith("'s"):
            out.append(Token(word[:-2], start, start + len(word) - 2, normalise_token(word[:-2])))
            out.append(Token(word[-2:], start + len(word) - 2, start + len(word), "'s"))
        else:
            out.append(Token(word, start, start + len(word), normalise_token(word)))
    return out


def name_key(text: str) -> tuple[str, ...]:
    """The matching key of a name: normalised tokens without "the"."""
    return tuple(t.norm for t in tokenize(text) if t.norm != "the")


def _calendar_words() -> frozenset[str]:
    """The timestamp vocabulary in English: month and weekday names and their abbreviations
    (the C locale's ``calendar`` names, plus the common "Sept")."""
    words = [*calendar.month_name[1:], *calendar.month_abbr[1:], *calendar.day_name, *calendar.day_abbr]
    return frozenset(normalise_token(w) for w in [*words, "Sept"])


#: Month and weekday words, normalised: parts of dates, never entities on their own.
CALENDAR_WORDS = _calendar_words()


def is_date_word(token: Token) -> bool:
    """A number (a year, a day, "3rd") or a capitalised month / weekday word."""
    norm = token.norm
    if norm.isdigit() or (norm[:1].isdigit() and norm.rstrip("stndrh").isdigit()):
        return True
    return token.capitalised and norm.rstrip(".") in CALENDAR_WORDS


def date_word_mask(tokens: Sequence[Token]) -> list[bool]:
    """Tokens of the timestamp vocabulary (:func:`is_date_word`): the linker never makes an entity of
    them alone; only a longer KG name holding other words ("Theresa May", "Jan Kavan") may include them."""
    return [is_date_word(t) for t in tokens]
