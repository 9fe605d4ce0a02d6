"""``scrapy-simhash report``: the page parsed, and rendered in a real headless Chromium."""

from __future__ import annotations

import itertools
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import zlib
from datetime import datetime, timezone
from pathlib import Path

import lxml.html
import pytest

from scrapy_simhash.cli import main
from scrapy_simhash.cli import report as report_module
from scrapy_simhash.index import FORMAT_VERSION, SimhashIndex
from tests.test_index import flip

A = 0x0123456789ABCDEF
B = 0xFEDCBA9876543210
QUOTED = 'https://c.example/x" onclick="alert(1)'
HOSTILE = 'Breaking </script><script>document.title="owned"</script> & <b>news</b>'


@pytest.fixture
def index_path(tmp_path) -> str:
    """Two stories on a.example: one copied twice by b.example and once by c.example, the
    other copied once by b.example, with a title and a URL written to break the page."""
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=100) as ix:
        ix.insert(A, "https://a.example/story", title="Story", seen=1_700_000_000.0)
        ix.insert(B, "https://a.example/other", title=HOSTILE, seen=1_700_000_100.0)
        ix.check_and_insert(flip(A, 1), "https://b.example/copy-1", title="Copy 1")
        ix.check_and_insert(flip(A, 1, 2), "https://b.example/copy-2", title="Copy 2")
        ix.check_and_insert(flip(A), "https://c.example/story?x=<y>", title="Copy 3")
        ix.check_and_insert(flip(B, 1, 2, 3), "https://b.example/other", title=HOSTILE)
    return path


def make(capsys, index_path: str, out: Path, *options: str) -> lxml.html.HtmlElement:
    code = main(["report", index_path, "-o", str(out), *options])
    stdout, stderr = capsys.readouterr()
    assert (code, stderr) == (0, "")
    assert stdout == f"report: {out}\n"
    return lxml.html.fromstring(out.read_bytes())


def cells(row: lxml.html.HtmlElement) -> list[str]:
    return [" ".join(td.text_content().split()) for td in row.xpath("./td")]


def test_the_report_holds_totals_sites_distances_groups_and_urls(capsys, index_path, tmp_path):
    page = make(capsys, index_path, tmp_path / "report.html")
    cards = [(c.findtext("b"), c.findtext("span")) for c in page.cssselect(".card")]
    assert cards[:3] == [
        ("2", "pages kept (entries)"),
        ("4", "drops recorded"),
        ("2", "sites with dropped pages"),
    ]
    # Who copies whom: b.example copied a.example three times, c.example once.
    rows = [cells(r) for r in page.cssselect("#sites tr")[1:]]
    assert [r[:3] for r in rows] == [
        ["b.example", "a.example", "3"],
        ["c.example", "a.example", "1"],
    ]
    # One bar per distance 0..k, each as tall as its count is large.
    bars = page.cssselect("#distances rect")
    assert [b.findtext("title") for b in bars] == [
        "distance 0: 1 drops",
        "distance 1: 1 drops",
        "distance 2: 1 drops",
        "distance 3: 1 drops",
    ]
    assert len({b.get("height") for b in bars}) == 1
    groups = page.cssselect("#groups .group")
    assert [g.findtext("h3") for g in groups] == ["Group 1: 4 pages", "Group 2: 2 pages"]
    rows = groups[0].cssselect("tr")[1:]
    first = [(*cells(r)[:2], r.findtext(".//a"), r.findtext(".//div")) for r in rows]
    assert first == [
        ("kept", "", "https://a.example/story", "Story"),
        ("dropped", "0", "https://c.example/story?x=<y>", "Copy 3"),
        ("dropped", "1", "https://b.example/copy-1", "Copy 1"),
        ("dropped", "2", "https://b.example/copy-2", "Copy 2"),
    ]
    assert cells(rows[0])[3] == "2023-11-14T22:13:20Z"
    # The search box's URLs: every drop and every entry, each with what it is.
    data = json.loads(page.get_element_by_id("urls").text)
    assert sorted(map(tuple, data)) == sorted(
        [
            ("dropped", "https://b.example/copy-1", "https://a.example/story", 1),
            ("dropped", "https://b.example/copy-2", "https://a.example/story", 2),
            ("dropped", "https://c.example/story?x=<y>", "https://a.example/story", 0),
            ("dropped", "https://b.example/other", "https://a.example/other", 3),
            ("kept", "https://a.example/story", None, None),
            ("kept", "https://a.example/other", None, None),
        ]
    )
    assert page.get_element_by_id("left-out", None) is None


def test_the_report_is_self_contained_and_escapes_what_it_shows(capsys, index_path, tmp_path):
    key = 'https://e.example/?a=1&b=</script><script>document.title="owned"</script>'
    with SimhashIndex(index_path, drop_records=100) as ix:
        ix.check_and_insert(flip(B, 9), key)  # a copy whose URL would end the data's script
    out = tmp_path / "report.html"
    page = make(capsys, index_path, out)
    text = out.read_text("utf-8")
    # Nothing is fetched: no external script, style, image or frame.
    assert page.xpath("//*[@src]") == [] and page.xpath("//link") == []
    assert [s.get("type") for s in page.xpath("//script")] == ["application/json", None]
    assert "document.title=" not in page.xpath("//script[not(@type)]")[0].text
    # The hostile title is text on the page, never markup.
    assert HOSTILE in page.text_content()
    assert page.findtext(".//title").startswith("scrapy-simhash report")
    assert "<b>news</b>" not in text and "</script><script>" not in text
    # The search box's data holds the URL as it is, inside its own script element.
    assert [row[1] for row in json.loads(page.get_element_by_id("urls").text)].count(key) == 1


def test_the_report_bounds_its_lists_and_says_what_it_left_out(
    capsys, index_path, tmp_path, monkeypatch
):
    defaults = report_module.LIMITS
    limits = {**defaults, "groups": 1, "copies": 2, "site_pairs": 1, "urls": 3}
    monkeypatch.setattr(report_module, "LIMITS", limits)
    page = make(capsys, index_path, tmp_path / "report.html")
    assert len(page.cssselect("#groups .group")) == 1
    assert len(page.cssselect("#groups .group tr")) == 1 + 1 + 2  # head, kept, two copies
    assert len(page.cssselect("#sites tr")) == 1 + 1  # head, the most frequent pair
    assert len(json.loads(page.get_element_by_id("urls").text)) == 3
    assert stray_text(page) == []
    notes = [" ".join(li.text_content().split()) for li in page.cssselect("#left-out li")]
    assert notes == [
        "1 smaller groups",
        "1 copies of group 1",
        "1 less frequent site pairs",
        "3 URLs from the search box",
    ]
    # The drops first, then stored pages up to the bound: 4 drops and 1 of the 2 entries.
    monkeypatch.setattr(report_module, "LIMITS", {**defaults, "urls": 5})
    page = make(capsys, index_path, tmp_path / "five.html")
    urls = json.loads(page.get_element_by_id("urls").text)
    assert [row[0] for row in urls] == ["dropped"] * 4 + ["kept"]
    notes = [" ".join(li.text_content().split()) for li in page.cssselect("#left-out li")]
    assert notes == ["1 URLs from the search box"]


def test_an_empty_index_gives_a_report_too(capsys, tmp_path):
    path = str(tmp_path / "empty")
    SimhashIndex(path).close()
    page = make(capsys, path, tmp_path / "report.html")
    assert "No near duplicates" in page.get_element_by_id("groups").text_content()
    assert json.loads(page.get_element_by_id("urls").text) == []


def test_report_errors(capsys, tmp_path):
    assert main(["report", str(tmp_path / "none"), "-o", str(tmp_path / "r.html")]) == 1
    assert "no index at" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the raw scanlines (filter bytes included) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, width, height = 8, b"", 0, 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    return width, height, zlib.decompress(idat)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs Debian's)")
def test_the_report_renders_in_headless_chromium(capsys, index_path, tmp_path):
    out = tmp_path / "report.html"
    make(capsys, index_path, out)
    shown = chromium(tmp_path, "--dump-dom", out.as_uri())
    assert shown.returncode == 0, shown.stderr[-2000:]
    console = [line for line in shown.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # no script error, no warning
    dom = lxml.html.fromstring(shown.stdout)
    assert dom.body.get("data-ready") == "1"  # the script ran to its end
    results = [" ".join(li.text_content().split()) for li in dom.cssselect("#results li")]
    assert len(results) == 6
    assert (
        "dropped https://b.example/copy-2 duplicate of https://a.example/story at distance 2"
        in (results)
    )
    assert dom.findtext(".//title").startswith("scrapy-simhash report")  # not "owned"
    picture = tmp_path / "report.png"
    taken = chromium(tmp_path, "--window-size=1000,1400", f"--screenshot={picture}", out.as_uri())
    assert taken.returncode == 0, taken.stderr[-2000:]
    width, height, pixels = png_pixels(picture.read_bytes())
    assert (width, height) == (1000, 1400)
    # Not blank: far from one colour (a white page would be all 0xff but the filter bytes).
    assert len(set(pixels)) > 50
    assert pixels.count(0xFF) < 0.95 * len(pixels)


def test_copies_found_by_their_sentences_have_a_bar_beyond_k(capsys, index_path, tmp_path):
    """A copy found by the sentence rule may be any number of bits away: the histogram shows
    0..k, then one bar beyond k (and no such bar when there are none, as above)."""
    with SimhashIndex(index_path, drop_records=100) as ix:
        far = A ^ ((1 << 17) - 1)  # 17 bits from the story
        ix.record_drop(far, "https://d.example/moved", "https://a.example/story", 17, "sentences")
        assert ix.dropped("https://d.example/moved").rule == "sentences"
    page = make(capsys, index_path, tmp_path / "report.html")
    bars = page.cssselect("#distances rect")
    assert [b.findtext("title") for b in bars][-2:] == [
        "distance 3: 1 drops",
        "beyond 3, by sentences: 1 drops",
    ]
    labels = [t.text for t in page.cssselect("#distances text")]
    assert ">3" in labels


def test_counts_links_groups_and_bounds_at_their_edges(capsys, index_path, tmp_path, monkeypatch):
    """Two drops at one distance make one bar of 2; a dry run's record counts as such; a key
    that is not a web URL is shown, not linked; ``-k`` narrows the groups (and says so); a list
    exactly at its bound is shown whole, without a note; the page names its index."""
    with SimhashIndex(index_path, drop_records=100) as ix:
        # 1 bit from the other story: a second drop at distance 1, from a dry run
        ix.check_and_insert(flip(B, 5), "http://c.example/other-copy", dry_run=True, run="r2")
        ix.insert(flip(A, 40, 41), "urn:archive:story")  # stored 2 bits from the story
    # b->a and c->a, the two stories' groups, the first one's copies: exactly the bounds
    limits = {**report_module.LIMITS, "site_pairs": 2, "groups": 2, "copies": 3}
    monkeypatch.setattr(report_module, "LIMITS", limits)
    page = make(capsys, index_path, tmp_path / "report.html")
    assert page.findtext(".//h1") == f"Near duplicates in {index_path}"
    assert page.findtext(".//title") == f"scrapy-simhash report: {index_path}"
    bars = [b.findtext("title") for b in page.cssselect("#distances rect")]
    assert bars[:2] == ["distance 0: 1 drops", "distance 1: 2 drops"]
    facts = {
        r.findtext("th"): r.findtext("td") for r in page.cssselect("tr") if r.find("th") is not None
    }
    assert (facts["drops in dry runs"], facts["groups within"]) == ("1", "3")
    assert len(page.cssselect("#sites tr")) == 1 + 2 and not page.cssselect("#left-out")
    group = page.cssselect("#groups .group")[0]
    kept = [(cells(r)[0], r.findtext(".//a")) for r in group.cssselect("tr")[1:3]]
    assert kept == [("kept", "https://a.example/story"), ("kept", None)]  # the urn: as text
    assert "urn:archive:story" in group.text_content()
    # A group of several kept pages says which one each copy duplicates; one of one does not.
    notes = [r.findtext(".//div") for r in group.cssselect("tr") if cells(r)[:1] == ["dropped"]]
    assert notes and all(n.endswith(" · duplicate of https://a.example/story") for n in notes)
    other = page.cssselect("#groups .group")[1]
    assert [r for r in other.cssselect("tr") if "duplicate of" in r.text_content()] == []
    rows = {r.findtext(".//a"): cells(r)[0] for r in page.cssselect("#groups tr") if cells(r)}
    assert rows["http://c.example/other-copy"] == "dropped (dry run)"
    assert rows["https://b.example/other"] == "dropped"
    links = [a.get("href") for a in page.cssselect("#groups a")]
    assert "http://c.example/other-copy" in links and "urn:archive:story" not in links
    # Within 1 bit the urn page is no longer in the story's group.
    narrow = make(capsys, index_path, tmp_path / "narrow.html", "-k", "1")
    facts = {
        r.findtext("th"): r.findtext("td")
        for r in narrow.cssselect("tr")
        if r.find("th") is not None
    }
    assert facts["groups within"] == "1"
    assert "urn:archive:story" not in narrow.get_element_by_id("groups").text_content()


def test_the_report_gives_the_time_range_of_entries_and_drops(capsys, tmp_path):
    """The oldest and newest entries and the first and last drops, by their times, not by
    the order they were written in (the later of each pair is written first); when the
    report was made; the index's format."""
    path = str(tmp_path / "times")
    day = 86_400.0
    with SimhashIndex(path, drop_records=10) as ix:
        ix.insert(B, "https://a.example/later", seen=1_700_000_000.0 + day)
        ix.insert(A, "https://a.example/earlier", seen=1_700_000_000.0)
        ix.check_and_insert(flip(B, 1), "https://b.example/later", seen=1_700_000_000.0 + 25 * 3600)
        ix.check_and_insert(flip(A, 1), "https://b.example/earlier", seen=1_700_000_500.0)
    before = datetime.now(timezone.utc).replace(microsecond=0)
    page = make(capsys, path, tmp_path / "report.html")
    after = datetime.now(timezone.utc)
    made = page.xpath("//header/p/text()")[0].removeprefix("scrapy-simhash report, made ")
    assert before <= datetime.strptime(made, "%Y-%m-%dT%H:%M:%S%z") <= after
    facts = {r.findtext("th"): r.findtext("td") for r in page.cssselect("#totals tr")}
    assert list(facts) == [
        "k (the Hamming rule's largest distance)",
        "groups within",
        "drops in dry runs",
        "oldest entry",
        "newest entry",
        "first drop recorded",
        "last drop recorded",
        "index format",
    ]
    assert facts["index format"] == str(FORMAT_VERSION)
    named = ("oldest entry", "newest entry", "first drop recorded", "last drop recorded")
    assert [facts[name] for name in named] == [
        "2023-11-14T22:13:20Z",  # 1_700_000_000 seconds after 1970-01-01T00:00:00Z
        "2023-11-15T22:13:20Z",  # a day later
        "2023-11-14T22:21:40Z",  # 500 seconds after the first
        "2023-11-15T23:13:20Z",  # 25 hours after the first
    ]
    # In the groups, each kept page with its time and each copy with the time of its drop.
    times = [(r.findtext(".//a"), cells(r)[3]) for r in page.cssselect("#groups tr") if cells(r)]
    assert sorted(times) == [
        ("https://a.example/earlier", "2023-11-14T22:13:20Z"),
        ("https://a.example/later", "2023-11-15T22:13:20Z"),
        ("https://b.example/earlier", "2023-11-14T22:21:40Z"),
        ("https://b.example/later", "2023-11-15T23:13:20Z"),
    ]


def stray_text(page: lxml.html.HtmlElement) -> list[str]:
    """Text where the report puts none: between the rows of a table, the items of a list, the
    cards, the shapes of a chart, the parts of a section."""
    holders = "//table|//tr|//svg|//ul|//*[@class='cards']|//section|//main"
    found = []
    for holder in page.xpath(holders):
        if (holder.text or "").strip() and holder.tag in ("table", "tr", "svg", "ul"):
            found.append(holder.text)
        found += [child.tail for child in holder if (child.tail or "").strip()]
    return found


def test_the_report_draws_its_charts_to_scale(capsys, tmp_path):
    """Bars as long as their counts are large, on one baseline, inside their chart, each
    count centred above its bar and each distance below it; headers on every table; no
    stray text anywhere between the parts of the page."""
    path = str(tmp_path / "index")
    with SimhashIndex(path, drop_records=100) as ix:
        ix.insert(A, "https://a.example/story")
        ix.insert(B, "https://d.example/other")
        copies = [(A, "b", (1,)), (A, "b", (1, 2)), (A, "b", (3,)), (A, "b", (4, 5))]
        copies += [(A, "b", ()), (B, "c", (1, 2, 3)), (A, "c", (9,))]
        for i, (base, host, bits) in enumerate(copies):
            ix.check_and_insert(flip(base, *bits), f"https://{host}.example/copy-{i}")
        ix.check_and_insert(flip(B, 4), QUOTED)  # a key that would close its attribute
    # distances 0, 1, 2, 3: 1, 4, 2, 1 drops; b -> a 5, c -> d 2, c -> a 1
    page = make(capsys, path, tmp_path / "report.html")
    assert stray_text(page) == []
    svg = page.get_element_by_id("distances")
    bars = svg.xpath("./rect")
    counts = [int(b.findtext("title").split(": ")[1].split()[0]) for b in bars]
    assert counts == [1, 4, 2, 1]
    tallest = max(float(b.get("height")) for b in bars)
    for bar, n in zip(bars, counts, strict=True):
        assert abs(float(bar.get("height")) / tallest - n / max(counts)) < 0.01
    bottoms = {float(b.get("y")) + float(b.get("height")) for b in bars}
    assert len(bottoms) == 1  # one baseline
    left = [float(b.get("x")) for b in bars]
    width = float(bars[0].get("width"))
    assert left == sorted(left) and left[0] >= 0
    assert all(b - a >= width for a, b in itertools.pairwise(left))  # no overlap
    assert left[-1] + width <= float(svg.get("width"))
    assert max(bottoms) <= float(svg.get("height"))
    assert min(float(t.get("y")) for t in svg.xpath("./text")) > 0  # the labels, tops in view
    texts = svg.xpath("./text")
    for i, (bar, n) in enumerate(zip(bars, counts, strict=True)):
        centre = float(bar.get("x")) + width / 2
        at = sorted(float(t.get("y")) for t in texts if float(t.get("x")) == centre)
        assert len(at) == 2  # the count, above the bar; the distance, below the baseline
        said = {float(t.get("y")): t.text for t in texts if float(t.get("x")) == centre}
        assert at[0] < float(bar.get("y")) and said[at[0]] == str(n)
        assert at[1] > max(bottoms) and said[at[1]] == str(i)
    axis = texts[-1]
    assert axis.text == "Hamming distance to the kept page"
    assert float(axis.get("x")) == float(svg.get("width")) / 2
    # Who copies whom: bars as long as their counts, the longest inside its box.
    rows = [r for r in page.cssselect("#sites tr") if cells(r)]
    assert [cells(r)[:3] for r in rows] == [
        ["b.example", "a.example", "5"],
        ["c.example", "d.example", "2"],
        ["c.example", "a.example", "1"],
    ]
    lengths = [float(r.xpath(".//rect")[0].get("width")) for r in rows]
    boxes = [float(r.xpath(".//svg")[0].get("width")) for r in rows]
    assert lengths[0] <= boxes[0]
    assert [round(5 * w / lengths[0], 2) for w in lengths] == [5, 2, 1]  # as 5, 2 and 1
    headers = [[" ".join(th.text_content().split()) for th in t.xpath(".//th")] for t in
               page.xpath("//section[@id='sites' or @id='groups']//table")]  # fmt: skip
    assert headers[0] == ["pages dropped from", "as copies of pages on", "drops", ""]
    assert headers[1:] == [["", "distance", "page", "time"]] * 2
    cards = [(c.findtext("b"), c.findtext("span")) for c in page.cssselect(".card")]
    assert cards[3] == ("0", "crawls with drops")
    # Pages stored without a title show none; a key with quotes stays in its attribute.
    kept = [r for r in page.cssselect("#groups tr") if cells(r)[:1] == ["kept"]]
    assert [r.findtext(".//div") for r in kept] == ["", ""]
    [link] = [a for a in page.cssselect("#groups a") if "onclick" in a.get("href", "")]
    assert link.get("href") == QUOTED and link.get("onclick") is None


def test_an_index_without_drops_says_so_in_each_section(capsys, tmp_path):
    path = str(tmp_path / "index")
    with SimhashIndex(path) as ix:
        ix.insert(A, "https://a.example/story", title=None)
        ix.insert(B, "https://b.example/other")
    page = make(capsys, path, tmp_path / "report.html")
    assert stray_text(page) == []
    notes = {
        section: " ".join(page.get_element_by_id(section).findtext("p").split())
        for section in ("sites", "groups")
    }
    assert notes["sites"] == "No drops recorded."
    assert notes["groups"].startswith("No near duplicates: no two kept pages are within k")


def test_the_report_goes_to_stdout_with_a_dash_and_takes_k_0(capsys, index_path, tmp_path):
    code = main(["report", index_path, "-o", "-", "-k", "0"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    page = lxml.html.fromstring(out)
    assert page.findtext(".//h1") == f"Near duplicates in {index_path}"
    facts = {r.findtext("th"): r.findtext("td") for r in page.cssselect("#totals tr")}
    assert facts["groups within"] == "0"
    assert not (tmp_path / "-").exists()
    # --output is -o's long form (the same page but the time it was made)
    assert main(["report", index_path, "--output", "-", "-k", "0"]) == 0
    made = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert made.sub("", capsys.readouterr().out) == made.sub("", out)


def test_the_report_is_utf8_whatever_the_locale(index_path, tmp_path):
    """Written as UTF-8 (as its meta tag says) under an ASCII locale too, where a file opened
    with the locale's encoding could not hold its titles."""
    title = "新闻：同一篇文章"
    with SimhashIndex(index_path, drop_records=100) as ix:
        ix.insert(0x0F0F0F0F0F0F0F0F, "https://zh.example/news", title=title)
        ix.check_and_insert(0x0F0F0F0F0F0F0F0E, "https://zh.example/copy", title=title)
    out = tmp_path / "report.html"
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0"}
    env |= {"PYTHONUTF8": "0", "PYTHONPATH": root}
    argv = [sys.executable, "-m", "scrapy_simhash", "report", index_path, "-o", str(out)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    page = lxml.html.fromstring(out.read_bytes().decode("utf-8"))
    assert title in page.get_element_by_id("groups").text_content()


def test_a_report_that_cannot_be_written_whole_leaves_the_one_before(index_path, tmp_path):
    """A full disk (here a file size limit, whose writes fail as ENOSPC's do) or an interrupt
    while the page is written: the one line says so, and the report written before is left
    as it was, not cut to the part that fitted (nor is a partial file left beside it)."""
    out = tmp_path / "report.html"
    out.write_text("<p>the report of yesterday</p>\n", encoding="utf-8")
    root = str(Path(__file__).resolve().parents[1])

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    done = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "report", index_path, "-o", str(out)],
        env={**os.environ, "PYTHONPATH": root},
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"scrapy-simhash: error: cannot write {out}: File too large\n"
    assert out.read_text(encoding="utf-8") == "<p>the report of yesterday</p>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ix", "report.html"]
