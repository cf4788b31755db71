"""`temporag --version` names the kit's version, the same one every results.json records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import temporag
from temporag import cli

REPO = Path(__file__).resolve().parents[1]


def test_version_prints_the_library_version_and_exits_0(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"temporag {temporag.__version__}\n"


def test_version_from_the_command_line():
    out = subprocess.run(
        [sys.executable, "-m", "temporag.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO / "lib"), "PATH": "/usr/bin:/bin"},
    ).stdout
    assert out.strip() == f"temporag {temporag.__version__}" and temporag.__version__.count(".") == 2
