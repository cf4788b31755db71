"""`make setup|reproduce|test TORCH=cpu|cuda`: which torch build each value installs, read from `make -n`
(a dry run: nothing is installed) on a copy of the Makefile, and a clear error for any other value."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CPU_LINE = ".venv/bin/pip install -q torch==2.13.0"
CUDA_LINE = ".venv/bin/pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cu130"

LOCKS = ("locks/kit.txt", "locks/llama-cpp-python.txt", "locks/weights.txt")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    """The Makefile, pyproject.toml and the locks (the stamp hashes them) in an empty folder: no venv, no
    stamps."""
    for name in ("Makefile", "pyproject.toml", *LOCKS):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def dry_run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    # under `make test` the parent make's MAKEFLAGS/MAKELEVEL would make this one print "Entering directory"
    inherited = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    env = {k: v for k, v in os.environ.items() if k not in inherited}
    return subprocess.run(
        ["make", "-n", *args], cwd=folder, capture_output=True, text=True, timeout=60, check=False, env=env
    )


def stamp(folder: Path, torch: str) -> str:
    hashed = b"".join((folder / name).read_bytes() for name in ("pyproject.toml", *LOCKS))
    digest = hashlib.sha256(hashed).hexdigest()[:12]
    return f".venv/.installed-{torch}-{digest}"


def torch_installs(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(".venv/bin/pip install -q torch")]


@pytest.mark.parametrize("target", ["setup", "reproduce", "test"])
def test_default_installs_the_cpu_wheel(checkout, target):
    out = dry_run(checkout, target)
    assert out.returncode == 0, out.stderr
    assert torch_installs(out.stdout) == [CPU_LINE]
    assert "download.pytorch.org" not in out.stdout
    assert f"touch {stamp(checkout, 'cpu')}" in out.stdout


@pytest.mark.parametrize("target", ["setup", "reproduce", "test"])
def test_torch_cuda_installs_the_pinned_version_from_the_cuda_index(checkout, target):
    out = dry_run(checkout, target, "TORCH=cuda")
    assert out.returncode == 0, out.stderr
    assert torch_installs(out.stdout) == [CUDA_LINE]
    assert f"touch {stamp(checkout, 'cuda')}" in out.stdout
    # a venv holding the CPU build drops it first (pip would call 2.13.0+cpu satisfied and keep it)
    assert "('cuda' == 'cpu'))\" \\\n  2>/dev/null || .venv/bin/pip uninstall -q -y torch" in out.stdout


def test_cuda_variant_can_be_chosen(checkout):
    out = dry_run(checkout, "setup", "TORCH=cuda", "TORCH_CUDA=cu126")
    assert torch_installs(out.stdout) == [CUDA_LINE.replace("cu130", "cu126")]


def installed(folder: Path, torch: str) -> list[Path]:
    """The stamps a finished `make setup TORCH=torch` leaves, oldest first (make compares their times):
    the venv, the kit with torch (core), the llama-cpp-python wheel, the final install."""
    digest = stamp(folder, torch).rsplit("-", 1)[1]
    llama = re.search(r'"llama-cpp-python==([^"]+)"', (folder / "pyproject.toml").read_text()).group(1)
    paths = [
        folder / ".venv" / ".base",
        folder / f".venv/.core-{torch}-{digest}",
        folder / f".venv/wheels/.built-llama-cpp-python-{llama}",
        folder / stamp(folder, torch),
    ]
    for age, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    for name in ("pyproject.toml", *LOCKS):
        os.utime(folder / name, (999_000, 999_000))
    return paths


def test_switching_the_build_reruns_setup(checkout):
    (checkout / ".venv" / "bin").mkdir(parents=True)
    cpu = installed(checkout, "cpu")
    assert torch_installs(dry_run(checkout, "setup").stdout) == []  # the CPU install is current
    assert torch_installs(dry_run(checkout, "setup", "TORCH=cuda").stdout) == [CUDA_LINE]
    installed(checkout, "cuda")
    for path in (cpu[1], cpu[3]):  # what setup's `rm -f .core-* .installed-*` leaves
        path.unlink()
    assert torch_installs(dry_run(checkout, "setup", "TORCH=cuda").stdout) == []
    assert torch_installs(dry_run(checkout, "setup").stdout) == [CPU_LINE]


@pytest.mark.parametrize("value", ["rocm", "CUDA", "gpu"])
def test_unknown_value_is_a_clear_error(checkout, value):
    out = dry_run(checkout, "setup", f"TORCH={value}")
    assert out.returncode != 0
    assert f"TORCH={value} is not a torch build this kit installs" in out.stderr
    assert "TORCH=cpu (the default) or TORCH=cuda" in out.stderr
    assert out.stdout == ""  # stopped before any recipe


def requirement_installs(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if "-r locks/kit.txt" in line]


def test_requirements_install_with_uv_by_default_and_pip_on_request(checkout):
    uv = dry_run(checkout, "setup")
    assert requirement_installs(uv.stdout) == [
        ".venv/bin/uv pip install --python .venv/bin/python -q --no-deps --require-hashes -r locks/kit.txt"
    ]
    assert ".venv/bin/pip install -q pip==25.3 uv==0.13.9" in uv.stdout
    # torch still comes from pip (the local CPU wheel, or the CUDA index), before uv sees the requirements
    assert uv.stdout.index(CPU_LINE) < uv.stdout.index("-r locks/kit.txt")
    pip = dry_run(checkout, "setup", "INSTALLER=pip")
    locked = ".venv/bin/pip install -q --no-deps --require-hashes -r locks/kit.txt"
    assert requirement_installs(pip.stdout) == [locked]
    bad = dry_run(checkout, "setup", "INSTALLER=conda")
    assert bad.returncode != 0 and "INSTALLER=conda is not an installer this kit uses" in bad.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_llama_build_include_switches_llama_cpps_common_library_off_again(checkout, tmp_path):
    # llama-cpp-python forces LLAMA_BUILD_COMMON ON before adding llama.cpp; the include the Makefile writes
    # must turn it off inside llama.cpp's project and nowhere else: a two-project stand-in run by cmake
    out = dry_run(checkout, "setup").stdout
    include = checkout / ".venv" / "llama-no-common.cmake"
    assert f"-DCMAKE_PROJECT_INCLUDE='{include}'" in out and "-DLLAVA_BUILD=OFF" in out
    [printf] = [line.strip() for line in out.splitlines() if line.strip().startswith("printf ")]
    written = tmp_path / "include.cmake"
    command = printf.removesuffix("\\").strip()  # the recipe line goes on with `> <the include>; \`
    subprocess.run(["bash", "-c", f"{command} > '{written}'"], check=True)
    src = tmp_path / "src"
    (src / "vendor").mkdir(parents=True)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.14)\nproject(llama_cpp LANGUAGES NONE)\n"
        'set(LLAMA_BUILD_COMMON ON CACHE BOOL "" FORCE)\nmessage(STATUS "outer: ${LLAMA_BUILD_COMMON}")\n'
        "add_subdirectory(vendor)\n"
    )
    (src / "vendor" / "CMakeLists.txt").write_text(
        'project("llama.cpp" LANGUAGES NONE)\nmessage(STATUS "llama.cpp: ${LLAMA_BUILD_COMMON}")\n'
    )
    for use_include, expected in ((True, "OFF"), (False, "ON")):
        args = [f"-DCMAKE_PROJECT_INCLUDE={written}"] if use_include else []
        build = tmp_path / f"build-{use_include}"
        done = subprocess.run(
            ["cmake", "-S", str(src), "-B", str(build), *args], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "-- outer: ON" in done.stdout and f"-- llama.cpp: {expected}" in done.stdout, done.stdout


def test_a_changed_lock_reruns_setup(checkout):
    (checkout / ".venv" / "bin").mkdir(parents=True)
    installed(checkout, "cpu")
    assert requirement_installs(dry_run(checkout, "setup").stdout) == []  # current
    with (checkout / "locks" / "kit.txt").open("a") as lock:
        lock.write("# a re-locked requirement\n")
    assert len(requirement_installs(dry_run(checkout, "setup").stdout)) == 1


def test_setup_compiles_the_installed_modules_once(checkout):
    """Where PYTHONDONTWRITEBYTECODE is set no process caches what it compiles: setup compiles the venv's
    modules once, after the install, and a venv compiled for this setup is not compiled again."""
    (checkout / ".venv" / "bin").mkdir(parents=True)
    installed(checkout, "cpu")
    out = dry_run(checkout, "setup").stdout
    assert out.splitlines()[0].startswith(".venv/bin/python -m compileall -q -j 0")
    compiled = checkout / stamp(checkout, "cpu").replace(".installed-", ".bytecode-")
    compiled.touch()
    os.utime(compiled, (1_000_010, 1_000_010))
    assert "compileall" not in dry_run(checkout, "setup").stdout
