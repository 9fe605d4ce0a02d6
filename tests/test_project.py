"""The project's own promises: CI runs the README's test command, the code is ruff-clean."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = [
        line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert len(command) == 1
    assert command[0] in readme


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed")
    out = subprocess.run(
        [ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_version_agrees() -> None:
    import scrapy_simhash

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(rf'^version = "{re.escape(scrapy_simhash.__version__)}"$', pyproject, re.M)


def test_fingerprints_and_index_import_without_scrapy() -> None:
    code = (
        "import sys, scrapy_simhash\n"
        "from scrapy_simhash import SimhashIndex, simhash\n"
        "assert not any(m == 'scrapy' or m.startswith('scrapy.') for m in sys.modules), "
        "sorted(m for m in sys.modules if m.startswith('scrapy.'))\n"
        "from scrapy_simhash import SimhashPipeline, SimhashMiddleware, NearDuplicate, Addon\n"
        "assert issubclass(NearDuplicate, __import__('scrapy').exceptions.DropItem)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


def test_public_names_resolve() -> None:
    import scrapy_simhash

    for name in scrapy_simhash.__all__:
        assert getattr(scrapy_simhash, name) is not None
    with pytest.raises(AttributeError):
        scrapy_simhash.NoSuchThing  # noqa: B018
