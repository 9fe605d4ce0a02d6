"""``scrapy crawl news`` in a subprocess in ``example_project/``, offline on its bundled site;
the README's quick start, sample session and ``scrapy-simhash --help`` examples as printed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[1] / "example_project"
ARTICLES = {
    "Council approves 40-kilometre protected bike lane network",
    "Heatwave pushes regional power grid to record demand",
    "University divers map deep coral reefs off the northern cape",
    "Family bakery on Canal Street wins national sourdough prize",
    "Central library opens night school for adult learners",
}


def scrapy_crawl(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list]:
    out = tmp_path / "items.jsonl"
    command = [sys.executable, "-W", "error::DeprecationWarning:scrapy_simhash"]
    command += ["-m", "scrapy", "crawl", "news", "-O", str(out)]
    command += ["-s", f"SIMHASH_DIR={tmp_path / 'simhash'}", *args]
    result = subprocess.run(command, cwd=EXAMPLE, capture_output=True, text=True, timeout=120)
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result, items


def simhash_stats(stderr: str) -> dict[str, int]:
    """The ``simhash/*`` part of the stats dump."""
    return {k: int(v) for k, v in re.findall(r"'(simhash/[^']+)': (\d+)", stderr)}


def test_crawl_drops_copies_then_a_second_crawl_drops_everything_stored(tmp_path):
    first, items = scrapy_crawl(tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Warning" not in first.stderr
    # One page of each group is kept: the article, unless a copy's response came first (the
    # spider makes several requests at a time).
    assert len(items) == 5
    assert {
        re.sub(r" (\| The Riverside Gazette|- Metro Wire|\(print\))$", "", item["title"])
        for item in items
    } == ARTICLES
    assert all(re.fullmatch(r"[0-9a-f]{16}", item["fingerprint"]) for item in items)
    stats = simhash_stats(first.stderr)
    distances = {k: v for k, v in stats.items() if k.startswith("simhash/duplicate/distance/")}
    # six copies at distance 0, and the partner's copy of the coral survey, found by its
    # sentences at whatever distance its standfirst and notes put it
    assert sum(distances.values()) == 7 and distances["simhash/duplicate/distance/0"] == 6
    assert {k: v for k, v in stats.items() if k not in distances} == {
        "simhash/checked": 12,
        "simhash/unique": 5,
        "simhash/duplicate": 7,
        "simhash/duplicate/by/hamming": 6,
        "simhash/duplicate/by/sentences": 1,
        "simhash/skipped/dont_simhash": 1,  # the start page
        "simhash/skipped/not_html": 1,  # robots.txt
        "simhash/index/size": 5,
    }
    assert re.search(
        r"INFO: Simhash index \S+/simhash/news: 0 entries, max distance 3, ", first.stderr
    )
    assert "'item_scraped_count': 5," in first.stderr

    second, items = scrapy_crawl(tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert items == []
    assert "INFO: Simhash index" in second.stderr and "news: 5 entries" in second.stderr
    stats = simhash_stats(second.stderr)
    assert stats["simhash/checked"] == stats["simhash/duplicate"] == 12
    assert "simhash/unique" not in stats
    assert stats["simhash/index/size"] == 5


def test_with_simhash_turned_off_every_page_is_an_item(tmp_path):
    result, items = scrapy_crawl(tmp_path, "-s", "SIMHASH_ENABLED=False")
    assert result.returncode == 0, result.stderr[-3000:]
    # the five articles and their seven copies, none checked and none fingerprinted
    assert len(items) == 12
    assert len({item["url"] for item in items}) == 12
    assert all(item["fingerprint"] is None for item in items)
    assert simhash_stats(result.stderr) == {}
    assert not (tmp_path / "simhash").exists()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "SIMHASH_MAX_DISTANCE=70",
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got '70'",
        ),
        (
            "SIMHASH_MAX_DISTANCE=abc",
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got 'abc'",
        ),
    ],
)
def test_a_bad_setting_stops_the_crawl_and_its_last_line_names_it(tmp_path, setting, message):
    result, items = scrapy_crawl(tmp_path, "-s", setting)
    assert result.returncode == 1
    assert result.stderr.rstrip().splitlines()[-1] == f"ValueError: {message}"
    assert items == []
    assert "Spider opened" not in result.stderr


# -- the README's quick start, sample session and help examples, as printed ---------------------

ROOT = EXAMPLE.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The installing part every quick-start command starts with: replaced here by the venv that
#: runs this suite (no pip, no network); `.ci/quickstart` runs it for real on a fresh clone.
SETUP = re.compile(r"python3 -m venv \.venv && \.venv/bin/pip install -e \S+ && ")


def readme_blocks(section: str, language: str) -> list[str]:
    """The ``language`` code blocks of the README's ``section`` (a heading), up to the next
    heading of the same or a higher level."""
    heading = re.search(rf"^(#+) {re.escape(section)}$", README, re.M)
    assert heading is not None, section
    level = len(heading[1])
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(README, heading.end())
    text = README[heading.end() : end.start() if end else len(README)]
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def quick_start_commands() -> list[str]:
    commands = [block.strip() for block in readme_blocks("Quick start", "bash")]
    assert len(commands) == 2 and all("\n" not in c for c in commands), commands
    return commands


def cds_outside_subshells(command: str) -> list[int]:
    """Where ``command`` runs a ``cd`` that is not inside parentheses: a cd that outlives it."""
    found = []
    for cd in re.finditer(r"(?<![\w./-])cd\s", command):
        before = command[: cd.start()]
        if before.count("(") == before.count(")"):
            found.append(cd.start())
    return found


def _all_but_modules(_directory: str, names: list[str]) -> list[str]:
    """For ``shutil.copytree``: leave out every name but Python modules (no caches, no data)."""
    return [name for name in names if not name.endswith(".py")]


def a_root(tmp: Path) -> Path:
    """A stand-in for a fresh clone's root after the quick start's install: a copy of
    example_project/ (without its index or items), of tests/ and the bench's modules (a test
    imports one), pyproject.toml and README.md, and
    ``.venv`` pointing to the venv running this suite (the whole venv: its python finds its
    packages by the ``pyvenv.cfg`` beside its bin folder)."""
    root = tmp / "root"
    ignore = shutil.ignore_patterns(".scrapy", "items.jsonl", "__pycache__", ".venv")
    shutil.copytree(EXAMPLE, root / "example_project", ignore=ignore)
    shutil.copytree(ROOT / "tests", root / "tests", ignore=ignore)
    shutil.copytree(ROOT / "bench", root / "bench", ignore=_all_but_modules)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, root)
    (root / ".venv").symlink_to(sys.prefix)
    return root


def bash(script: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def venv() -> Path:
    """The venv running this suite, which the quick start's commands use as ``.venv``."""
    prefix = Path(sys.prefix)
    if not all((prefix / "bin" / name).exists() for name in ("scrapy", "scrapy-simhash")):
        pytest.skip(f"the suite does not run in a venv with scrapy and scrapy-simhash ({prefix})")
    return prefix


def test_quick_start_commands_are_for_the_root_and_cd_only_in_a_subshell():
    """Read, not run: each command begins with the install, its paths exist from the root,
    and a ``cd`` happens only inside ``( ... )``, so the shell stays in the root."""
    crawl, tests = quick_start_commands()
    for command in (crawl, tests):
        assert SETUP.match(command), command
        assert cds_outside_subshells(command) == [], command
    assert (
        SETUP.sub("", crawl)
        == "(cd example_project && ../.venv/bin/scrapy crawl news -O items.jsonl)"
    )
    assert SETUP.sub("", tests) == ".venv/bin/python -m pytest"
    assert (ROOT / "example_project" / "scrapy.cfg").is_file()
    assert cds_outside_subshells("cd a && (cd b) && abcd c") == [0]  # it sees a bare cd


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory, venv) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A root where the quick start's commands ran in one shell (see the test below)."""
    root = a_root(tmp_path_factory.mktemp("quick-start"))
    crawl, tests = (SETUP.sub("", c) for c in quick_start_commands())
    tests += " --collect-only -q -p no:cacheprovider"
    script = "\n".join(f'{command}\necho "rc=$?"' for command in (tests, crawl, tests))
    return root, bash(f"{script}\npwd", root)


def exit_codes(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The ``rc=N`` lines the quick-start script printed after each command."""
    return [line for line in done.stdout.splitlines() if line.startswith("rc=")]


def test_quick_start_commands_run_from_the_root_in_either_order(quick_start):
    """How: in a stand-in for the root (:func:`a_root`), one ``bash -c`` runs the quick
    start's commands as a user pastes them, in both orders (test command, example crawl,
    test command), each followed by ``echo "rc=$?"``, then ``pwd``. Each command is the
    README's less its install part (:data:`SETUP`: no pip or network in the suite; the venv
    running the suite stands in for ``.venv``), and the test command gets ``--collect-only``
    (running it would run this suite inside itself): it still starts pytest from the root
    on the project's config and finds every test. ``.ci/quickstart`` runs the commands
    whole, installs included, on a fresh clone.

    Each command succeeds after the other, the shell ends in the root, the crawl shows its
    stats, and nothing is installed into example_project/ (a pip run there would have made
    example_project/.venv)."""
    root, done = quick_start
    assert exit_codes(done) == ["rc=0"] * 3, done.stdout[-2000:] + done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == str(root)
    assert len(re.findall(r"^\d+ tests collected", done.stdout, re.M)) == 2
    assert "'simhash/duplicate': 7," in done.stderr
    assert "'item_scraped_count': 5," in done.stderr
    assert (root / "example_project" / ".scrapy" / "simhash" / "news" / "data.mdb").is_file()
    assert len((root / "example_project" / "items.jsonl").read_text().splitlines()) == 5
    assert not (root / "example_project" / ".venv").exists()


@pytest.fixture(scope="module")
def crawled_root(quick_start) -> Path:
    """The root after the quick start: the example crawl's index is in it."""
    root, done = quick_start
    if exit_codes(done) != ["rc=0"] * 3:
        pytest.fail("the quick start failed (see the test of the quick start)")
    return root


def session_steps(block: str) -> list[tuple[str, list[str]]]:
    """A console block as (command, the lines it printed)."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line:
            steps[-1][1].append(line)
    return steps


def normalized(lines: list[str], root: Path) -> list[str]:
    """What varies from one crawl to the next taken out: times, sizes on disk, the root, and
    the article shown as oldest and newest."""
    out = []
    for line in lines:
        line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", line)
        # The file grows with the number of commits, which the crawl's pace decides.
        line = re.sub(r"\d+\.\d KiB", "<size>", line)
        line = re.sub(rf"^(path: +){re.escape(str(root))}/", r"\1<root>/", line)
        line = re.sub(r"^(path: +)/home/me/scrapy-simhash/", r"\1<root>/", line)
        # Pages stored in one commit share a time: which is oldest or newest follows the
        # index's order.
        line = re.sub(r"^((?:oldest|newest): .*/news/)[\w-]+\.html$", r"\1<article>.html", line)
        out.append(line)
    return out


@pytest.mark.parametrize(
    ("section", "commands"),
    [("The example crawl", 3), ("Command line: `scrapy-simhash`", 11)],
    ids=["example-crawl", "sample-session"],
)
def test_readme_sessions_run_as_printed(crawled_root, tmp_path, section, commands):
    """Every command of the README's console sessions, as printed, from the root after the
    example crawl: exit code 0 (or what its ``echo $?`` shows) and the output shown (times,
    sizes and root aside; ``compact`` writes to a fresh folder instead of /tmp/news.compact)."""
    items = (crawled_root / "example_project" / "items.jsonl").read_text("utf-8")
    if "http://127.0.0.1:8617/" not in items:  # the spider served its site on a free port
        pytest.skip("port 8617 was taken during the example crawl: the README's URLs name it")
    blocks = readme_blocks(section, "console")
    assert len(blocks) == 1
    steps = session_steps(blocks[0])
    assert len(steps) >= commands
    compact_dest = str(tmp_path / "news.compact")
    for (command, expected), (after, shown) in zip(steps, [*steps[1:], ("", [])], strict=True):
        if command == "echo $?":
            continue
        done = bash(command.replace("/tmp/news.compact", compact_dest), crawled_root, 60)
        printed = (done.stdout + done.stderr).replace(compact_dest, "/tmp/news.compact")
        lines = [line for line in printed.splitlines() if line]  # as the session shows them
        got, want = (normalized(x, crawled_root) for x in (lines, expected))
        assert got == want, command
        assert [str(done.returncode)] == (shown if after == "echo $?" else ["0"]), command


def test_help_examples_run_as_printed(crawled_root):
    """The examples of ``scrapy-simhash --help``, from the root after the quick start."""
    shown = bash(".venv/bin/scrapy-simhash --help", crawled_root, 60)
    assert shown.returncode == 0
    examples = shown.stdout.split("\nexamples, ", 1)[1].split("\n", 1)[1]
    commands = [c.strip() for c in examples.replace("\\\n", " ").splitlines() if c.strip()]
    assert len(commands) == 3 and all(c.startswith(".venv/bin/scrapy-simhash ") for c in commands)
    for command in commands:
        done = bash(command, crawled_root, 60)
        assert (done.returncode, done.stderr) == (0, ""), command
        assert done.stdout.strip(), command


def _python_example(section: str, holding: str) -> str:
    """The README's one Python block that holds ``holding``, after the heading ``section``
    (found in the whole README: a comment line in a block reads as a heading to
    :func:`readme_blocks`)."""
    after = README[README.index(f"## {section}\n") :]
    blocks = re.findall(r"^```python\n(.*?)^```$", after, re.M | re.S)
    return next(b for b in blocks if holding in b)


@pytest.mark.parametrize(
    ("section", "holding", "printed"),
    [
        ("Fingerprints without Scrapy", "page_signature(text)", [r"17", r"True"]),
        (
            "The index without Scrapy",
            "SimhashIndex(",
            [
                r"https://example\.com/news/coral-survey\.html 17 sentences \{.*\}",
                r"\[Match\(.*key='https://example\.com/news/bike-lanes\.html', distance=0.*\)\]",
                r"\[\]",
            ],
        ),
        (
            "Crawls on many machines (scrapy-redis)",
            "RedisIndex(",
            [r"\[Match\(.*key='https://example\.com/a', distance=0.*\)\]"],
        ),
    ],
    ids=["fingerprints", "index", "redis"],
)
def test_readme_python_examples_run_as_printed(tmp_path, request, section, holding, printed):
    """The README's Python examples, as printed, from a root holding the example project: they
    run, and print what their comments say (the Redis one on the suite's server, not
    127.0.0.1:6379)."""
    code = _python_example(section, holding)
    if "RedisIndex(" in code:
        server = request.getfixturevalue("redis_server")
        code = code.replace("redis://127.0.0.1:6379/0", server.url)
        code = code.replace('"demo:simhash"', f'"{tmp_path.name}:demo"')
    (tmp_path / "example_project").symlink_to(EXAMPLE)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(printed), lines
    for line, expected in zip(lines, printed, strict=True):
        assert re.fullmatch(expected, line), line


def test_scrapy_shell_in_the_project_with_workers_answers(tmp_path, site):
    """``scrapy shell URL`` in a project with the add-on and a worker process: it builds the
    components before its spider, so the index was not open and its workers not started, and
    the page sent to them waited forever (the shell hung). It answers, the page checked."""
    command = [sys.executable, "-m", "scrapy", "shell", site.url("/news/bike-lanes.html")]
    command += ["-c", "(response.status, response.meta['simhash']['fingerprint'] is not None)"]
    command += ["-s", f"SIMHASH_DIR={tmp_path / 'simhash'}", "-s", "SIMHASH_WORKERS=1"]
    result = subprocess.run(command, cwd=EXAMPLE, capture_output=True, text=True, timeout=90)
    assert (result.returncode, result.stdout) == (0, "(200, True)\n"), result.stderr[-3000:]
