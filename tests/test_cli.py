"""The ``scrapy-simhash`` command (and ``scrapy simhash``) on real LMDB indexes in tmp_path."""

from __future__ import annotations

import errno
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import lmdb
import lxml.html
import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash.cli import main
from scrapy_simhash.cli.open_index import reword
from scrapy_simhash.cli.output import Progress
from scrapy_simhash.crawl.middleware import SimhashMiddleware
from scrapy_simhash.index import FORMAT_VERSION, DamagedIndexError, SimhashIndex
from scrapy_simhash.index.layout import build_layout
from scrapy_simhash.index.storage import META
from scrapy_simhash.text.extract import extract_text
from scrapy_simhash.text.fingerprint import FINGERPRINT_VERSION, Fingerprinter
from scrapy_simhash.text.signature import page_signature
from tests.test_scrapy_crawl import ARTICLES, COPIES, SiteSpider  # the loopback site's crawl

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "example_project" / "site"

A = 0x0123456789ABCDEF
B = 0xFEDCBA9876543210
C = 0x5555AAAA5555AAAA
DAY = 86400.0
NOW = time.time()

ARTICLE = (
    "The harbour authority approved the new ferry timetable on Monday after three months of "
    "consultation with islanders, fishermen and the tourism board. Crossings will leave every "
    "forty minutes in summer instead of every hour, and the last boat back from the mainland "
    "will sail at eleven at night. Residents had asked for a later return for years, said the "
    "chair of the island council, who called the decision a relief for nurses and students who "
    "work evening shifts in town. The operator will lease a second vessel for the busy season "
    "and hire twelve crew members, most of them from the islands themselves."
)
PAGE_TEXT = (
    "Volunteers counted more than four hundred nesting terns on the shingle spit this spring, "
    "the highest number since the reserve opened. Wardens fenced off the colony in April and "
    "asked walkers to keep dogs on leads along the beach path. The birds arrive from West "
    "Africa each year and lay their eggs directly on the stones, where high tides and foxes "
    "are the main threats. A camera on a pole now streams the colony to the visitor centre, "
    "and school groups have booked every morning slot until the chicks fledge in July."
)
PAGE = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Terns return</title></head>
<body><nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article><h1>Terns return</h1><p>{PAGE_TEXT}</p></article>
<footer>Reserve news, all rights reserved</footer></body></html>"""


def _fp(text: str) -> int:
    fingerprint = Fingerprinter().fingerprint(text)
    assert fingerprint is not None
    return fingerprint


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"text": tmp_path / "article.txt", "html": tmp_path / "page.html"}
    paths["text"].write_text(ARTICLE, encoding="utf-8")
    paths["html"].write_text(PAGE, encoding="utf-8")
    paths["short"] = tmp_path / "short.txt"
    paths["short"].write_text("Too short to fingerprint.", encoding="utf-8")
    return paths


@pytest.fixture
def index_path(tmp_path: Path, files: dict[str, Path]) -> str:
    """An index of 8 pages: a cluster of 3 around A, one of 2 around B, and 3 loners."""
    page_text = extract_text(files["html"].read_bytes())
    assert page_text is not None
    entries = [
        (A, "https://example.com/a", NOW - 40 * DAY),
        (A ^ 0b1, "https://example.com/a-print", NOW - 30 * DAY),
        (A ^ 0b111, "https://example.com/a-amp", NOW - 20 * DAY),
        (B, "https://example.com/b", NOW - 10 * DAY),
        (B ^ (1 << 63 | 1 << 10), "https://example.com/b-mirror", NOW - 5 * DAY),
        (C, "https://example.com/c", NOW - 1 * DAY),
        (_fp(ARTICLE), "https://example.com/ferry", NOW - 2 * DAY),
        (_fp(page_text), "https://example.com/terns", NOW - 3 * DAY),
    ]
    path = str(tmp_path / "index")
    with SimhashIndex(path, max_distance=3) as index:
        index.insert_many((fp, url, {"url": url, "seen": seen}) for fp, url, seen in entries)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def urls(rows: object) -> list[tuple[int, str]]:
    assert isinstance(rows, list)
    return [(row["distance"], row["url"]) for row in rows]


# -- info ------------------------------------------------------------------------------------


def _rows(text: str) -> list[tuple[str, str]]:
    """The ``label: value`` lines of an object's table (``info``), values stripped."""
    return [
        (label, value.strip()) for label, value in (ln.split(":", 1) for ln in text.splitlines())
    ]


def test_info_table(capsys, index_path):
    code, out, err = run(capsys, "info", index_path)
    assert (code, err) == (0, "")
    lines = dict(_rows(out))
    assert lines["entries"] == "8"
    assert lines["fingerprints"] == "8 distinct"
    assert lines["k"] == "3"
    assert lines["layout"].startswith("4x16: 4 tables for k=3")
    assert lines["prefix bits"] == "16"
    assert lines["fingerprint version"] == str(FINGERPRINT_VERSION)
    assert lines["numbers"] == "features"
    assert lines["format version"] == str(FORMAT_VERSION)
    assert "measured on 8 entries" in lines["candidates/probe"]
    assert lines["oldest"] == f"{_iso(NOW - 40 * DAY)}  https://example.com/a"
    assert lines["newest"] == f"{_iso(NOW - 1 * DAY)}  https://example.com/c"


def _readme_info_labels() -> list[str]:
    """The rows of ``info`` in the README's sample session, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("$ .venv/bin/scrapy-simhash info example_project/.scrapy/simhash/news\n")
    sample = readme[start:].split("\n\n", 1)[0].split("\n", 1)[1]
    return [label for label, _ in _rows(sample)]


def test_info_shows_the_rows_of_the_readme(capsys, index_path):
    code, out, err = run(capsys, "info", index_path)
    assert (code, err) == (0, "")
    rows = _rows(out)
    assert [label for label, _ in rows] == _readme_info_labels()
    values = dict(rows)
    assert values["path"] == os.path.abspath(index_path)
    data = os.stat(os.path.join(index_path, "data.mdb"))  # blocks taken, and the file's size
    taken, size = data.st_blocks * 512 / 1024, data.st_size / 1024
    assert values["bytes on disk"] == f"{taken:.1f} KiB (data.mdb {size:.1f} KiB)"
    assert values["drop records"] == "0 pages dropped as near duplicates"
    assert values["repeated sentences"].startswith("0 ")


def test_info_shows_the_prefix_bits_of_an_uneven_layout(capsys, tmp_path):
    # k=2 in 3 blocks of 22, 21 and 21 bits: each table's prefix is one block
    path = str(tmp_path / "k2")
    with SimhashIndex(path, max_distance=2, layout=build_layout(2, 3)) as index:
        index.insert(A, "https://example.com/a")
    code, out, err = run(capsys, "info", path)
    assert (code, err) == (0, "")
    values = dict(_rows(out))
    assert values["layout"].startswith("22+21+21: ")
    assert values["prefix bits"] == "21-22"


def test_info_sizes_in_binary_units():
    """The sizes ``info`` shows: bytes below 1 KiB, then KiB, MiB, GiB and TiB to a tenth,
    TiB however large."""
    from scrapy_simhash.cli.commands import _size

    sizes = [0, 1023, 1024, 1536, 5 << 20, (3 << 30) - 1, 1 << 40, 1 << 50]
    assert [_size(n) for n in sizes] == [
        "0 B",
        "1,023 B",
        "1.0 KiB",
        "1.5 KiB",
        "5.0 MiB",
        "3.0 GiB",
        "1.0 TiB",
        "1024.0 TiB",
    ]


def test_info_shows_the_recent_tables_and_a_merge_in_progress(capsys, tmp_path, monkeypatch):
    import scrapy_simhash.index.tables as index_module

    monkeypatch.setattr(index_module, "_RECENT_MIN", 20)
    path = str(tmp_path / "big")
    with SimhashIndex(path, expected_size=10**7) as ix:
        for i in range(23):  # the 20th begins a merge; each insert after it merges a table
            ix.insert(i << 40, f"https://example.com/{i}")
    code, out, err = run(capsys, "info", path)
    assert (code, err) == (0, "")
    lines = dict(_rows(out))
    assert lines["tables"] == "10"
    assert lines["recent tables"] == (
        "4, holding 23 fingerprints (merged into the main tables from 20);"
        " merging 20, 4 of 10 tables done"
    )
    info = run_json(capsys, "info", path)
    assert isinstance(info, dict)
    assert (info["recent_fingerprints"], info["merging"], info["merged_tables"]) == (23, 20, 4)
    code, out, err = run(capsys, "verify", path)
    assert (code, err) == (0, "")


def test_info_json(capsys, index_path):
    info = run_json(capsys, "info", index_path)
    assert isinstance(info, dict)
    assert info["path"] == os.path.abspath(index_path)
    assert (info["entries"], info["fingerprints"], info["k"], info["tables"]) == (8, 8, 3, 4)
    assert info["prefix_bits"] == [16, 16, 16, 16]
    # 64 bits in 4 blocks of 16 for k=3: one leading block a table, no sub-blocks
    assert (info["layout_name"], info["blocks"], info["sub_blocks"]) == ("4x16", [16] * 4, [])
    assert (info["recent_tables"], info["recent_fingerprints"], info["merging"]) == (0, 0, 0)
    assert (info["format_version"], info["fingerprint_version"], info["numbers"]) == (
        FORMAT_VERSION,
        FINGERPRINT_VERSION,
        True,
    )
    assert 0 < info["map_used"] <= info["bytes_on_disk"] + info["map_size"]
    assert 0 < info["map_used_fraction"] < 1
    assert info["candidates_per_probe"] >= 1  # each sampled probe finds at least itself
    assert info["oldest"]["url"] == "https://example.com/a"
    assert info["oldest"]["fingerprint"] == "0123456789abcdef"
    assert info["newest"]["url"] == "https://example.com/c"
    assert info["oldest"]["seen"] < info["newest"]["seen"]  # ISO 8601 sorts as time


def test_info_shows_counts_with_separators_and_urls_as_written(capsys, tmp_path):
    """The table groups thousands; ``--json`` is indented by two and keeps non-ASCII
    characters as they are (an address in Japanese reads as one, not as escapes)."""
    path = str(tmp_path / "jp")
    with SimhashIndex(path) as ix:
        ix.insert_many([((i << 24) | 0xABC, f"https://例え.jp/記事/{i}", {}) for i in range(1200)])
    code, out, err = run(capsys, "info", path)
    assert (code, err) == (0, "")
    lines = dict(_rows(out))
    assert lines["entries"] == "1,200"
    code, out, err = run(capsys, "info", path, "--json")
    assert (code, err) == (0, "")
    assert out.startswith('{\n  "') and "https://例え.jp/記事/" in out and "\\u" not in out
    assert json.loads(out)["entries"] == 1200


# -- lookup, explain -----------------------------------------------------------------------


@pytest.mark.parametrize("given", ["0123456789abcdef", "0x0123456789ABCDEF", str(A)])
def test_lookup_fingerprint_forms(capsys, index_path, given):
    rows = run_json(capsys, "lookup", index_path, given)
    assert urls(rows) == [
        (0, "https://example.com/a"),
        (1, "https://example.com/a-print"),
        (3, "https://example.com/a-amp"),
    ]


def test_lookup_table_and_k(capsys, index_path):
    code, out, _ = run(capsys, "lookup", index_path, f"{A:016x}", "-k", "1")
    assert code == 0
    assert out.splitlines() == [
        "DISTANCE  FINGERPRINT       SEEN                  URL",
        f"0         0123456789abcdef  {_iso(NOW - 40 * DAY)}  https://example.com/a",
        f"1         0123456789abcdee  {_iso(NOW - 30 * DAY)}  https://example.com/a-print",
    ]
    rows = run_json(capsys, "lookup", index_path, f"{A:016x}", "-k", "3")  # the index's k
    assert [distance for distance, _ in urls(rows)] == [0, 1, 3]


@pytest.mark.parametrize(
    "argv",
    [
        ["-k", "1", f"{A:016x}"],
        ["--json", "-k", "1", f"{A:016x}"],
        [f"{A:016x}", "-k", "1"],
        ["-k", "1", "--json", f"{A:016x}"],
    ],
)
def test_lookup_takes_its_options_before_or_after_the_fingerprint(capsys, index_path, argv):
    code, out, err = run(capsys, "lookup", index_path, *argv)
    assert (code, err) == (0, "")
    assert "https://example.com/a-print" in out and "https://example.com/a-amp" not in out


@pytest.mark.parametrize(
    ("argv", "unrecognized"),
    [
        (["lookup", "INDEX", "-k", "1", f"{A:016x}", "more"], "more"),
        (["lookup", "INDEX", "--bogus", f"{A:016x}"], "--bogus"),
        (["info", "INDEX", "extra"], "extra"),
        (["verify", "INDEX", "--bogus"], "--bogus"),
    ],
)
def test_arguments_left_over_are_a_usage_error_of_the_command(
    capsys, index_path, argv, unrecognized
):
    argv = [index_path if a == "INDEX" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"usage: scrapy-simhash {argv[0]} ")
    assert err.splitlines()[-1] == (
        f"scrapy-simhash {argv[0]}: error: unrecognized arguments: {unrecognized}"
    )


def _iso(seen: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seen))


def test_lookup_by_url_text_and_html(capsys, index_path, files):
    rows = run_json(capsys, "lookup", index_path, "--url", "https://example.com/b-mirror")
    assert urls(rows) == [(0, "https://example.com/b-mirror"), (2, "https://example.com/b")]
    rows = run_json(capsys, "lookup", index_path, "--text", str(files["text"]))
    assert urls(rows) == [(0, "https://example.com/ferry")]
    rows = run_json(capsys, "lookup", index_path, "--html", str(files["html"]))
    assert urls(rows) == [(0, "https://example.com/terns")]


def _listing(tmp_path: Path) -> Path:
    """A blog's home page showing two posts whole, each under a title linking to its page."""
    paragraphs = "".join(f"<p>{p}</p>" for p in ARTICLE.split("\n") if p.strip())
    posts = "".join(
        f'<div class="post"><h3 class="post-title"><a href="/{n}.html">Post {n}</a></h3>'
        f'<div class="post-body">{paragraphs}</div></div>'
        for n in range(2)
    )
    listing = tmp_path / "listing.html"
    listing.write_text(f"<html><body><main>{posts}</main></body></html>", encoding="utf-8")
    return listing


def test_lookup_of_a_listing_says_a_crawl_skips_it(capsys, index_path, tmp_path):
    """A page showing several posts whole is looked up by its text (one of the posts), and
    the table says that a crawl would let it through unchecked (SIMHASH_SKIP_LISTINGS)."""
    listing = _listing(tmp_path)
    code, out, _ = run(capsys, "lookup", index_path, "--html", str(listing))
    assert code == 0
    assert out.splitlines()[-1] == (
        f"{listing} shows 2 posts whole: a listing, which a crawl lets through unchecked and "
        "unstored (SIMHASH_SKIP_LISTINGS); its text is one of its posts"
    )
    code, out, _ = run(capsys, "lookup", index_path, "--html", str(tmp_path / "page.html"))
    assert "listing" not in out


def test_lookup_jsonl_and_no_match(capsys, index_path):
    code, out, _ = run(capsys, "lookup", index_path, f"{C ^ 0xF:016x}", "--jsonl")
    assert (code, out) == (0, "")
    code, out, _ = run(capsys, "lookup", index_path, f"{C ^ 0xF:016x}")
    assert out.splitlines()[1] == f"no stored page within 3 bits of {C ^ 0xF:016x}"
    code, out, _ = run(capsys, "lookup", index_path, f"{C:016x}", "--jsonl")
    row = json.loads(out)
    assert row == {
        "distance": 0,
        "rule": "hamming",
        "url": "https://example.com/c",
        "fingerprint": "5555aaaa5555aaaa",
        "seen": _iso(NOW - DAY),
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nothex"], "invalid fingerprint 'nothex': give 16 hex digits"),
        (["0x1" + "0" * 16], "invalid fingerprint '0x10000000000000000': more than 64 bits"),
        # a sign, or a space, that int() would take after 0x or in 16 hex digits
        (["--", "0x-1"], "invalid fingerprint '0x-1': give 16 hex digits"),
        (["--", "-000000000000001"], "invalid fingerprint '-000000000000001': give 16 hex"),
        (["--", "+000000000000001"], "invalid fingerprint '+000000000000001': give 16 hex"),
        (["0x+ff"], "invalid fingerprint '0x+ff': give 16 hex digits"),
        (["0x ff"], "invalid fingerprint '0x ff': give 16 hex digits"),
        (["--", "-1"], "invalid fingerprint '-1': give 16 hex digits"),
        (
            ["--url", "https://example.com/nope"],
            "no entry or drop record for https://example.com/nope in",
        ),
        (["0", "-k", "4"], "-k must be between 0 and 3 (the k this index was built with), got 4"),
    ],
)
def test_lookup_errors(capsys, index_path, argv, message):
    code, out, err = run(capsys, "lookup", index_path, *argv)
    assert (code, out) == (1, "")
    assert err.startswith(f"scrapy-simhash: error: {message}")
    assert err.count("\n") == 1


def test_lookup_too_short_and_missing_file(capsys, index_path, files, tmp_path):
    code, _, err = run(capsys, "lookup", index_path, "--text", str(files["short"]))
    assert code == 1
    assert err == (
        f"scrapy-simhash: error: {files['short']}: too short (2 content words, 20 needed),"
        " no fingerprint\n"
    )
    code, _, err = run(capsys, "lookup", index_path, "--html", str(tmp_path / "gone.html"))
    assert (code, err) == (1, f"scrapy-simhash: error: no such file: {tmp_path / 'gone.html'}\n")


def test_explain(capsys, index_path):
    obj = run_json(capsys, "explain", index_path, "https://example.com/a-amp")
    assert isinstance(obj, dict)
    assert (obj["url"], obj["fingerprint"], obj["k"]) == (
        "https://example.com/a-amp",
        f"{A ^ 0b111:016x}",
        3,
    )
    assert urls(obj["matches"]) == [
        (2, "https://example.com/a-print"),
        (3, "https://example.com/a"),
    ]
    code, out, _ = run(capsys, "explain", index_path, "https://example.com/a-amp", "-k", "2")
    assert code == 0
    assert "\nwithin k:       1 other stored page(s) within 2 bits\n" in out
    assert "\ndropped copies: 0 page(s) dropped as its near duplicates\n" in out
    assert out.splitlines()[-1].endswith("  https://example.com/a-print")
    code, _, err = run(capsys, "explain", index_path, "https://example.com/zzz")
    assert (code, err) == (
        1,
        f"scrapy-simhash: error: no entry or drop record for https://example.com/zzz in "
        f"{index_path} (a drop is recorded only with SIMHASH_DROP_RECORDS, the oldest "
        "evicted: try lookup --html with its page)\n",
    )


@pytest.mark.parametrize(
    ("argv", "last_line"),
    [
        (["lookup", "INDEX", "--url", ""], "scrapy-simhash lookup: error: --url must not be empty"),
        (["explain", "INDEX", ""], "scrapy-simhash explain: error: URL must not be empty"),
        (
            ["remove", "INDEX", "--url", "https://example.com/a", "--url", ""],
            "scrapy-simhash remove: error: --url must not be empty",
        ),
        (  # bytes that are not UTF-8 on the command line, as Python decodes them
            ["explain", "INDEX", "https://example.com/\udcff"],
            "scrapy-simhash explain: error: URL 'https://example.com/\\udcff' is not valid UTF-8",
        ),
        (
            ["remove", "INDEX", "--url", "\udcff"],
            "scrapy-simhash remove: error: --url '\\udcff' is not valid UTF-8",
        ),
    ],
)
def test_an_empty_or_undecodable_url_is_a_usage_error(capsys, index_path, argv, last_line):
    argv = [index_path if a == "INDEX" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"usage: scrapy-simhash {argv[0]} ")
    assert err.splitlines()[-1] == last_line
    assert len(_stored(capsys, index_path)) == 8  # remove removed nothing


# -- dump, clusters ------------------------------------------------------------------------


def test_dump_formats_agree(capsys, index_path):
    rows = run_json(capsys, "dump", index_path)
    code, out, err = run(capsys, "dump", index_path, "--jsonl")
    assert (code, err) == (0, "")  # no progress: stderr is not a terminal
    assert [json.loads(line) for line in out.splitlines()] == rows
    assert isinstance(rows, list)
    assert len(rows) == 8
    assert {r["url"]: r["fingerprint"] for r in rows}["https://example.com/b"] == f"{B:016x}"
    assert all(len(r["fingerprint"]) == 16 and "record" not in r for r in rows)
    code, out, _ = run(capsys, "dump", index_path)
    table = out.splitlines()
    assert table[0] == "FINGERPRINT       SEEN                  URL"
    assert table[1:] == [f"{r['fingerprint']}  {r['seen']}  {r['url']}" for r in rows]


@pytest.mark.parametrize(
    "command",
    [
        ["info", "INDEX"],
        ["lookup", "INDEX", f"{A:016x}"],
        ["explain", "INDEX", "https://example.com/a"],
        ["dump", "INDEX"],
        ["clusters", "INDEX"],
        ["fingerprint", "TEXT", "HTML"],
        ["remove", "INDEX", "--url", "https://example.com/c", "--dry-run"],
        ["report", "INDEX", "-o", "OUT"],
        ["verify", "INDEX"],
        ["compact", "INDEX", "OUT"],
    ],
    ids=lambda command: command[0],
)
def test_every_command_gives_one_json_document_or_json_lines(
    capsys, tmp_path, index_path, files, command
):
    """README: "Every command prints a table; ``--json`` gives one JSON document and
    ``--jsonl`` JSON lines": the lines are the document's rows (or the document, for a
    command that answers with one object), and the table is not JSON."""
    out = tmp_path / "out"
    where = {"INDEX": index_path, "TEXT": str(files["text"]), "HTML": str(files["html"])}
    argv = [where.get(a, str(out) if a == "OUT" else a) for a in command]
    outputs = {}
    for form in ("--json", "--jsonl", None):
        shutil.rmtree(out, ignore_errors=True)  # compact writes to a new folder
        code, printed, err = run(capsys, *argv, *([form] if form else []))
        assert (code, err) == (0, "")
        outputs[form] = printed
    document = json.loads(outputs["--json"])
    lines = [json.loads(line) for line in outputs["--jsonl"].splitlines()]
    assert lines == (document if isinstance(document, list) else [document])
    assert document  # something to compare
    if command[0] == "report":  # the page is in the file; the answer names it
        assert document == {"report": str(out), "k": 3} and out.read_text().startswith("<!")
    with pytest.raises(json.JSONDecodeError):
        json.loads(outputs[None])


def test_times_are_utc_whatever_the_local_time_zone(capsys, index_path, monkeypatch):
    """Times are written in UTC (their ``Z`` says so) on a machine set to another zone."""
    monkeypatch.setenv("TZ", "CST-8")  # POSIX form: UTC+8, no time zone database needed
    time.tzset()
    try:
        assert time.localtime(0).tm_hour == 8  # the zone is in effect
        rows = run_json(capsys, "dump", index_path)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert isinstance(rows, list)
    seen = {row["url"]: row["seen"] for row in rows}
    assert seen["https://example.com/a"] == _iso(NOW - 40 * DAY)  # time.gmtime: UTC


def test_json_output_keeps_text_readable(capsys, tmp_path):
    """Titles and URLs in other scripts are written as they are in ``--json`` and
    ``--jsonl`` (not as \\u escapes), in rows and in a command's one object: the output is
    UTF-8 JSON a person can read. A dumped entry carries its record's other fields."""
    path = str(tmp_path / "index")
    with SimhashIndex(path) as index:
        index.insert(A, "https://zh.example/新闻", title="同一篇文章")
    for fmt in ("--json", "--jsonl"):
        code, out, _ = run(capsys, "dump", path, fmt)
        assert code == 0 and "https://zh.example/新闻" in out
        first = json.loads(out.splitlines()[0] if fmt == "--jsonl" else out)
        row = first if fmt == "--jsonl" else first[0]
        assert row["record"] == {"title": "同一篇文章"}  # the record's fields besides seen
        code, out, _ = run(capsys, "lookup", path, f"{A:016x}", fmt)
        assert code == 0 and "https://zh.example/新闻" in out
        code, out, _ = run(capsys, "explain", path, "https://zh.example/新闻", fmt)  # an object
        assert code == 0 and '"https://zh.example/新闻"' in out


def test_clusters(capsys, index_path):
    groups = run_json(capsys, "clusters", index_path)
    assert groups == [
        {
            "cluster": 1,
            "size": 3,
            "urls": [
                "https://example.com/a",
                "https://example.com/a-amp",
                "https://example.com/a-print",
            ],
            "dropped": [],
        },
        {
            "cluster": 2,
            "size": 2,
            "urls": ["https://example.com/b", "https://example.com/b-mirror"],
            "dropped": [],
        },
    ]
    code, out, err = run(capsys, "clusters", index_path, "-k", "1")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "CLUSTER  SIZE    PAGE        URL",
        "1        2       kept        https://example.com/a",
        "1        2       kept        https://example.com/a-print",
    ]
    code, out, _ = run(capsys, "clusters", index_path, "-k", "0")
    assert out.splitlines()[1:] == ["no near-duplicates within 0 bits and no drop records"]


# -- fingerprint ---------------------------------------------------------------------------


def test_fingerprint_files(capsys, files):
    rows = run_json(capsys, "fingerprint", str(files["text"]), str(files["short"]))
    assert rows == [
        {
            "file": str(files["text"]),
            "fingerprint": f"{_fp(ARTICLE):016x}",
            "words": 58,
            "reason": None,
            "posts": 0,
        },
        {
            "file": str(files["short"]),
            "fingerprint": None,
            "words": 2,
            "reason": "too short (2 content words, 20 needed)",
            "posts": 0,
        },
    ]
    code, out, _ = run(capsys, "fingerprint", "--html", str(files["html"]))
    page_fp = _fp(extract_text(files["html"].read_bytes()) or "")
    assert code == 0
    # columns of 16 and 7 characters, two spaces apart: the values line up under their names
    assert out.splitlines() == [
        "FINGERPRINT       WORDS    FILE",
        f"{page_fp:016x}  55       {files['html']}",
    ]
    # files on either side of an option are all read, in the order given
    rows = run_json(capsys, "fingerprint", str(files["text"]), "--json", str(files["short"]))
    assert [row["file"] for row in rows] == [str(files["text"]), str(files["short"])]


def test_fingerprint_of_a_listing_says_a_crawl_skips_it(capsys, files, tmp_path):
    """A page showing several posts whole has the fingerprint of its text (one of its
    posts), with its posts counted in the row, and the table says that a crawl lets it
    through unchecked; a page of one article, and a text file, count none."""
    listing = _listing(tmp_path)
    page = files["html"]
    rows = run_json(capsys, "fingerprint", "--html", str(listing), str(page))
    assert isinstance(rows, list)
    assert [(row["posts"], row["reason"]) for row in rows] == [(2, None), (0, None)]
    assert rows[0]["fingerprint"] == f"{_fp(extract_text(listing.read_bytes()) or ''):016x}"
    code, out, _ = run(capsys, "fingerprint", "--html", str(listing), str(page))
    assert code == 0
    assert out.splitlines()[3:] == [
        f"{listing} shows 2 posts whole: a listing, which a crawl lets through unchecked and "
        "unstored (SIMHASH_SKIP_LISTINGS); its text is one of its posts"
    ]
    rows = run_json(capsys, "fingerprint", str(listing))  # as text, its markup is words
    assert isinstance(rows, list)
    assert rows[0]["posts"] == 0


PRICED = (
    ARTICLE + " A single crossing will cost 4.50 euros, a return 8.20 euros, and a car 32.00 "
    "euros each way; the season pass stays at 145.00 euros."
)


def test_fingerprint_counts_numbers_and_reads_bad_utf8(capsys, tmp_path):
    """``fingerprint`` computes what a crawl does (numbers as features, the default), and a
    text file with bytes that are not UTF-8 is read with them replaced, not refused."""
    priced = tmp_path / "priced.txt"
    priced.write_text(PRICED, encoding="utf-8")
    assert Fingerprinter(numbers=False).fingerprint(PRICED) != _fp(PRICED)  # numbers count
    broken = tmp_path / "broken.txt"
    broken.write_bytes(ARTICLE.encode("utf-8").replace(b"ferry", b"f\xe9rry"))
    replaced = ARTICLE.replace("ferry", "f\ufffdrry")
    rows = run_json(capsys, "fingerprint", str(priced), str(broken))
    assert isinstance(rows, list)
    assert [row["fingerprint"] for row in rows] == [f"{_fp(PRICED):016x}", f"{_fp(replaced):016x}"]


def test_fingerprint_of_a_binary_file_is_not_text(capsys, tmp_path):
    """A file of binary bytes given as text has no fingerprint, with the reason (it used to
    be signed as replacement characters and whatever letters the bytes held)."""
    binary = tmp_path / "image.bin"
    binary.write_bytes(random.Random(1).randbytes(50_000))
    text = tmp_path / "article.txt"
    text.write_text(ARTICLE, encoding="utf-8")
    rows = run_json(capsys, "fingerprint", str(binary), str(text))
    assert isinstance(rows, list)
    assert [(row["fingerprint"], row["reason"]) for row in rows] == [
        (None, "not text (binary bytes)"),
        (f"{_fp(ARTICLE):016x}", None),
    ]


def test_an_index_whose_path_is_not_utf8_is_read_and_copied(capsys, tmp_path):
    """A folder name of bytes that are not UTF-8 (read from a listing of an old disk): the
    index opens and copies (py-lmdb encoded a str path strictly, and failed on it)."""
    folder = os.fsdecode(os.fsencode(str(tmp_path)) + b"/index-\xff")
    copy = os.fsdecode(os.fsencode(str(tmp_path)) + b"/copy-\xe9")
    with SimhashIndex(folder) as index:
        index.insert(_fp(ARTICLE), "https://example.com/a")
    assert run_json(capsys, "info", folder)["entries"] == 1
    code, out, err = run(capsys, "info", folder)  # capsys's stream is strict UTF-8
    assert (code, err) == (0, "") and "index-\\udcff\n" in out
    code, _, err = run(capsys, "compact", folder, copy)
    assert code == 0, err
    with SimhashIndex(copy, readonly=True) as index:
        assert list(index) == ["https://example.com/a"]


def test_a_closed_standard_output_is_said_in_one_line(tmp_path):
    """Started with its standard output closed (``>&-``): one line on stderr, exit 1 (it
    was a traceback within a traceback, of writing to None)."""
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "fingerprint", "-"],
        input="x",
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.close(1),
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (
        1,
        "scrapy-simhash: error: the standard output is closed\n",
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", [["info"], ["dump", "--jsonl"]])
def test_output_to_a_full_disk_is_said_in_one_line(index_path, command):
    """Output to ``/dev/full`` (a full disk): one line saying so, exit 1 (it was an
    "unexpected OSError"), whether the output fails at its end or on the way."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "scrapy_simhash", command[0], index_path, *command[1:]],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert (done.returncode, done.stderr) == (
        1,
        "scrapy-simhash: error: cannot write the output: No space left on device\n",
    )


#: Runs a command as root without root's way past file permissions (CI runs as root), so
#: that a mode denies it as it denies any user.
_NO_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


def _permissions_apply(tmp_path: Path) -> bool:
    """Whether a file of mode 000 is refused to a command run under :data:`_NO_OVERRIDE`."""
    if shutil.which("setpriv") is None:
        return False
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    done = subprocess.run([*_NO_OVERRIDE, "cat", str(probe)], capture_output=True, timeout=60)
    probe.chmod(0o644)
    return done.returncode != 0


def test_an_index_this_user_cannot_open_is_said_so(tmp_path, index_path):
    """An index whose files this user may not read, or whose lock.mdb it may not write
    (every LMDB reader does: its table of readers), is refused as "permission denied",
    saying which: it was "not a scrapy-simhash index (no index databases in it)"."""
    if not _permissions_apply(tmp_path):
        pytest.skip("setpriv cannot take root's permission override away here")
    folder = Path(index_path)

    def info() -> str:
        done = subprocess.run(
            [*_NO_OVERRIDE, sys.executable, "-m", "scrapy_simhash", "info", index_path],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1 and done.stdout == "", done
        return done.stderr

    start = f"scrapy-simhash: error: cannot open {index_path}: permission denied"
    (folder / "lock.mdb").chmod(0o444)
    folder.chmod(0o555)
    try:
        assert info().startswith(f"{start}: every reader of an index writes its lock.mdb")
        folder.chmod(0o755)
        (folder / "lock.mdb").chmod(0o644)
        (folder / "data.mdb").chmod(0)
        assert info() == f"{start} (its data.mdb cannot be read)\n"
        (folder / "data.mdb").chmod(0o644)
        folder.chmod(0)
        assert info() == f"{start} (the folder cannot be read)\n"
    finally:
        folder.chmod(0o755)
        (folder / "lock.mdb").chmod(0o644)
        (folder / "data.mdb").chmod(0o644)


def test_fingerprint_of_a_file_it_cannot_read_prints_nothing(tmp_path):
    """``fingerprint --json`` of a readable file and one it may not read: one line and no
    output (it printed the first row, then failed: a JSON array left open)."""
    if not _permissions_apply(tmp_path):
        pytest.skip("setpriv cannot take root's permission override away here")
    readable, unreadable = tmp_path / "a.txt", tmp_path / "b.txt"
    readable.write_text(ARTICLE, encoding="utf-8")
    unreadable.write_text(ARTICLE, encoding="utf-8")
    unreadable.chmod(0)
    done = subprocess.run(
        [*_NO_OVERRIDE, sys.executable, "-m", "scrapy_simhash", "fingerprint", "--json",
         str(readable), str(unreadable)],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        f"scrapy-simhash: error: cannot read {unreadable}: permission denied\n",
    )


def test_a_ctrl_c_while_the_command_loads_is_one_line(tmp_path):
    """The script's module loads nothing heavy (numpy, LMDB, Scrapy, the text and index
    code: half a second, in which a Ctrl-C printed a traceback of the imports); a Ctrl-C
    while the command line's modules load (planted: their import raises KeyboardInterrupt)
    ends it as one during the command does: one line, exit 130."""
    light = (
        "import sys, scrapy_simhash.__main__; "
        "print(sorted(m for m in ('numpy', 'lmdb', 'scrapy', 'trafilatura', "
        "'scrapy_simhash.index', 'scrapy_simhash.text', 'scrapy_simhash.cli') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", light], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")
    planted = textwrap.dedent(
        """
        import sys

        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name == "scrapy_simhash.cli":
                    raise KeyboardInterrupt

        sys.meta_path.insert(0, Interrupt())
        from scrapy_simhash.__main__ import run

        sys.argv = ["scrapy-simhash", "info", "index"]
        raise SystemExit(run())
        """
    )
    done = subprocess.run([sys.executable, "-c", planted], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (
        130,
        "",
        "scrapy-simhash: error: interrupted\n",
    )


def test_lookup_of_a_file_signs_it_as_the_index_was_signed(capsys, tmp_path):
    """On an index built without numbers as features, ``lookup --text`` signs the file
    without them too, and finds the page stored from the same text at distance 0; on one
    built with them, with them."""
    path = str(tmp_path / "index")
    signature = page_signature(PRICED, Fingerprinter(numbers=False))
    assert signature is not None
    with SimhashIndex(path, numbers=False) as index:
        index.insert(signature, "https://example.com/fares")
    priced = tmp_path / "priced.txt"
    priced.write_text(PRICED, encoding="utf-8")
    rows = run_json(capsys, "lookup", path, "--text", str(priced))
    assert urls(rows) == [(0, "https://example.com/fares")]
    # and on an index with numbers as features (the default), with them
    default = str(tmp_path / "default")
    with SimhashIndex(default) as index:
        index.insert(page_signature(PRICED), "https://example.com/fares")
    rows = run_json(capsys, "lookup", default, "--text", str(priced))
    assert urls(rows) == [(0, "https://example.com/fares")]


def test_fingerprint_html_without_text(capsys, tmp_path):
    empty = tmp_path / "empty.html"
    empty.write_text("<html><body></body></html>", encoding="utf-8")
    rows = run_json(capsys, "fingerprint", "--html", str(empty))
    assert rows == [
        {"file": str(empty), "fingerprint": None, "words": 0, "reason": "no main text", "posts": 0}
    ]
    code, out, err = run(capsys, "fingerprint", str(tmp_path / "nope.txt"))
    assert out == ""
    assert code == 1
    assert err == f"scrapy-simhash: error: no such file: {tmp_path / 'nope.txt'}\n"
    code, out, err = run(capsys, "fingerprint", str(empty), str(tmp_path))
    assert (code, out, err) == (1, "", f"scrapy-simhash: error: {tmp_path} is a directory\n")


# -- remove, verify, compact ---------------------------------------------------------------


def _stored(capsys, index_path) -> list[str]:
    return sorted(row["url"] for row in run_json(capsys, "dump", index_path))  # type: ignore[index, union-attr]


def test_remove_by_url(capsys, index_path):
    obj = run_json(capsys, "remove", index_path, "--url", "https://example.com/a-amp")
    assert obj == {
        "removed": ["https://example.com/a-amp"],
        "count": 1,
        "left": 7,
        "dry_run": False,
        "drop_records_removed": [],
        "drop_records_left": 0,
    }
    assert "https://example.com/a-amp" not in _stored(capsys, index_path)
    argv = ["--url", "https://example.com/c", "--url", "https://x/y", "--url", "https://x/z"]
    code, out, err = run(capsys, "remove", index_path, *argv)
    assert code == 1
    assert out == "removed: 1 entries, 6 left\n"
    assert err == f"scrapy-simhash: error: no entry for https://x/y, https://x/z in {index_path}\n"
    code, _, _ = run(capsys, "verify", index_path)
    assert code == 0


def test_remove_older_than(capsys, index_path):
    """A dry run says what would be left, as the run itself says what is (and as the dry
    run's drop records line does: it said the 8 entries there before, '3 entries, 8 left')."""
    obj = run_json(capsys, "remove", index_path, "--older-than", "15", "--dry-run")
    assert isinstance(obj, dict)
    assert (obj["count"], obj["left"]) == (3, 5)
    code, out, _ = run(capsys, "remove", index_path, "--older-than", "15", "--dry-run")
    assert (code, out) == (0, "would remove: 3 entries, 5 left\n")
    assert len(_stored(capsys, index_path)) == 8
    obj = run_json(capsys, "remove", index_path, "--older-than", "15")
    assert isinstance(obj, dict)
    assert sorted(obj["removed"]) == [
        "https://example.com/a",
        "https://example.com/a-amp",
        "https://example.com/a-print",
    ]
    assert _stored(capsys, index_path) == [
        "https://example.com/b",
        "https://example.com/b-mirror",
        "https://example.com/c",
        "https://example.com/ferry",
        "https://example.com/terns",
    ]
    assert run_json(capsys, "lookup", index_path, f"{A:016x}") == []


def test_remove_older_than_counts_days_of_86400_seconds_and_takes_zero(capsys, tmp_path):
    """An entry 10 s older than 30 days is removed by ``--older-than 30``, one a minute newer
    is not (a day of one second more would keep the first); ``--older-than 0`` removes every
    entry seen before the command."""
    path = str(tmp_path / "index")
    now = time.time()
    with SimhashIndex(path) as index:
        index.insert(A, "https://example.com/old", seen=now - 30 * 86400 - 10)
        index.insert(B, "https://example.com/recent", seen=now - 30 * 86400 + 60)
    obj = run_json(capsys, "remove", path, "--older-than", "30")
    assert isinstance(obj, dict)
    assert (obj["removed"], obj["left"]) == (["https://example.com/old"], 1)
    obj = run_json(capsys, "remove", path, "--older-than", "0")
    assert isinstance(obj, dict)
    assert (obj["removed"], obj["left"]) == (["https://example.com/recent"], 0)


def test_an_interrupted_remove_says_what_it_left(capsys, tmp_path, monkeypatch):
    """Ctrl-C in the middle of ``remove``: exit 130, and the line says that what was removed
    stays removed and that the same command removes the rest, which it does (it said
    "interrupted" alone, and the index had lost entries)."""
    path = str(tmp_path / "index")
    old = time.time() - 40 * 86400
    with SimhashIndex(path) as index:
        index.insert_many(
            (i * 0x9E3779B97F4A7C15 % 2**64, f"k{i}", {"seen": old}) for i in range(2500)
        )
    removals = [0]
    remove = SimhashIndex.remove

    def interrupted_at_the_1500th(self, key):
        removals[0] += 1
        if removals[0] == 1500:
            raise KeyboardInterrupt
        return remove(self, key)

    monkeypatch.setattr(SimhashIndex, "remove", interrupted_at_the_1500th)
    code, out, err = run(capsys, "remove", path, "--older-than", "30")
    assert (code, out) == (130, "")
    assert err.endswith(
        "scrapy-simhash: error: interrupted: what was removed before it stays removed; the "
        "same command again removes the rest\n"
    )
    with SimhashIndex(path, readonly=True) as index:
        assert len(index) == 1001  # raised between two removals: the 1,499 before it commit
    monkeypatch.setattr(SimhashIndex, "remove", remove)
    assert run_json(capsys, "remove", path, "--older-than", "30")["left"] == 0


def test_remove_usage(capsys, index_path):
    code, _, err = run(capsys, "remove", index_path)
    assert code == 2
    assert err.splitlines()[-1] == (
        "scrapy-simhash remove: error: give --url or --older-than (one of them)"
    )


@pytest.mark.parametrize("days", ["nan", "inf", "-1"])
def test_remove_refuses_a_bad_age(capsys, index_path, days):
    code, _, err = run(capsys, "remove", index_path, "--older-than", days)
    assert code == 2
    assert err.splitlines()[-1] == (
        f"scrapy-simhash remove: error: --older-than must be a number of days >= 0, "
        f"got {float(days)}"
    )


def test_compact_refuses_a_folder_inside_the_index(capsys, index_path):
    dest = os.path.join(index_path, "copy")
    code, out, err = run(capsys, "compact", index_path, dest)
    assert (code, out) == (1, "")
    assert err == (
        f"scrapy-simhash: error: {dest} is inside the index {index_path}: "
        "compact into another folder\n"
    )
    assert not os.path.exists(dest)


def test_dump_into_a_reader_that_stops_early_exits_quietly(tmp_path):
    """``dump INDEX | head -1``: the first line, no error, exit status 0 (the dump, 20,000
    lines, is far larger than the pipe's buffer: writing it fails once the reader is gone)."""
    path = tmp_path / "big"
    with SimhashIndex(path) as index:
        index.insert_many((i << 20, f"https://example.com/page/{i}", {}) for i in range(20_000))
    command = [sys.executable, "-m", "scrapy_simhash", "dump", str(path)]
    dump = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert dump.stdout is not None
    first = dump.stdout.readline()
    dump.stdout.close()  # the reader goes away, as head does
    _, err = dump.communicate(timeout=60)
    assert first.split() == [b"FINGERPRINT", b"SEEN", b"URL"]
    assert (dump.returncode, err) == (0, b"")


def test_verify_ok_and_damaged(capsys, index_path):
    code, out, err = run(capsys, "verify", index_path)
    assert (code, out, err) == (0, "ok: 8 entries, 4 tables and 0 drop records agree\n", "")
    assert run_json(capsys, "verify", index_path) == {
        "ok": True,
        "entries": 8,
        "tables": 4,
        "drop_records": 0,
        "problems": [],
    }
    env = lmdb.open(index_path, max_dbs=80)
    try:
        table = env.open_db(b"t02", dupsort=True, dupfixed=True)
        with env.begin(write=True) as txn:
            cur = txn.cursor(table)
            assert cur.first()
            cur.delete()
    finally:
        env.close()
    code, out, err = run(capsys, "verify", index_path, "--json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    assert len(report["problems"]) == 1
    assert report["problems"][0].startswith("table 2 lacks 0x")
    assert (report["entries"], report["tables"]) == (8, 4)
    assert err == f"scrapy-simhash: error: {index_path} is damaged: 1 problem(s) found\n"
    code, out, err = run(capsys, "verify", index_path)  # the table names the problem
    assert (code, out) == (1, f"problem: {report['problems'][0]}\n")


def test_compact(capsys, index_path, tmp_path):
    dest = tmp_path / "copy"
    code, out, err = run(capsys, "compact", index_path, str(dest))
    assert (code, err) == (0, "")
    assert out.startswith(f"compacted: {index_path} (")
    assert run_json(capsys, "dump", str(dest)) == run_json(capsys, "dump", index_path)
    code, _, err = run(capsys, "compact", index_path, str(dest))
    assert (code, err) == (
        1,
        f"scrapy-simhash: error: {dest} exists and is not an empty directory\n",
    )
    # --json: the sizes before and after, as on disk
    moved = tmp_path / "copy2"
    done = run_json(capsys, "compact", index_path, str(moved))
    assert done == {
        "source": index_path,
        "dest": str(moved),
        "bytes_before": os.path.getsize(os.path.join(index_path, "data.mdb")),
        "bytes_after": os.path.getsize(moved / "data.mdb"),
    }
    # an empty folder is a fine destination; a file is not
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, "compact", index_path, str(empty))[0] == 0
    (tmp_path / "a-file").write_text("x")
    code, _, err = run(capsys, "compact", index_path, str(tmp_path / "a-file"))
    assert (code, err) == (
        1,
        f"scrapy-simhash: error: {tmp_path / 'a-file'} exists and is not an empty directory\n",
    )


# -- errors --------------------------------------------------------------------------------


def _plain_lmdb(path: Path) -> None:
    env = lmdb.open(str(path))
    with env.begin(write=True) as txn:
        txn.put(b"key", b"value")
    env.close()


def _future_format(path: str) -> None:
    env = lmdb.open(path, max_dbs=80)
    meta = env.open_db(b"meta")
    with env.begin(write=True) as txn:
        txn.put(b"format_version", b"99", db=meta)
    env.close()


@pytest.mark.parametrize("command", ["info", "dump", "clusters", "verify", "remove"])
def test_errors_are_one_line(capsys, tmp_path, command):
    extra = ["--older-than", "1"] if command == "remove" else []
    a_file = tmp_path / "file.txt"
    a_file.write_text("hello", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "data.mdb").write_bytes(b"\x01" * 8192)
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "data.mdb").write_bytes(b"")  # was "cannot read: Bad file descriptor"
    _plain_lmdb(tmp_path / "plain")
    SimhashIndex(str(tmp_path / "no-meta")).close()  # the index's databases, its meta emptied
    env = lmdb.open(str(tmp_path / "no-meta"), max_dbs=80)
    with env.begin(write=True) as txn:
        txn.drop(env.open_db(META, txn=txn), delete=False)
    env.close()
    cases = {
        tmp_path / "missing": "no index at {}",
        a_file: "{} is not a scrapy-simhash index",
        tmp_path / "empty": "{} is not a scrapy-simhash index",
        tmp_path / "junk": "{} is not a scrapy-simhash index (its data.mdb is not an LMDB file)",
        tmp_path / "zero": "{} is not a scrapy-simhash index (its data.mdb is empty)",
        tmp_path / "plain": (
            "{} is not a scrapy-simhash index (an LMDB environment without index metadata)"
        ),
        tmp_path / "no-meta": (
            "{} is not a scrapy-simhash index (an LMDB environment without index metadata)"
        ),
    }
    for path, message in cases.items():
        code, out, err = run(capsys, command, str(path), *extra)
        assert (code, out) == (1, "")
        assert err == f"scrapy-simhash: error: {message.format(path)}\n"
    assert not (tmp_path / "missing").exists()  # nothing created, even by remove


def _drop_table(path: str, name: bytes = b"t01") -> None:
    """Delete one of the index's table databases, as plain LMDB can."""
    env = lmdb.open(path, max_dbs=80)
    try:
        with env.begin(write=True) as txn:
            txn.drop(env.open_db(name, txn=txn), delete=True)
    finally:
        env.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["info"],
        ["dump"],
        ["clusters"],
        ["lookup", f"{A:016x}"],
        ["explain", "https://example.com/a"],
        ["remove", "--older-than", "1", "--dry-run"],
        ["remove", "--older-than", "1"],
        ["report", "-o", "-"],
        ["compact", "DEST"],
    ],
)
def test_a_missing_table_database_is_said_as_damage(capsys, index_path, tmp_path, argv):
    """A table's database deleted from the environment: the damaged index's one line (and
    ``verify`` names what is missing), not a KeyError."""
    _drop_table(index_path)
    argv = [str(tmp_path / "copy") if a == "DEST" else a for a in argv]
    code, out, err = run(capsys, argv[0], index_path, *argv[1:])
    assert (code, out) == (1, "")
    assert err == (
        f"scrapy-simhash: error: {index_path}: index damaged: its database 't01' is missing;"
        f" 'scrapy-simhash verify {index_path}' checks it whole\n"
    )
    code, out, err = run(capsys, "verify", index_path)
    assert (code, out) == (1, "problem: index damaged: its database 't01' is missing\n")
    assert err == f"scrapy-simhash: error: {index_path} is damaged: 1 problem(s) found\n"


@pytest.mark.parametrize("name", [b"t01", b"docs", b"sents", b"dkept"])
def test_a_writable_open_never_makes_a_missing_database_again(index_path, name):
    """An index that has its parameters and lacks one of its databases is damaged, opened to
    write as to read: the database is not made again, empty, under the pages it held."""
    _drop_table(index_path, name)
    for readonly in (False, True):
        with pytest.raises(DamagedIndexError, match=f"its database '{name.decode()}' is missing"):
            SimhashIndex(index_path, readonly=readonly)
    env = lmdb.open(index_path, max_dbs=80, readonly=True)
    try:
        with env.begin() as txn:
            names = {bytes(key) for key, _ in txn.cursor()}
    finally:
        env.close()
    assert name not in names
    with SimhashIndex(index_path, reset=True) as ix:  # what repairs it, by starting over
        assert len(ix) == 0
        ix.insert(A, "https://example.com/a")
    with SimhashIndex(index_path, readonly=True) as ix:
        assert ix.get("https://example.com/a") is not None


def test_compact_into_redis_of_what_is_no_index_says_so_in_one_line(capsys, index_path, tmp_path):
    """``compact DIR redis://... --key K``: DIR is opened as every command opens an index
    (before the server is reached: none listens on port 1)."""
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "data.mdb").write_bytes(b"\x01" * 8192)
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "data.mdb").write_bytes(b"")  # was "cannot read: Bad file descriptor"
    _plain_lmdb(tmp_path / "plain")
    _drop_table(index_path)
    cases = {
        tmp_path / "junk": "{} is not a scrapy-simhash index (its data.mdb is not an LMDB file)",
        tmp_path / "zero": "{} is not a scrapy-simhash index (its data.mdb is empty)",
        tmp_path / "missing": "no index at {}",
        tmp_path / "plain": (
            "{} is not a scrapy-simhash index (an LMDB environment without index metadata)"
        ),
        Path(index_path): (
            "{0}: index damaged: its database 't01' is missing;"
            " 'scrapy-simhash verify {0}' checks it whole"
        ),
    }
    for path, message in cases.items():
        code, out, err = run(capsys, "compact", str(path), "redis://127.0.0.1:1/0", "--key", "k")
        assert (code, out) == (1, "")
        assert err == f"scrapy-simhash: error: {message.format(path)}\n"
    assert not (tmp_path / "missing").exists()


def test_a_permission_error_is_said_as_such():
    """As root (CI) no folder can be made unreadable: the rewording is checked directly, for
    an OSError of errno EACCES (as LMDB raises it) and a PermissionError."""
    from_lmdb = lmdb.Error("ix: Permission denied")  # an LMDB error carrying its errno
    from_lmdb.errno = errno.EACCES
    for exc in (OSError(errno.EACCES, "Permission denied"), PermissionError("denied"), from_lmdb):
        assert str(reword("ix", exc)) == "cannot open ix: permission denied"
    assert str(reword("ix", OSError(errno.EIO, "I/O error"))) == "[Errno 5] I/O error"
    assert str(reword("ix", ValueError("k must be in 0..32"))) == "k must be in 0..32"


def test_a_folder_of_spider_indexes_is_not_an_index_and_the_error_names_them(capsys, tmp_path):
    """<SIMHASH_DIR> is the folder a user sees after a crawl: the error names its spiders."""
    simhash_dir = tmp_path / "simhash"
    SimhashIndex(str(simhash_dir / "news")).close()
    code, out, err = run(capsys, "info", str(simhash_dir))
    assert (code, out) == (1, "")
    assert err == (
        f"scrapy-simhash: error: {simhash_dir} is not a scrapy-simhash index: it holds the"
        f" index of spider news: give {simhash_dir / 'news'}\n"
    )
    SimhashIndex(str(simhash_dir / "blog")).close()
    (simhash_dir / "notes").mkdir()  # a folder without an index is no spider's
    code, out, err = run(capsys, "dump", str(simhash_dir))
    assert (code, out) == (1, "")
    assert err == (
        f"scrapy-simhash: error: {simhash_dir} is not a scrapy-simhash index: it holds the"
        f" indexes of spiders blog, news: give one of them, such as {simhash_dir / 'blog'}\n"
    )


def test_unknown_format(capsys, index_path):
    _future_format(index_path)
    code, out, err = run(capsys, "info", index_path)
    assert (code, out) == (1, "")
    assert err == (
        f"scrapy-simhash: error: index {index_path!r} was built with format_version=99,"
        f" not {FORMAT_VERSION} (this code's format)\n"
    )


@pytest.mark.parametrize(
    ("argv", "last_line"),
    [
        ([], "scrapy-simhash: error: the following arguments are required: COMMAND"),
        (["frobnicate"], "scrapy-simhash: error: argument COMMAND: invalid choice: 'frobnicate'"),
        (["info"], "scrapy-simhash info: error: the following arguments are required: INDEX"),
        (["dump", "x", "--json", "--jsonl"], "scrapy-simhash dump: error: argument --jsonl:"),
        (["lookup", "x"], "scrapy-simhash lookup: error: give one of FINGERPRINT, --url, --html"),
        (["lookup", "x", "-k", "two", "0"], "scrapy-simhash lookup: error: argument -k:"),
        (
            ["report", "x"],
            "scrapy-simhash report: error: the following arguments are required: -o/--output",
        ),
    ],
)
def test_usage_errors(capsys, argv, last_line):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1].startswith(last_line)


def test_help(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in (
        "info",
        "lookup",
        "explain",
        "dump",
        "clusters",
        "fingerprint",
        "remove",
        "verify",
        "compact",
    ):
        assert re.search(rf"^    {command}\b", out, re.MULTILINE)
    # outside a Scrapy project, a subcommand's example takes an index folder (in one, a spider:
    # test_scrapy_command_takes_a_spider_name_in_a_project)
    code, out, _ = run(capsys, "info", "--help")
    assert code == 0 and out.endswith("example:\n  scrapy-simhash info INDEX --json\n")


def test_progress_only_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet, shown = io.StringIO(), Terminal()
    for stream in (quiet, shown):
        assert list(Progress("dump", 3, stream).track("abc")) == ["a", "b", "c"]
    assert quiet.getvalue() == ""
    assert "dump: 1 / 3" in shown.getvalue()
    assert shown.getvalue().endswith("\r\033[K")
    unknown = Terminal()  # no total known: the count alone
    assert list(Progress("dump", 0, unknown).track("ab")) == ["a", "b"]
    assert "\r\033[Kdump: 1\r" in unknown.getvalue() and " / " not in unknown.getvalue()


# -- other surfaces, concurrency -----------------------------------------------------------


def _subprocess(
    argv: list[str],
    cwd: Path | None = None,
    *,
    wrapper: tuple[str, ...] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python argv`` with this checkout importable (run under ``wrapper``, such as strace,
    and with ``preexec_fn`` set up in the child)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*wrapper, sys.executable, *argv],
        cwd=cwd,
        env=env,
        preexec_fn=preexec_fn,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_python_m(index_path):
    done = _subprocess(["-m", "scrapy_simhash", "info", index_path, "--jsonl"])
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["entries"] == 8


def test_debug_shows_the_libraries_log_lines_and_only_with_it(tmp_path):
    # trafilatura says when it discards a page with an empty body (a warning of its own, at
    # DEBUG as extract_text passes it on), and logs its steps at DEBUG: none of it reaches the
    # user's terminal unless --debug asks for it
    empty = tmp_path / "empty.html"
    empty.write_text("<html><body></body></html>", encoding="utf-8")
    argv = ["-m", "scrapy_simhash", "fingerprint", "--html", str(empty)]
    quiet = _subprocess(argv)
    assert (quiet.returncode, quiet.stderr) == (0, "")
    assert quiet.stdout.splitlines()[1].split() == ["-", "0", str(empty)]
    loud = _subprocess([*argv[:2], "--debug", *argv[2:]])
    assert (loud.returncode, loud.stdout) == (0, quiet.stdout)
    lines = loud.stderr.splitlines()
    # as `name LEVEL: message`
    assert any(re.fullmatch(r"trafilatura\.[\w.]+ DEBUG: discarding data.*", li) for li in lines)


def test_scrapy_command(index_path, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "scrapy.cfg").write_text("[settings]\ndefault = cli_settings\n", encoding="utf-8")
    (project / "cli_settings.py").write_text(
        'COMMANDS_MODULE = "scrapy_simhash.commands"\n', encoding="utf-8"
    )
    scrapy = ["-m", "scrapy.cmdline", "simhash"]
    done = _subprocess([*scrapy, "lookup", index_path, f"{A:016x}", "-k", "1", "--json"], project)
    assert (done.returncode, done.stderr) == (0, "")
    assert urls(json.loads(done.stdout)) == [
        (0, "https://example.com/a"),
        (1, "https://example.com/a-print"),
    ]
    done = _subprocess([*scrapy, "info", str(tmp_path / "nothing")], project)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"scrapy simhash: error: no index at {tmp_path / 'nothing'}\n"
    done = _subprocess([*scrapy, "info", index_path, "--bogus"], project)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith("usage: scrapy simhash info ")
    assert done.stderr.splitlines()[-1] == (
        "scrapy simhash info: error: unrecognized arguments: --bogus"
    )


PROJECT_SPIDERS = """
import scrapy


class News(scrapy.Spider):
    name = "news"


class Shop(scrapy.Spider):
    name = "shop"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def make_project(tmp_path: Path) -> Path:
    """A Scrapy project with spiders news and shop, SIMHASH_DIR "idx" (so inside .scrapy), and
    an index of news (2 entries) where its crawl would open it."""
    root = tmp_path / "project"
    (root / "deeper").mkdir(parents=True)
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj_settings\n", encoding="utf-8")
    (root / "proj_settings.py").write_text(
        'SPIDER_MODULES = ["proj_spiders"]\nSIMHASH_DIR = "idx"\n'
        'COMMANDS_MODULE = "scrapy_simhash.commands"\n',
        encoding="utf-8",
    )
    (root / "proj_spiders.py").write_text(PROJECT_SPIDERS, encoding="utf-8")
    with SimhashIndex(str(root / ".scrapy" / "idx" / "news")) as index:
        index.insert_many([(A, "https://n/a", {}), (B, "https://n/b", {})])
    return root


def _scrapy_simhash(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return _subprocess(["-m", "scrapy.cmdline", "simhash", *argv], cwd)


def _info(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert (done.returncode, done.stderr) == (0, "")
    info = json.loads(done.stdout)
    assert isinstance(info, dict)
    return info


def test_scrapy_command_takes_a_spider_name_in_a_project(project, tmp_path):
    """A spider's name opens the index its crawl opens: SIMHASH_DIR inside the project's
    .scrapy (found from a subfolder too, as Scrapy finds the project), or as set with -s."""
    news = project / ".scrapy" / "idx" / "news"
    for cwd in (project, project / "deeper"):
        info = _info(_scrapy_simhash(cwd, "info", "news", "--json"))
        assert (info["path"], info["entries"]) == (str(news), 2)
    elsewhere = tmp_path / "elsewhere"
    SimhashIndex(str(elsewhere / "news")).close()
    info = _info(
        _scrapy_simhash(project, "-s", f"SIMHASH_DIR={elsewhere}", "info", "news", "--json")
    )
    assert (info["path"], info["entries"]) == (str(elsewhere / "news"), 0)
    done = _scrapy_simhash(project, "info", "-h")
    assert done.returncode == 0
    shown = " ".join(done.stdout.split())
    assert "SPIDER|INDEX a spider of this project" in shown
    assert "a folder of that name wins over a spider" in shown
    assert "example: scrapy simhash info SPIDER --json" in shown


def test_scrapy_command_a_folder_wins_over_a_spider_of_that_name(project):
    SimhashIndex(str(project / "news")).close()  # ./news: an empty index
    info = _info(_scrapy_simhash(project, "info", "news", "--json"))
    assert (info["path"], info["entries"]) == (str(project / "news"), 0)


def test_scrapy_command_errors_name_scrapy_simhash(project, tmp_path):
    done = _scrapy_simhash(project, "info", "blog")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "scrapy simhash: error: no index at blog: not a folder, nor a spider of this project"
        " (its spiders: news, shop)\n"
    )
    done = _scrapy_simhash(project, "verify", "shop")
    assert (done.returncode, done.stdout) == (1, "")
    shop = project / ".scrapy" / "idx" / "shop"
    assert (
        done.stderr == f"scrapy simhash: error: no index of spider shop at {shop}: crawl it first\n"
    )
    done = _scrapy_simhash(project, "info", ".scrapy/idx")
    assert done.stderr == (
        "scrapy simhash: error: .scrapy/idx is not a scrapy-simhash index: it holds the index"
        " of spider news: give .scrapy/idx/news\n"
    )
    # Outside a project, INDEX is a folder, as for scrapy-simhash.
    outside = tmp_path / "outside"
    outside.mkdir()
    done = _scrapy_simhash(outside, "info", "news")
    assert (done.returncode, done.stderr) == (1, "scrapy simhash: error: no index at news\n")


WRITER = textwrap.dedent(
    """
    import sys, time
    from scrapy_simhash.index import SimhashIndex

    path, rounds = sys.argv[1], int(sys.argv[2])
    with SimhashIndex(path) as index:
        for r in range(rounds):
            base = (r + 1) << 40
            index.insert_many(
                (base + i, f"https://w.example/{r}/{i}", {}) for i in range(50)
            )
            print(r, flush=True)
            time.sleep(0.02)
    """
)


def test_inspect_while_another_process_writes(capsys, index_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, index_path, "100"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "0\n"  # the writer committed its first batch
        counts = []
        while writer.poll() is None or len(counts) < 3:
            info = run_json(capsys, "info", index_path)
            assert isinstance(info, dict)
            counts.append(info["entries"])
            rows = run_json(capsys, "lookup", index_path, f"{A:016x}")
            assert len(urls(rows)) == 3
            code, _, err = run(capsys, "verify", index_path)
            assert (code, err) == (0, "")
    finally:
        writer.wait(timeout=60)
        writer.stdout.close()  # type: ignore[union-attr]
    assert writer.returncode == 0
    assert counts == sorted(counts)
    assert counts[0] >= 8 + 50
    assert len(set(counts)) > 1  # the writer's inserts were seen as they came
    assert run_json(capsys, "info", index_path)["entries"] == 8 + 100 * 50  # type: ignore[index]


# -- an index built by a real crawl --------------------------------------------------------


@deferred_f_from_coro_f
async def test_commands_on_a_crawled_index(capsys, site, tmp_path):
    settings = {
        "SIMHASH_DIR": str(tmp_path / "simhash"),
        "DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 543},
    }
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    assert crawler.stats.get_value("simhash/duplicate") == 6
    index = str(tmp_path / "simhash" / SiteSpider.name)
    stories = [site.url(path) for path in ARTICLES]  # bike-lanes, heatwave-grid, ...
    info = run_json(capsys, "info", index)
    assert (info["entries"], info["k"]) == (5, 3)  # type: ignore[index]
    dumped = run_json(capsys, "dump", index)
    assert sorted(row["url"] for row in dumped) == sorted(stories)  # type: ignore[union-attr]
    # Why was the wire copy dropped? Its page is within k of the stored original.
    rows = run_json(capsys, "lookup", index, "--html", str(SITE / "wire" / "bike-lanes.html"))
    assert urls(rows) == [(0, stories[0])]
    rows = run_json(capsys, "lookup", index, "--html", str(SITE / "archive" / "bike-lanes.html"))
    assert [url for _, url in urls(rows)] == [stories[0]]
    explained = run_json(capsys, "explain", index, stories[1])
    assert explained["matches"] == []  # type: ignore[index]
    # Which pages were copies of which: each story with the copies dropped against it.
    groups = run_json(capsys, "clusters", index)
    assert [(g["urls"], sorted(d["url"] for d in g["dropped"])) for g in groups] == [
        ([stories[0]], sorted(site.url(p) for p, (of, _) in COPIES.items() if of == ARTICLES[0])),
        ([stories[1]], sorted(site.url(p) for p, (of, _) in COPIES.items() if of == ARTICLES[1])),
    ]
    code, out, _ = run(capsys, "verify", index)
    assert (code, out) == (0, "ok: 5 entries, 4 tables and 6 drop records agree\n")


def test_empty_index(capsys, tmp_path):
    path = str(tmp_path / "empty")
    SimhashIndex(path).close()
    info = run_json(capsys, "info", path)
    assert isinstance(info, dict)
    assert (info["entries"], info["oldest"], info["newest"]) == (0, None, None)
    assert info["candidates_per_probe"] is None
    code, out, _ = run(capsys, "info", path)
    assert code == 0
    assert re.search(r"^map used: +[0-9.]+ KiB of [0-9.]+ [GT]iB \(<0\.01%\)$", out, re.MULTILINE)
    assert re.search(r"^oldest: +-$", out, re.MULTILINE)
    expected = f"{info['expected_candidates_per_probe']:.3g} expected for random fingerprints"
    assert re.search(rf"^candidates/probe: +{re.escape(expected)}$", out, re.MULTILINE)
    assert run_json(capsys, "dump", path) == []
    assert run_json(capsys, "clusters", path) == []
    assert run(capsys, "verify", path) == (
        0,
        "ok: 0 entries, 4 tables and 0 drop records agree\n",
        "",
    )


def test_verify_says_a_checker_that_failed_without_a_signal(tmp_path, monkeypatch):
    """A checker process that exits with an error and no JSON (here: a Python that cannot
    start) is reported as a problem with the last line it wrote, never as a crash of the
    command."""
    from scrapy_simhash.cli.check import verify_in_child

    with SimhashIndex(tmp_path / "ix") as ix:
        ix.insert(1, "a")
    monkeypatch.setenv("PYTHONHOME", str(tmp_path / "no-python-here"))
    result = verify_in_child(str(tmp_path / "ix"))
    # the last line of what it wrote, as text (which line depends on the Python version):
    # what any Python started here writes last
    wrote = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True)
    last = wrote.stderr.strip().splitlines()[-1]
    assert wrote.returncode > 0 and len(last) > 10
    assert result == {"entries": None, "tables": None, "problems": [f"cannot be read: {last}"]}


def test_verify_says_a_checker_that_failed_without_a_word(tmp_path, monkeypatch):
    """A checker that exits with an error and writes nothing (here: ``false`` run in
    Python's place) is reported as such."""
    from scrapy_simhash.cli.check import verify_in_child

    with SimhashIndex(tmp_path / "ix") as ix:
        ix.insert(1, "a")
    monkeypatch.setattr(sys, "executable", shutil.which("false"))
    result = verify_in_child(str(tmp_path / "ix"))
    assert result == {"entries": None, "tables": None, "problems": ["cannot be read: no output"]}


def test_an_unexpected_error_is_one_line_and_debug_adds_its_traceback(
    capsys, caplog, monkeypatch, index_path
):
    """A bug (planted: ``info`` raises) exits 1 with one line naming the exception, and a
    hint; with ``--debug`` the traceback is logged too, without the hint."""
    import scrapy_simhash.cli.commands as commands

    def broken(args, out):
        raise RuntimeError("a planted bug")

    monkeypatch.setattr(commands, "cmd_info", broken)
    code, out, err = run(capsys, "info", index_path)
    assert (code, out) == (1, "")
    assert err == (
        "scrapy-simhash: error: unexpected RuntimeError: a planted bug"
        " (run with --debug for the traceback)\n"
    )
    assert not [r for r in caplog.records if r.exc_info]
    code = main(["--debug", "info", index_path])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.endswith("scrapy-simhash: error: unexpected RuntimeError: a planted bug\n")
    [logged] = [r for r in caplog.records if r.exc_info]
    assert logged.getMessage() == "unexpected error"
    assert "RuntimeError: a planted bug" in caplog.text


def test_debug_lets_the_libraries_log(tmp_path):
    """Library log lines (trafilatura's, here) reach stderr with ``--debug`` only."""
    page = str(SITE / "news" / "bike-lanes.html")
    quiet = _subprocess(["-m", "scrapy_simhash", "fingerprint", "--html", page])
    assert (quiet.returncode, quiet.stderr) == (0, "")
    loud = _subprocess(["-m", "scrapy_simhash", "--debug", "fingerprint", "--html", page])
    assert loud.returncode == 0
    assert loud.stdout == quiet.stdout
    assert re.search(r"^trafilatura\.\S+ DEBUG: ", loud.stderr, re.MULTILINE)


@pytest.mark.parametrize(
    ("argv", "code", "err"),
    [
        (["info", "INDEX"], 0, ""),
        (["verify", "INDEX"], 0, ""),
        # the error is still said, after the output the reader did not take
        (
            ["remove", "INDEX", "--url", "https://example.com/nope"],
            1,
            "scrapy-simhash: error: no entry for https://example.com/nope in ",
        ),
    ],
)
def test_output_into_a_pipe_whose_reader_is_gone(index_path, argv, code, err):
    """``scrapy-simhash info INDEX | true``: a short output is written at the command's
    end, where the closed pipe used to raise a traceback (exit 120). Buffered as a pipe is
    by default (PYTHONUNBUFFERED would write each line at once)."""
    argv = [index_path if a == "INDEX" else a for a in argv]
    reader, writer = os.pipe()
    os.close(reader)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "scrapy_simhash", *argv],
            stdout=writer,
            stderr=subprocess.PIPE,
            env={**env, "PYTHONPATH": str(ROOT)},
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert done.returncode == code
    assert done.stderr.startswith(err) and done.stderr.count("\n") == (1 if err else 0)


@pytest.mark.parametrize(
    ("signal_name", "damaged"), [("SIGKILL", False), ("SIGTERM", False), ("SIGBUS", True)]
)
def test_verify_tells_a_reader_killed_from_outside_from_a_damaged_file(
    capsys, index_path, tmp_path, monkeypatch, signal_name, damaged
):
    """verify reads the index in a child process: a child that a read outside the mapping
    (SIGBUS) or a fault kills says the file is damaged; one killed from outside (the OOM
    killer's SIGKILL, a kill) checked nothing, and says so, rather than calling a whole index
    damaged. The child here is a real process that dies by that signal."""
    launcher = tmp_path / "dying-python"
    launcher.write_text(f"#!/bin/sh\nkill -{signal_name.removeprefix('SIG')} $$\n")
    launcher.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(launcher))
    code, out, err = run(capsys, "verify", index_path)
    if damaged:
        assert code == 1
        assert f"crashed the LMDB library ({signal_name})" in out
    else:
        assert (code, out) == (1, "")
        assert err == (
            f"scrapy-simhash: error: verify's reader was killed by {signal_name}: "
            "nothing was checked\n"
        )


def test_a_compact_is_written_in_a_staging_folder_and_moved_into_place_whole(
    capsys, index_path, tmp_path
):
    """While the copy is written, DEST holds no index: a compact killed where nothing can
    clean up (SIGKILL, a crash) leaves its staging folder, which the next compact into DEST
    takes for a leftover. DEST itself stays what it was: here a link to an empty folder."""
    from scrapy_simhash.cli.destination import new_directory

    target = tmp_path / "target"
    target.mkdir()
    dest = tmp_path / "link"
    dest.symlink_to(target)
    with new_directory(str(dest)) as staging:
        assert os.path.dirname(staging) == str(dest)
        with SimhashIndex(index_path, readonly=True) as index:
            index.compact(staging)
        assert not (dest / "data.mdb").exists()
    os.rename(target / "data.mdb", target / "data.copy")  # as if killed: a staging leftover
    (target / ".partial-1").mkdir()
    os.rename(target / "data.copy", target / ".partial-1" / "data.mdb")
    code, _, _ = run(capsys, "compact", index_path, str(dest))
    assert code == 0 and dest.is_symlink() and os.listdir(target) == ["data.mdb"]
    with SimhashIndex(dest, readonly=True) as copy, SimhashIndex(index_path, readonly=True) as ix:
        assert len(copy) == len(ix) and copy.verify() == []


def test_compact_to_a_place_that_cannot_be_written_says_so_in_one_line(
    capsys, index_path, tmp_path
):
    (tmp_path / "a-file").write_text("not a folder")
    dest = tmp_path / "a-file" / "copy"
    code, out, err = run(capsys, "compact", index_path, str(dest))
    assert (code, out) == (1, "")
    assert err == f"scrapy-simhash: error: cannot write the copy to {dest}: Not a directory\n"


def _file_size_limit(limit: int) -> Callable[[], None]:
    """A child's set-up: no file it writes grows past ``limit`` bytes (a write past it fails
    with EFBIG, as on a full disk it fails with ENOSPC)."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


def test_a_copy_that_cannot_be_written_whole_names_the_copy_and_leaves_nothing(
    index_path, tmp_path
):
    """LMDB's own write failing midway (a full disk, a quota): the copy is named, not the
    index read, and nothing of it is left."""
    dest = tmp_path / "copy"
    done = _subprocess(
        ["-m", "scrapy_simhash", "compact", index_path, str(dest)],
        preexec_fn=_file_size_limit(8192),
    )
    assert (done.returncode, done.stdout) == (1, "")
    said = f"scrapy-simhash: error: cannot write the copy to {dest}: File too large\n"
    assert done.stderr == said
    assert not dest.exists()
    with SimhashIndex(index_path, readonly=True) as index:
        assert len(index) == 8 and index.verify() == []


@pytest.mark.skipif(shutil.which("strace") is None, reason="no strace (.ci/run installs it)")
def test_a_remove_whose_commit_fails_says_it_cannot_write_and_removes_nothing(index_path):
    """A full disk at remove's commit (strace makes each fdatasync fail with ENOSPC): said as
    a write that failed, not a read, and the index keeps every entry."""
    done = _subprocess(
        ["-m", "scrapy_simhash", "remove", index_path, "--older-than", "0"],
        wrapper=(
            *("strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=fdatasync"),
            *("-e", "inject=fdatasync:error=ENOSPC"),
        ),
    )
    assert (done.returncode, done.stdout) == (1, "")
    said = f"scrapy-simhash: error: cannot write {index_path}: No space left on device\n"
    assert done.stderr == said
    with SimhashIndex(index_path, readonly=True) as index:
        assert len(index) == 8 and index.verify() == []


@pytest.mark.skipif(shutil.which("strace") is None, reason="no strace (.ci/run installs it)")
def test_a_remove_terminated_while_it_commits_says_terminated(tmp_path):
    """SIGTERM while remove commits its first 1000 removals (strace holds each fdatasync
    back, so that the signal comes during the commit and is handled once it has returned):
    said as terminated, exit 143, what was committed stays and the index is whole. It said
    'cannot write INDEX: Attempt to operate on closed/deleted/dropped object', exit 1: the
    interrupted batch was committed a second time."""
    path = str(tmp_path / "index")
    old = NOW - 10 * DAY
    with SimhashIndex(path) as index:
        index.insert_many((i * A % (1 << 64), f"https://example.com/{i}", {"seen": old})
                          for i in range(1, 1002))  # fmt: skip
    log = tmp_path / "strace.log"
    child = subprocess.Popen(
        [
            *("strace", "-f", "-qq", "-o", str(log), "-e", "trace=fdatasync"),
            *("-e", "inject=fdatasync:delay_enter=300000"),
            *(sys.executable, "-m", "scrapy_simhash", "remove", path, "--older-than", "1"),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while "fdatasync" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.01)
        os.kill(int(log.read_text().split()[0]), signal.SIGTERM)  # the thread that commits
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, out) == (143, "")
    assert err == (
        "scrapy-simhash: error: terminated: what was removed before it stays removed; the "
        "same command again removes the rest\n"
    )
    with SimhashIndex(path, readonly=True) as index:
        assert len(index) == 1 and index.verify() == []


# -- what a crawled site wrote, shown -------------------------------------------------------


def test_a_sites_escape_sequences_reach_the_terminal_as_text(capsys, tmp_path):
    """A title or URL holds what the crawled site wrote: escape sequences (which recolour,
    clear or retitle a terminal) and bidirectional overrides are shown as escapes in the
    table format; the JSON formats keep them, escaped by JSON."""
    title = "Budget\x1b]0;pwned\x07 news\x1b[2J \u202eevil"
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=10) as index:
        index.insert(A, "https://example.com/\x1b[32mgreen", title=title)
        index.check_and_insert(A ^ 1, "https://example.com/\x1b[31mred", title=title)
    for argv in (("explain", path, "https://example.com/\x1b[31mred"), ("dump", path)):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "\\x1b" in out
    if_dropped = run_json(capsys, "explain", path, "https://example.com/\x1b[31mred")
    assert if_dropped["record"]["title"] == title


@pytest.mark.parametrize(
    "argv",
    [
        ["dump", "IX"],
        ["dump", "IX", "--json"],
        ["explain", "IX", "https://zh.example/copy"],
        ["explain", "IX", "https://zh.example/copy", "--jsonl"],
        ["clusters", "IX"],
        ["report", "IX", "-o", "-"],
    ],
)
def test_output_in_a_locale_that_cannot_write_the_sites_text(tmp_path, argv):
    """Under an ASCII locale (Python's own switch to UTF-8 turned off, as in a cron job or a
    latin-1 terminal), a title or URL in Chinese is written as escapes in a table, as
    \\uXXXX in JSON (still the same JSON), and the report as the UTF-8 its meta tag says: it
    was an 'unexpected UnicodeEncodeError'."""
    title = "新闻：同一篇文章 😀"
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=10) as index:
        index.insert(A, "https://zh.example/新闻", title=title)
        index.check_and_insert(A ^ 1, "https://zh.example/copy", title=title)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": "C", "LANG": "C"}
    env |= {"PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    argv = [path if a == "IX" else a for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", *argv], env=env, capture_output=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, b"")
    out = done.stdout
    if argv[0] == "report":
        assert title in lxml.html.fromstring(out.decode("utf-8")).text_content()
    elif "--json" in argv or "--jsonl" in argv:
        assert out.isascii()
        assert title in json.dumps(json.loads(out), ensure_ascii=False)
    else:
        assert out.isascii()
        assert "https://zh.example/\\u65b0\\u95fb" in out.decode("ascii")


def test_records_that_name_no_time_or_no_number_are_refused(tmp_path):
    """NaN is no JSON, and a 'seen' that names no time could not be shown: both are refused
    when stored, so that every --json output is JSON and every table shows its times."""
    with SimhashIndex(str(tmp_path / "ix")) as index:
        with pytest.raises(TypeError, match="must be JSON-serializable"):
            index.insert(A, "https://example.com/nan", score=float("nan"))
        for seen in (float("nan"), float("inf"), 1e20, -1e15):
            with pytest.raises(ValueError, match="record 'seen' must be a unix time"):
                index.insert(A, "https://example.com/t", seen=seen)
        index.insert(A, "https://example.com/ok", seen=NOW)
        assert len(index) == 1


def test_report_counts_crawls_whatever_their_run_holds(capsys, tmp_path):
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=10) as index:
        index.insert(A, "https://example.com/a")
        index.check_and_insert(A ^ 1, "https://example.com/b", run=["a", "list"])
        index.check_and_insert(A ^ 2, "https://example.com/c", run={"a": 1})
    code, out, _ = run(capsys, "report", path, "-o", "-")
    assert code == 0 and "</html>" in out


def test_verify_is_not_misled_by_modules_in_the_working_folder(index_path, tmp_path):
    """verify reads the index in a child process: a numpy.py or lmdb.py in the folder it is
    run from is not imported there (it was: the index was called damaged)."""
    folder = tmp_path / "work"
    folder.mkdir()
    for name in ("numpy", "lmdb"):
        (folder / f"{name}.py").write_text('raise SystemExit("not the library")\n')
    done = subprocess.run(  # the console script: it does not read its working folder itself
        [str(Path(sys.executable).parent / "scrapy-simhash"), "verify", index_path],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "ok" in done.stdout
