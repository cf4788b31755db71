"""What a batch prints when it ends: one line per notebook run, with its error, kept outputs, heals and
note, each bounded so the table stays readable."""

from __future__ import annotations

from temporag.run.runner import RESUME, RunOutcome


def summary(outcomes: list[RunOutcome]) -> str:
    lines = ["notebook      status    seconds  output"]
    for o in outcomes:
        # o.shown: the status with what the run warned about inside its notebook, counted
        lines.append(f"{o.name:<13} {o.shown:<9} {o.seconds:7.1f}  {o.output_dir or o.executed or ''}")
        if o.error:
            lines.append("    " + o.error.strip().splitlines()[-1][:300])
        if o.kept:
            lines.append(f"    this run's outputs: {o.kept} (the last complete run, if any, is unchanged)")
        lines += [f"    healed: {h}" for h in o.healed]  # each one line, bounded where it is made
        if o.note:
            lines.append("    note: " + clip_note(o.note))
    return "\n".join(lines)


def clip_note(note: str, width: int = 300) -> str:
    """A run's note for one summary line: whole when it fits, else cut at a word boundary with "…" — what
    comes before the closing :data:`RESUME` (a long last error) is cut, never how to resume."""
    tail = f"; {RESUME}" if note.endswith(f"; {RESUME}") else ""
    head = note[: len(note) - len(tail)]
    room = max(width - len(tail), 40)
    if len(head) > room:
        head = head[: room - 1].rsplit(" ", 1)[0].rstrip(" ,;:—-") + "…"
    return head + tail
