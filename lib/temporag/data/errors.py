"""The one error every loader raises for bad input: it names the file, the line and the fix."""

from __future__ import annotations

from pathlib import Path


class DataFormatError(ValueError):
    """A data file does not have the format its loader expects."""

    def __init__(self, path: str | Path, line: int | None, problem: str, hint: str = "") -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.hint = hint
        where = f"{Path(path).name} line {line}" if line is not None else f"{Path(path).name}"
        message = f"{where}: {problem}"
        if hint:
            message += f" — {hint}"
        message += f" ({path})"
        super().__init__(message)


class InputLimitError(DataFormatError):
    """A file past one of the kit's caps on untrusted input (:mod:`temporag.limits`: size, nesting depth):
    refused before anything reads further, whatever the loader."""


class MissingDataError(FileNotFoundError):
    """A data set file is absent; the message says how to get it."""

    def __init__(self, path: str | Path, dataset: str) -> None:
        self.path = str(path)
        self.dataset = dataset
        super().__init__(
            f"{dataset}: missing file {path}. Set TEMPORAG_DATA to a folder laid out like "
            f"shared/data (see data/README.md), or run `temporag data fetch {dataset}` "
            f"(offline: `temporag data fetch --from ../shared/data`)."
        )


def require_questions(path: str | Path, questions: list) -> list:
    """``questions`` when the file held some; a questions file with none (``[]``) is one line naming it,
    not a KeyError or IndexError deep inside a notebook."""
    if not questions:
        raise DataFormatError(
            path, None, "holds no questions", "a questions file needs at least one question record"
        )
    return questions
