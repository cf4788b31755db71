"""The leaderboard notebook in the kit's registry: it runs last (it reads every paper's committed run) and
has pages in the book but no first-page row.  It puts no row of its own on the leaderboard."""

from __future__ import annotations

from temporag.leaderboard.params import BOOK
from temporag.methods.registry import MethodEntry

ENTRY = MethodEntry("leaderboard", "leaderboard", order=1000, paper=False, book=BOOK)
