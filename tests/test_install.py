"""A plain install runs every command it offers.

The wheel is built from this checkout and installed into a fresh virtual
environment made from the base interpreter (not the development one, and
without its site-packages), holding exactly the distributions the wheel's
runtime requirements name, transitively — no development or optional extras.
Those distributions are copied from the development environment's installed
files, so the test needs no network and no package index; ``pip check`` then
proves the environment satisfies every declared requirement, and the commands
run as a user's would.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from channel_memory.cli import parser

ROOT = Path(__file__).parent.parent
OPTIONAL_EXTRA_MODULES = {"litellm"}
"""Top-level modules that only the ``llm`` extra installs."""


@dataclass(frozen=True)
class CleanInstall:
    wheel: Path
    python: Path
    bin: Path
    site_packages: Path
    distributions: frozenset[str]
    """Canonical names of the runtime closure, the project included."""


def wheel_requirements(wheel: Path) -> list[Requirement]:
    """The ``Requires-Dist`` lines a user's installer reads from the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    headers = text.split("\n\n", 1)[0]
    return [
        Requirement(line.split(":", 1)[1].strip())
        for line in headers.splitlines()
        if line.startswith("Requires-Dist:")
    ]


def applies(requirement: Requirement, extra: str) -> bool:
    """Whether an installer follows the requirement for the distribution itself (``extra``
    empty) or for one of its extras."""
    return requirement.marker is None or requirement.marker.evaluate({"extra": extra})


def runtime_closure(requirements: list[Requirement]) -> dict[str, importlib.metadata.Distribution]:
    """Every distribution the requirements pull in, found in this (development) environment."""
    found: dict[str, importlib.metadata.Distribution] = {}
    followed: set[tuple[str, str]] = set()
    pending = [r for r in requirements if applies(r, "")]
    while pending:
        requirement = pending.pop()
        distribution = importlib.metadata.distribution(requirement.name)
        assert distribution.version in requirement.specifier, (requirement, distribution.version)
        name = canonicalize_name(requirement.name)
        found[name] = distribution
        for extra in {"", *requirement.extras}:
            if (name, extra) not in followed:
                followed.add((name, extra))
                nested = map(Requirement, distribution.requires or [])
                pending.extend(r for r in nested if applies(r, extra))
    return found


def copy_installed(distribution: importlib.metadata.Distribution, site_packages: Path) -> None:
    """Lay a distribution's installed files (its RECORD) into another site-packages."""
    source = Path(str(distribution.locate_file("")))
    for entry in distribution.files or []:
        if entry.parts[0] == "..":  # console scripts of dependencies: not needed
            continue
        origin = source / entry
        if origin.is_file():
            target = site_packages / entry
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)


def base_python() -> Path:
    """The interpreter this environment was made from, which has no development packages."""
    base = Path(getattr(sys, "_base_executable", sys.executable))
    if Path(sys.prefix) != Path(sys.base_prefix) and base == Path(sys.executable):
        base = Path(sys.base_prefix) / "bin" / Path(sys.executable).name
    return base


def pip(*args: str, python: Path) -> subprocess.CompletedProcess[str]:
    """The development environment's pip, acting on another interpreter's environment."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check",
         *args],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def clean_install(tmp_path_factory: pytest.TempPathFactory) -> CleanInstall:
    folder = tmp_path_factory.mktemp("clean-install")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--wheel-dir", str(folder / "dist"), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    [wheel] = (folder / "dist").glob("channel_memory-*.whl")

    venv = folder / "venv"
    subprocess.run([str(base_python()), "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    closure = runtime_closure(wheel_requirements(wheel))
    for distribution in closure.values():
        copy_installed(distribution, site_packages)
    installed = pip("install", "--no-deps", "--no-index", "--quiet", str(wheel), python=python)
    assert installed.returncode == 0, installed.stderr
    return CleanInstall(
        wheel, python, venv / "bin", site_packages, frozenset({*closure, "channel-memory"})
    )


def run(
    install: CleanInstall, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CHANNEL_MEMORY_", "PYTHON", "VIRTUAL_ENV"))
    }
    environment["PATH"] = f"{install.bin}{os.pathsep}{environment.get('PATH', '')}"
    return subprocess.run(
        [str(install.bin / args[0]), *args[1:]],
        capture_output=True, text=True, timeout=timeout, check=False, env=environment,
        cwd=install.bin.parent,  # not the checkout, whose package would shadow the wheel
    )  # fmt: skip


def test_the_environment_holds_the_runtime_requirements_and_nothing_else(
    clean_install: CleanInstall,
) -> None:
    listed = run(
        clean_install,
        "python",
        "-c",
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted(d.metadata['Name'] for d in m.distributions())))",
    )
    assert listed.returncode == 0, listed.stderr
    names = {canonicalize_name(n) for n in json.loads(listed.stdout)}
    assert names == clean_install.distributions
    for dev_only in ("pytest", "hypothesis", "schemathesis", "mypy", "ruff", "litellm"):
        assert canonicalize_name(dev_only) not in names
    checked = pip("check", python=clean_install.python)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def commands() -> list[list[str]]:
    """Every command the installed script offers (``[]`` is the script itself)."""
    found: list[list[str]] = [[]]

    def walk(p: argparse.ArgumentParser, words: list[str]) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append([*words, name])
                    walk(sub, [*words, name])

    walk(parser(), [])
    return found


def test_every_command_answers_its_help_on_a_plain_install(clean_install: CleanInstall) -> None:
    offered = commands()
    assert ["demo"] in offered and ["rules", "test"] in offered
    # all at once: each is an interpreter start-up, and they are independent
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(lambda w: run(clean_install, "channel-memory", *w, "--help"), offered)
        for words, result in zip(offered, results, strict=True):
            assert result.returncode == 0, (words, result.stderr)
            assert result.stdout.startswith("usage: channel-memory"), (words, result.stdout)
    version = run(clean_install, "channel-memory", "--version")
    assert version.returncode == 0 and version.stdout.startswith("channel-memory "), version


def test_every_module_imports_on_a_plain_install(clean_install: CleanInstall) -> None:
    """Only modules of the optional ``llm`` extra may be missing."""
    script = (
        "import importlib, json, pkgutil, channel_memory\n"
        "missing = {}\n"
        "for m in pkgutil.walk_packages(channel_memory.__path__, 'channel_memory.'):\n"
        "    if m.name.endswith('.__main__'):\n"
        "        continue  # running it is the script, tested above\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except ModuleNotFoundError as exc:\n"
        "        missing[m.name] = exc.name\n"
        "print(json.dumps(missing))\n"
    )
    result = run(clean_install, "python", "-c", script)
    assert result.returncode == 0, result.stderr
    missing = json.loads(result.stdout)
    assert {name.split(".")[0] for name in missing.values()} <= OPTIONAL_EXTRA_MODULES, missing


def test_the_demo_runs_on_a_plain_install(clean_install: CleanInstall) -> None:
    result = run(clean_install, "channel-memory", "demo", "--feed-chars", "2000")
    assert result.returncode == 0, result.stderr
    assert "[7/7] the text feed at max_chars 2000" in result.stdout
    assert "NOT PROPAGATED" not in result.stdout
    assert "\n[channel-awareness] " in result.stdout


def test_the_demo_names_the_missing_extra_for_an_llm_pass(clean_install: CleanInstall) -> None:
    result = run(clean_install, "channel-memory", "demo", "--llm", "openai/gpt-4o-mini")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (
        "channel-memory: --llm needs the llm extra, which is not installed: "
        "pip install 'channel-memory[llm]'\n"
    )
    assert result.stdout == ""


def minutes_ago(minutes: int) -> str:
    """An RFC 3339 time by the wall clock, which the installed commands run on."""
    moment = datetime.now(UTC) - timedelta(minutes=minutes)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_commands_work_on_a_database_on_a_plain_install(
    clean_install: CleanInstall, tmp_path: Path
) -> None:
    database = tmp_path / "cm.db"
    events = tmp_path / "events.jsonl"
    events.write_text(
        json.dumps(
            {
                "type": "message",
                "channel_id": "floor",
                "message": {
                    "id": "1",
                    "author_name": "desk-lead",
                    "created_at": minutes_ago(5),
                    "content": "FILLED 200 NVDA @ 131.20",
                },
            }
        )
        + "\n"
    )
    imported = run(clean_install, "channel-memory", "ingest", "--db", str(database), str(events))
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout.strip().splitlines()[-1])["inserted"] == 1
    derived = run(clean_install, "channel-memory", "worker", "--db", str(database), "--once")
    assert derived.returncode == 0, derived.stderr
    rules = ROOT / "channel_memory" / "worker" / "default_rules.toml"
    tested = run(
        clean_install, "channel-memory", "rules", "test", "--db", str(database), str(rules)
    )
    assert tested.returncode == 0, tested.stderr
