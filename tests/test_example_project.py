"""``scrapy crawl news`` in a subprocess in ``example_project/``, offline on its bundled site."""

from __future__ import annotations

import json
import re
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
    assert sum(distances.values()) == 6
    assert {k: v for k, v in stats.items() if k not in distances} == {
        "simhash/checked": 11,
        "simhash/unique": 5,
        "simhash/duplicate": 6,
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
    assert stats["simhash/checked"] == stats["simhash/duplicate"] == 11
    assert "simhash/unique" not in stats
    assert stats["simhash/index/size"] == 5


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
def test_a_bad_setting_stops_the_crawl_with_one_clear_line(tmp_path, setting, message):
    result, items = scrapy_crawl(tmp_path, "-s", setting)
    assert result.returncode == 1
    assert result.stderr.rstrip().splitlines()[-1] == f"ValueError: {message}"
    assert items == []
    assert "Spider opened" not in result.stderr
