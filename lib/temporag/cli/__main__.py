"""``python -m temporag.cli`` is the ``temporag`` command (a venv without its script still runs it)."""

from temporag.cli import main

raise SystemExit(main())
