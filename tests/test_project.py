"""The project's own promises: CI runs the README's test command, the code is ruff-clean."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ci_commands() -> list[str]:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))]


def test_ci_installs_chromium_and_strace_then_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tools, first = _ci_commands()[:2]
    # Only where missing, and a failed install does not stop CI (the tests skip).
    assert tools.startswith("command -v chromium >/dev/null && command -v strace >/dev/null || {")
    assert "apt-get install -y -qq --no-install-recommends chromium strace;" in tools
    assert tools.endswith(
        '} || echo "Chromium or strace could not be installed: the tests that need them will skip"'
    )
    assert first.endswith(" || exit")
    assert first.removesuffix(" || exit") in readme.splitlines()


def test_ci_runs_the_suite_on_the_lowest_supported_scrapy() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    floor = re.search(r'^    "scrapy>=(\d+\.\d+)",$', pyproject, re.M)
    assert floor is not None
    assert _ci_commands()[2:] == [
        "python3 -m venv .venv-floor",
        f'.venv-floor/bin/pip install -e ".[test]" "scrapy=={floor[1]}.*"',
        ".venv-floor/bin/python -m pytest",
    ]
    assert f"Scrapy {floor[1]}+, tested" in readme


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


def test_the_package_loads_its_names_and_subpackages_on_first_use() -> None:
    """``import scrapy_simhash`` loads no numpy or LMDB (the command line starts before them);
    its names and subpackages are there on first use, as when it imported them at once."""
    code = (
        "import sys, scrapy_simhash\n"
        "assert 'numpy' not in sys.modules and 'lmdb' not in sys.modules\n"
        "assert scrapy_simhash.text.hamming(1, 3) == 1\n"
        "assert scrapy_simhash.index.SimhashIndex is scrapy_simhash.SimhashIndex\n"
        "assert 'page_signature' in dir(scrapy_simhash)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_scrapy_free_parts_import_without_scrapy() -> None:
    """The text, the index, the command line and the worker processes load no Scrapy and no
    Twisted."""
    code = (
        "import sys, scrapy_simhash\n"
        "from scrapy_simhash import SimhashIndex, simhash\n"
        "import scrapy_simhash.text, scrapy_simhash.index, scrapy_simhash.cli\n"
        "import scrapy_simhash.crawl.worker, scrapy_simhash.crawl.pages\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted'))\n"
        "assert not loaded, loaded\n"
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


def test_help_lists_the_components() -> None:
    import pydoc

    import scrapy_simhash

    text = pydoc.render_doc(scrapy_simhash, renderer=pydoc.plaintext)
    for name in ("SimhashMiddleware", "SimhashPipeline", "Addon", "NearDuplicate", "SimhashIndex"):
        assert f"class {name}(" in text
    assert "__getattr__" not in text


def test_imports_run_one_way() -> None:
    """``text`` imports nothing else of the package; ``index`` only ``text``; ``cli`` never
    ``crawl`` (read from the import lines of each module)."""
    allowed = {"text": set(), "index": {"text"}, "cli": {"text", "index"}}
    package = ROOT / "scrapy_simhash"
    for part, others in allowed.items():
        for module in (package / part).glob("*.py"):
            source = module.read_text(encoding="utf-8")
            used = set(re.findall(r"^\s*from \.\.(\w+)", source, re.M))
            used |= set(re.findall(r"^\s*(?:from|import) scrapy_simhash\.(\w+)", source, re.M))
            assert used <= others, f"{module.relative_to(ROOT)} imports {sorted(used - others)}"
            assert not re.search(r"^\s*(?:from|import) (?:scrapy|twisted)\b", source, re.M), module


def test_every_name_the_readme_promises_has_a_test() -> None:
    """Each setting, stat, meta key and CLI command and option the README names is spoken to
    by a test (``bench/readme_surface.py``; docs/mutation.md has its table)."""
    command = [sys.executable, str(ROOT / "bench" / "readme_surface.py"), "--missing"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
