"""``python -m temporag.cli`` is the ``temporag`` command (a venv without its script still runs it)."""

from temporag.cli import main

if __name__ == "__main__":  # importing the module (a scan of the kit) runs nothing
    raise SystemExit(main())
