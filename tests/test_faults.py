"""Index faults during real crawls: a full disk never passes silently and loses no decision.

The index lives on a small tmpfs mounted by the test (root only: elsewhere these tests skip,
saying so); the loopback server serves a few hundred generated articles and exact copies of
some of them, so that the index outgrows the disk mid-crawl.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

import scrapy_simhash.crawl.writes as writes_module
from scrapy_simhash.index import SimhashIndex

from .test_scrapy_crawl import MIDDLEWARE, SiteSpider

ARTICLES = 240
#: Articles with an exact copy at another URL, crawled right after them.
COPIED = range(0, ARTICLES, 3)
_SYLLABLES = [
    "ba",
    "be",
    "bi",
    "bo",
    "bu",
    "da",
    "de",
    "di",
    "do",
    "du",
    "ka",
    "ke",
    "ki",
    "ko",
    "ku",
    "la",
    "le",
    "li",
    "lo",
    "lu",
    "ma",
    "me",
    "mi",
    "mo",
    "mu",
]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))


def _article(i: int) -> bytes:
    rng = random.Random(i)
    paragraphs = "".join(
        "<p>" + " ".join(_word(rng) for _ in range(45)) + ".</p>\n" for _ in range(4)
    )
    title = f"Report number {i}"
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><nav><a href='/'>Home</a></nav><article><h1>{title}</h1>{paragraphs}"
        f"</article><footer>Gazette</footer></body></html>"
    ).encode()


def _pages() -> dict[str, tuple[int, str, bytes]]:
    routes = {}
    links = []
    for i in range(ARTICLES):
        routes[f"/gen/{i}.html"] = (200, "text/html; charset=utf-8", _article(i))
        links.append(f"/gen/{i}.html")
        if i in COPIED:
            routes[f"/gen/copy-{i}.html"] = routes[f"/gen/{i}.html"]
            links.append(f"/gen/copy-{i}.html")
    items = "".join(f"<li><a href='{link}'>{link}</a></li>" for link in links)
    index = f"<html><body><ul>{items}</ul></body></html>".encode()
    routes["/gen/index.html"] = (200, "text/html", index)
    return routes


@contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` for the block (skips the test unless root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A 160 KiB tmpfs: room for the index's first few dozen entries, not for all."""
    with _tmpfs(tmp_path / "disk", "160k") as mount:
        yield mount


@pytest.fixture
def disk(tmp_path) -> Iterator[Path]:
    """A 1 MiB tmpfs: room for the whole crawl's index."""
    with _tmpfs(tmp_path / "disk", "1024k") as mount:
        yield mount


async def _crawl_on(disk: Path, site, routes, on_error: str, caplog, monkeypatch, **extra):
    # Retries after 0.05-0.2 s rather than 0.25-3 s, so that the crawl gives up mid-way.
    monkeypatch.setattr(writes_module, "RETRY_DELAYS", (0.05, 0.1, 0.2))
    routes.update(_pages())
    settings = {
        **MIDDLEWARE,
        "SIMHASH_DIR": str(disk / "simhash"),
        "SIMHASH_WORKERS": 0,
        "SIMHASH_COMMIT_EVERY": 20,
        "SIMHASH_COMMIT_INTERVAL": 3600,
        "SIMHASH_ON_INDEX_ERROR": on_error,
        "LOG_LEVEL": "INFO",
        **extra,
    }
    crawler = get_crawler(SiteSpider, settings)
    caplog.set_level(logging.INFO)
    await crawler.crawl_async(start_url=site.url("/gen/index.html"))
    return crawler.stats.get_stats()


def _check_nothing_lost(disk: Path, stats: dict) -> None:
    """Every page the crawl kept is in the index or counted as unsaved, and the index on the
    full disk is healthy."""
    with SimhashIndex(disk / "simhash" / "site", readonly=True) as index:
        assert index.verify() == []
        stored = len(index)
    assert stats["simhash/unique"] == stored + stats.get("simhash/index/unsaved", 0)
    assert stored > 0


def _errors(caplog) -> list[str]:
    """The ERROR lines; each of the plugin's says which spider's crawl it is about, as
    Scrapy's own lines do (``extra={"spider": ...}``, read by log handlers)."""
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    for record in errors:
        if record.name.startswith("scrapy_simhash"):
            assert getattr(record, "spider", None) is not None, record.getMessage()
            assert record.spider.name == SiteSpider.name
    return [r.getMessage() for r in errors]


def _give_up_line(disk: Path, stats: dict, then: str) -> str:
    """The ERROR line of a crawl whose index could not be written after its three retries."""
    return (
        f"Simhash index {disk / 'simhash' / 'site'}: still not written after 4 attempts; "
        f"{stats['simhash/index/unsaved']} pages kept since the last commit are not in the "
        f"index. {then}"
    )


_STOPPING = "Stopping the crawl (SIMHASH_ON_INDEX_ERROR = 'stop')."
_SKIPPING = (
    "Later pages pass unchecked, counted as simhash/skipped/index_error "
    "(SIMHASH_ON_INDEX_ERROR = 'skip')."
)


@deferred_f_from_coro_f
async def test_a_full_disk_stops_the_crawl_with_a_reason_of_its_own(
    small_disk, site, routes, caplog, monkeypatch
):
    stats = await _crawl_on(small_disk, site, routes, "stop", caplog, monkeypatch)
    assert stats["finish_reason"] == "simhash_index_error"
    # The first failure, then every retry (each writing the kept pages again), then give up.
    assert stats["simhash/index/errors"] == 4
    errors = _errors(caplog)
    path = small_disk / "simhash" / "site"
    assert errors[0].startswith(
        f"Simhash index {path}: writing failed: no space left on the disk holding it ("
    )
    assert errors[0].endswith(
        "The pages stored since the last commit are kept in memory and written again. "
        "Free some space, or set SIMHASH_DIR to a disk with room."
    )
    assert errors[-1] == _give_up_line(small_disk, stats, _STOPPING)
    assert len(errors) == 2
    assert not any(r.exc_info for r in caplog.records)  # no traceback anywhere
    assert "log_count/CRITICAL" not in stats
    assert "downloader/exception_count" not in stats
    _check_nothing_lost(small_disk, stats)
    assert stats["simhash/unique"] < ARTICLES  # it stopped before the end


@deferred_f_from_coro_f
async def test_a_full_disk_with_skip_lets_later_pages_through_counted(
    small_disk, site, routes, caplog, monkeypatch
):
    stats = await _crawl_on(small_disk, site, routes, "skip", caplog, monkeypatch)
    assert stats["finish_reason"] == "finished"
    assert stats["simhash/index/errors"] == 4
    skipped = stats["simhash/skipped/index_error"]
    decided = stats["simhash/unique"] + stats.get("simhash/duplicate", 0)
    assert decided + skipped == ARTICLES + len(COPIED)  # every page decided or counted
    assert skipped > 0
    assert _errors(caplog)[-1] == _give_up_line(small_disk, stats, _SKIPPING)
    assert not any(r.exc_info for r in caplog.records)
    _check_nothing_lost(small_disk, stats)


class _ShutdownOnFirstIndexError:
    """Closes the crawl for a reason of its own (as ``CLOSESPIDER_TIMEOUT`` or Ctrl-C would)
    when the index's first write has failed, and holds that response a second: the crawl is
    closing while the index's retries run out."""

    def __init__(self, crawler) -> None:
        self.crawler = crawler
        self.closing = False

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    async def process_response(self, request, response):
        from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
        from twisted.internet import reactor
        from twisted.internet.task import deferLater

        if not self.closing and self.crawler.stats.get_value("simhash/index/errors"):
            self.closing = True
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="shutdown"))
            await maybe_deferred_to_future(deferLater(reactor, 1.0, lambda: None))
        return response


@deferred_f_from_coro_f
async def test_an_index_that_gives_up_while_the_crawl_closes_for_another_reason_says_so(
    small_disk, site, routes, caplog, monkeypatch
):
    """The crawl was closing already (for a reason of its own) when the index gave up with
    ``stop``: its finish reason says the index was not written, not the other reason alone."""
    middlewares = {**MIDDLEWARE["DOWNLOADER_MIDDLEWARES"], _ShutdownOnFirstIndexError: 500}
    stats = await _crawl_on(
        small_disk, site, routes, "stop", caplog, monkeypatch, DOWNLOADER_MIDDLEWARES=middlewares
    )
    assert stats["simhash/index/errors"] == 4
    assert _errors(caplog)[-1] == _give_up_line(small_disk, stats, _STOPPING)
    assert stats["finish_reason"] == "simhash_index_error"
    _check_nothing_lost(small_disk, stats)


@pytest.mark.parametrize("on_error", ["stop", "skip"])
@deferred_f_from_coro_f
async def test_a_full_disk_at_the_last_commit_says_so_in_the_finish_reason_if_stopping(
    small_disk, site, routes, caplog, monkeypatch, on_error
):
    """Every page in one batch, committed when the crawl closes, on a disk without room for
    it: the commit and its retries fail while the crawl is closing. With ``stop`` the crawl's
    reason says the index was not written; with ``skip`` it finished, and the pages never
    written are counted."""
    stats = await _crawl_on(
        small_disk, site, routes, on_error, caplog, monkeypatch, SIMHASH_COMMIT_EVERY=10**6
    )
    assert stats["finish_reason"] == ("simhash_index_error" if on_error == "stop" else "finished")
    assert stats["simhash/index/errors"] == 4
    assert stats["simhash/unique"] == ARTICLES  # every page was checked before the close
    assert stats["simhash/index/unsaved"] == ARTICLES
    errors = _errors(caplog)
    assert errors[-1] == _give_up_line(
        small_disk, stats, _STOPPING if on_error == "stop" else _SKIPPING
    )
    assert not any(r.exc_info for r in caplog.records)


@deferred_f_from_coro_f
async def test_a_crawl_whose_last_commit_holds_closes_without_a_retry_wait(
    tmp_path, site, routes, caplog, monkeypatch
):
    """The close commits the last batch once; the waits between retries are for a commit
    that failed."""
    waits: list[float] = []
    monkeypatch.setattr(writes_module, "time", SimpleNamespace(sleep=waits.append))
    stats = await _crawl_on(
        tmp_path, site, routes, "stop", caplog, monkeypatch, SIMHASH_COMMIT_EVERY=10**6
    )
    assert stats["finish_reason"] == "finished"
    assert "simhash/index/errors" not in stats
    assert waits == [0.0]
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as index:
        assert len(index) == ARTICLES


class _FreeSpaceOnError(logging.Handler):
    """Deletes ``filler`` when the service reports its first failed write: the disk has room
    again for the retry."""

    def __init__(self, filler: Path) -> None:
        super().__init__(logging.ERROR)
        self.filler = filler

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == writes_module.__name__:
            self.filler.unlink(missing_ok=True)


@pytest.mark.parametrize("drop_records", [True, False], ids=["drop-records", "no-drop-records"])
@deferred_f_from_coro_f
async def test_a_write_that_fails_once_is_retried_and_loses_nothing(
    disk, site, routes, caplog, monkeypatch, drop_records
):
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (944 * 1024))  # the index runs out of room early
    handler = _FreeSpaceOnError(filler)
    logging.getLogger(writes_module.__name__).addHandler(handler)
    settings = {"SIMHASH_DROP_RECORDS": drop_records}
    try:
        stats = await _crawl_on(disk, site, routes, "stop", caplog, monkeypatch, **settings)
    finally:
        logging.getLogger(writes_module.__name__).removeHandler(handler)
    assert not filler.exists()
    assert stats["finish_reason"] == "finished"
    assert stats["simhash/index/errors"] == 1
    assert "simhash/index/unsaved" not in stats
    assert stats["simhash/unique"] == ARTICLES
    assert stats["simhash/duplicate"] == len(COPIED)
    path = disk / "simhash" / "site"
    [written] = [
        r
        for r in caplog.records
        if r.getMessage() == f"Simhash index {path}: written after 1 failed attempts"
    ]
    assert written.spider.name == SiteSpider.name
    [warning] = [
        r
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == writes_module.__name__
    ]
    assert warning.spider.name == SiteSpider.name
    assert re.fullmatch(
        rf"Simhash index {re.escape(str(path))}: write failed \((?!None\)).+\); \d+ pages "
        r"stored since the last commit are written again, committed in 0\.05 s \(attempt 1 "
        r"of 3\)",
        warning.getMessage(),
    ), warning.getMessage()
    with SimhashIndex(disk / "simhash" / "site", readonly=True) as index:
        assert index.verify() == []
        assert sorted(index.keys()) == sorted(site.url(f"/gen/{i}.html") for i in range(ARTICLES))
        # the pages of the lost batch were written again with their records
        assert all(m.record["url"] == m.key for m in index.items())
        # The drops of the lost batch were recorded again with its pages.
        drops = list(index.drops())
        if not drop_records:
            assert drops == []
            return
        assert len(drops) == len(COPIED)
        assert {d.kept for d in drops} <= set(index.keys())
        copies = {site.url(f"/gen/copy-{i}.html"): site.url(f"/gen/{i}.html") for i in COPIED}
        assert {d.key: d.kept for d in drops} == copies
        assert {(d.distance, d.rule) for d in drops} == {(0, "hamming")}
        assert all(d.record["url"] == d.key for d in drops)


@deferred_f_from_coro_f
async def test_a_simhash_dir_that_cannot_hold_an_index_is_refused_naming_the_setting(
    site, tmp_path
):
    occupied = tmp_path / "a-file"
    occupied.write_text("not a folder")
    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(occupied), "SIMHASH_WORKERS": 0}
    crawler = get_crawler(SiteSpider, settings)
    with pytest.raises(ValueError) as info:
        await crawler.crawl_async(start_url=site.url("/index.html"))
    message = str(info.value)
    # the OS's words for the error (its strerror), then its type: "File exists" where the
    # folder is made, "Not a directory" where the file is opened as one
    where = f"SIMHASH_DIR: cannot keep the index in {occupied}/site: "
    assert message in {
        f"{where}{os.strerror(errno.EEXIST)} (FileExistsError)",
        f"{where}{os.strerror(errno.ENOTDIR)} (NotADirectoryError)",
    }


def _verify(path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scrapy_simhash", "verify", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_a_truncated_index_is_refused_at_open_and_reset_makes_it_anew(tmp_path):
    """Reading past the end of a truncated data file would kill the reader with SIGBUS: the
    open compares the file's length with the pages its last commit holds, so every command
    says it in one line, and a reset (``SIMHASH_RESET``) starts a new index in its place."""
    from scrapy_simhash.index import DamagedIndexError

    path = tmp_path / "ix"
    with SimhashIndex(path) as index:
        index.insert_many((i << 20 | 7, f"https://example.com/{i}", {}) for i in range(30_000))
    data = path / "data.mdb"
    size = data.stat().st_size
    os.truncate(data, size // 2)
    said = f"index damaged: its data file is cut short ({size // 2} bytes: the last commit's"
    done = _verify(path)
    assert done.returncode == 1
    assert done.stdout.startswith(f"problem: {said}")
    assert done.stderr == f"scrapy-simhash: error: {path} is damaged: 1 problem(s) found\n"
    for command in ("info", "dump", "clusters"):
        done = _scrapy_simhash(command, str(path))
        assert (done.returncode, done.stdout) == (1, ""), command
        assert done.stderr.startswith(f"scrapy-simhash: error: {path}: {said}"), command
    with pytest.raises(DamagedIndexError, match="cut short"):
        SimhashIndex(path)
    with SimhashIndex(path, reset=True) as index:
        assert len(index) == 0
        index.insert(1, "https://example.com/again")
        assert index.verify() == []


@deferred_f_from_coro_f
async def test_simhash_reset_starts_anew_where_a_full_disk_left_no_index(site, tmp_path):
    """A crawl whose disk filled while it created its index can leave a data file that is
    no LMDB file: every open refuses it, and SIMHASH_RESET, which the error advises, starts
    a new index there."""
    folder = tmp_path / "simhash" / "site"
    folder.mkdir(parents=True)
    (folder / "data.mdb").write_bytes(b"\0" * 100)  # a header written in part
    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    refused = get_crawler(SiteSpider, settings)
    with pytest.raises(ValueError, match="not an LMDB file"):
        await refused.crawl_async(start_url=site.url("/index.html"))
    crawler = get_crawler(SiteSpider, {**settings, "SIMHASH_RESET": True})
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished" and stats["simhash/unique"] == 5
    with SimhashIndex(folder, readonly=True) as index:
        assert len(index) == 5 and index.verify() == []


def test_verify_never_dies_by_a_signal_on_damaged_copies(tmp_path):
    """30 copies of one index, each with 16 random bytes written over one of its pages
    (seeded): verify exits 0 or 1 with one error line, never by a signal or a traceback.
    ``bench/`` runs the same on hundreds of copies."""
    original = tmp_path / "original"
    with SimhashIndex(original, expected_size=10**7) as index:
        index.insert_many((i << 24 | 5, f"https://example.com/{i}", {"n": i}) for i in range(3000))
        for i in range(200):  # recent tables too
            index.insert(i << 40 | 3, f"https://example.com/r{i}", n=i)
    size = (original / "data.mdb").stat().st_size
    rng = random.Random(2026)
    copies = []
    for copy in range(30):
        damaged = tmp_path / f"copy{copy}"
        damaged.mkdir()
        raw = bytearray((original / "data.mdb").read_bytes())
        page = rng.randrange(2, size // 4096)  # not the two meta pages
        at = page * 4096 + rng.randrange(0, 4096 - 16)
        raw[at : at + 16] = rng.randbytes(16)
        (damaged / "data.mdb").write_bytes(raw)
        copies.append(damaged)
    with ThreadPoolExecutor(max_workers=2) as pool:  # a verify process on each core
        results = list(pool.map(_verify, copies))
    outcomes = []
    for copy, done in enumerate(results):
        assert done.returncode in (0, 1), (copy, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr
        if done.returncode:
            assert done.stderr.startswith("scrapy-simhash: error: ")
            assert len(done.stderr.splitlines()) == 1
        outcomes.append(done.returncode)
    assert outcomes.count(1) >= 10  # most damage is found


def _scrapy_simhash(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", *argv],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def test_commands_that_scan_a_damaged_index_never_die_by_a_signal(tmp_path):
    """An index with one leaf page of its B-trees zeroed (a bad sector): LMDB aborts a
    reader that walks onto some of them (SIGABRT, an assertion of its own) as info, dump and
    remove scan the whole index. Each command exits 0 or 1 with its own last line, never by
    the signal."""
    original = tmp_path / "original"
    with SimhashIndex(original, drop_records=1000) as index:
        index.insert_many((i << 24 | 5, f"https://example.com/{i}", {"n": i}) for i in range(5000))
    raw = (original / "data.mdb").read_bytes()
    # a page's flags follow its number and 2 bytes of padding: 0x02 marks a leaf page
    leaves = [
        page
        for page in range(2, len(raw) // 4096)  # not the two meta pages
        if int.from_bytes(raw[page * 4096 + 10 : page * 4096 + 12], "little") & 0x02
    ]
    crashed = []
    for page in leaves[:8]:
        damaged = tmp_path / f"page{page}"
        damaged.mkdir()
        zeroed = raw[: page * 4096] + bytes(4096) + raw[(page + 1) * 4096 :]
        (damaged / "data.mdb").write_bytes(zeroed)
        for command in (["info"], ["dump"], ["remove", "--older-than", "0", "--dry-run"]):
            done = _scrapy_simhash(command[0], str(damaged), *command[1:])
            assert done.returncode in (0, 1), (page, command, done.returncode, done.stderr)
            assert "Traceback" not in done.stderr
            if done.returncode:
                assert done.stderr.splitlines()[-1].startswith("scrapy-simhash: error: ")
            if "crashed the LMDB library (SIGABRT)" in done.stderr:
                crashed.append(command[0])
        if crashed:
            break
    assert crashed  # a reader did die, and was said


@deferred_f_from_coro_f
async def test_a_damaged_record_costs_its_pages_a_check_not_the_crawl(
    site, routes, tmp_path, caplog
):
    """A record that cannot be decoded, in the middle of the index: the pages whose check
    reads it pass unchecked, counted; every other page is decided as before, none becomes a
    download error."""
    from scrapy_simhash.index.records import doc_id

    from .test_scrapy_crawl import ARTICLES, COPIES, SITE_STATS

    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    first = get_crawler(SiteSpider, settings)
    await first.crawl_async(start_url=site.url("/index.html"))
    assert first.stats.get_value("simhash/index/size") == SITE_STATS["simhash/index/size"]
    # A record neither first nor last by id (those the check made at every open reads).
    by_id = sorted(ARTICLES, key=lambda path: doc_id(site.url(path)))
    chosen = by_id[len(by_id) // 2]
    damaged = site.url(chosen)
    with SimhashIndex(tmp_path / "simhash" / "site") as index:
        storage = index._tx.storage
        with storage.write() as txn:
            txn.put(index._docs.docs, doc_id(damaged), b"\xff" * 11)  # cut short, not UTF-8
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, "scrapy_simhash.crawl.writes")
    second = get_crawler(SiteSpider, settings)
    await second.crawl_async(start_url=site.url("/index.html"))
    stats = second.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert "downloader/exception_count" not in stats
    # The article and its copies read the damaged record; the other pages are found again.
    readers = 1 + sum(1 for original, _ in COPIES.values() if original == chosen)
    assert stats["simhash/skipped/index_error"] == readers
    assert stats["simhash/index/errors"] == readers
    assert stats["simhash/duplicate"] == 11 - readers
    path = tmp_path / "simhash" / "site"
    said = (
        f"Simhash index {path} is damaged (index damaged: a document record fails its "
        "checksum): pages whose check reads the damage pass unchecked, counted as "
        f"simhash/skipped/index_error. Check it with 'scrapy-simhash verify {path}'; "
        "SIMHASH_RESET=True starts a new index"
    )
    assert _errors(caplog) == [said]
    met = [r.getMessage() for r in caplog.records if "damaged record met" in r.getMessage()]
    assert met[0] == f"Simhash index {path}: damaged record met checking {damaged}"
    assert not any(r.exc_info for r in caplog.records)

    # Said once a crawl however many pages read the damage: here two addresses of the page.
    again = [f"{chosen}?again={i}" for i in (1, 2)]
    links = "".join(f"<li><a href='{link}'>{link}</a></li>" for link in again)
    routes["/damaged-again.html"] = (200, "text/html", f"<ul>{links}</ul>".encode())
    caplog.clear()
    third = get_crawler(SiteSpider, settings)
    await third.crawl_async(start_url=site.url("/damaged-again.html"))
    assert third.stats.get_value("simhash/skipped/index_error") == 2
    assert third.stats.get_value("simhash/index/errors") == 2
    assert _errors(caplog) == [said]
    met = [r.getMessage() for r in caplog.records if "damaged record met" in r.getMessage()]
    assert met == [
        f"Simhash index {path}: damaged record met checking {site.url(u)}" for u in again
    ]


def test_a_damaged_table_is_refused_at_open_with_one_line(tmp_path):
    """The check made at every open reads the first and last item of each table: a bucket
    of the wrong shape there is found before any query trips over it."""
    from scrapy_simhash.index import DamagedIndexError

    path = tmp_path / "ix"
    with SimhashIndex(path) as index:
        index.insert_many((i << 30 | 1, f"https://example.com/{i}", {}) for i in range(500))
        table = index._levels.main.spaces[2]
        with index._tx.storage.write() as txn:
            key, bucket = txn.last(table)
            txn.put(table, key, bucket[:-1])  # a value cut short
    message = rf"^index damaged: table 2: bucket {key.hex()} fails its checksum$"
    with pytest.raises(DamagedIndexError, match=message):
        SimhashIndex(path, readonly=True)
    done = _verify(path)
    assert done.returncode == 1
    assert done.stdout.startswith(f"problem: index damaged: table 2: bucket {key.hex()} fails")


def test_a_damaged_drop_counter_is_refused_at_open_and_found_by_verify(tmp_path):
    """A count in ``meta`` past any an index holds (a drop record's 64-bit number would
    overflow at the next drop: every later check failing) is damage, found at every open."""
    from scrapy_simhash.index import DamagedIndexError
    from scrapy_simhash.index.drops import LAST

    path = tmp_path / "ix"
    with SimhashIndex(path, drop_records=10) as index:
        index.check_and_insert(1, "https://example.com/a")
        assert index.check_and_insert(3, "https://example.com/b") is not None  # recorded
        with index._tx.storage.write() as txn:
            txn.put(index._meta, LAST, str(2**64 - 1).encode())
    with pytest.raises(DamagedIndexError, match="the last drop sequence number given is "):
        SimhashIndex(path, readonly=True)
    done = _verify(path)
    assert done.returncode == 1 and "drop sequence number" in done.stdout


class _FailingOnce(SimhashIndex):
    """An index whose check of one URL raises an error that is neither the storage's nor
    damage a check foresaw (as a bug would)."""

    failing = ""

    def check_and_insert(self, signature, key, **record):
        if key == self.failing:
            raise OverflowError("a value no check reads")
        return super().check_and_insert(signature, key, **record)


@deferred_f_from_coro_f
async def test_an_unexpected_error_in_a_check_costs_its_page_not_the_crawl(
    site, tmp_path, caplog, monkeypatch
):
    """The page passes unchecked, counted; the traceback is said once; every page kept
    before it in the open batch is still written (the batch is written again)."""
    import scrapy_simhash.crawl.service as service_module

    from .test_scrapy_crawl import ARTICLES

    failing = type("Failing", (_FailingOnce,), {"failing": site.url(ARTICLES[-1])})
    monkeypatch.setattr(service_module, "SimhashIndex", failing)
    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert "downloader/exception_count" not in stats
    assert stats["simhash/skipped/index_error"] == 1 and stats["simhash/index/errors"] == 1
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as index:
        assert len(index) == stats["simhash/unique"] and index.verify() == []
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1 and "unexpected error checking" in tracebacks[0].getMessage()


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def test_the_command_is_interrupted_through_its_parent_and_dies_with_it(tmp_path):
    """The command runs in a forked child (cli/guard.py): SIGINT sent to the process the
    user started reaches it (exit 130, said once), and a child whose parent is killed
    (SIGKILL, a caller's timeout) stops too, never writing on unseen."""
    import signal
    import time

    path = tmp_path / "ix"
    with SimhashIndex(path) as index:
        index.insert_many((i << 20 | 5, f"https://example.com/{i}", {}) for i in range(300_000))
    command = [sys.executable, "-m", "scrapy_simhash", "dump", str(path)]
    interrupted = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert interrupted.stdout is not None and interrupted.stdout.readline()  # dumping
    interrupted.send_signal(signal.SIGINT)
    _, err = interrupted.communicate(timeout=60)
    assert interrupted.returncode == 130
    assert err.splitlines()[-1].startswith("scrapy-simhash: error: interrupted")
    assert err.count("interrupted") == 1

    orphaned = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert orphaned.stdout is not None and orphaned.stdout.readline()
    (child,) = _children(orphaned.pid)
    orphaned.kill()
    orphaned.wait()
    orphaned.stdout.close()
    deadline = time.monotonic() + 30
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child)  # gone, or dead and waiting for init to reap it


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[-1][:1] != "Z"


def test_the_command_runs_where_it_cannot_fork_a_guarded_child(tmp_path):
    """Called from a thread that is not the main one (signals are the main thread's), the
    command runs there, unguarded, and its status comes back."""
    import threading

    from scrapy_simhash.cli import main
    from scrapy_simhash.cli.guard import in_child

    path = tmp_path / "ix"
    SimhashIndex(path).close()
    codes: list[int] = []
    thread = threading.Thread(
        target=lambda: codes.append(in_child(lambda: main(["info", str(path)]), "x"))
    )
    thread.start()
    thread.join(60)
    assert codes == [0]


def test_an_index_opens_where_the_address_space_is_limited(tmp_path):
    """Under ``ulimit -v`` (8 GB here) the map LMDB reserves (1 TiB) cannot be had: the index
    takes the largest that can, says so, and works; the command line reads it."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))

    path = tmp_path / "ix"
    code = (
        "import sys\n"
        "from scrapy_simhash import SimhashIndex\n"
        "with SimhashIndex(sys.argv[1]) as index:\n"
        "    index.insert(1, 'https://example.com/a')\n"
        "    assert index.check_and_insert(3, 'https://example.com/b') is not None\n"
        "    assert len(index) == 1 and index.verify() == []\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True, text=True, check=False, timeout=120, preexec_fn=limited,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the address space this process may use is limited" in done.stderr
    info = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "info", str(path)],
        capture_output=True, text=True, check=False, timeout=120, preexec_fn=limited,
    )  # fmt: skip
    assert info.returncode == 0 and "entries:             1" in info.stdout, info.stderr


STRACE = shutil.which("strace")
EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"


def _crawl_with_eio(
    tmp_path: Path, inject: str, *settings: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``scrapy crawl news`` of the example project (inline, its site on a free port), with
    strace making the index's ``fdatasync`` calls fail with EIO as ``inject`` says. The index
    is created first, so that every sync the crawl makes is one of its commits."""
    index_dir = tmp_path / "simhash"
    SimhashIndex(index_dir / "news", 3, 100_000, drop_records=100_000).close()
    command = [
        STRACE, "-f", "-qq", "-o", str(tmp_path / "trace"), "-e", "trace=fdatasync",
        "-e", f"inject=fdatasync:error=EIO{inject}",
        sys.executable, "-m", "scrapy", "crawl", "news", "-a", "port=0",
        "-O", str(tmp_path / "items.jsonl"),
        "-s", f"SIMHASH_DIR={index_dir}", "-s", "SIMHASH_WORKERS=0", "-s", "LOG_LEVEL=INFO",
        *(part for setting in settings for part in ("-s", setting)),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=EXAMPLE, capture_output=True, text=True, timeout=300, check=False
    )
    return done, index_dir / "news"


@pytest.mark.skipif(STRACE is None, reason="no strace on PATH (.ci/run installs Debian's)")
def test_an_injected_io_error_on_every_commit_stops_the_crawl_and_says_so(tmp_path):
    done, index = _crawl_with_eio(tmp_path, "")
    log = done.stderr
    assert done.returncode == 0  # Scrapy's exit status after a stop (README: check the reason)
    assert "Traceback" not in log
    assert f"Simhash index {index}: writing failed: mdb_txn_commit: Input/output error." in log
    assert "'finish_reason': 'simhash_index_error'" in log
    assert "'simhash/index/errors': 4" in log  # the first commit and its three retries
    assert "'simhash/index/unsaved': 5" in log  # the five articles, not in the index: said
    assert "(INJECTED)" in (tmp_path / "trace").read_text()
    with SimhashIndex(index, readonly=True) as reopened:
        assert len(reopened) == 0 and reopened.verify() == []


@pytest.mark.skipif(STRACE is None, reason="no strace on PATH (.ci/run installs Debian's)")
def test_an_injected_io_error_on_one_commit_is_retried_and_loses_nothing(tmp_path):
    done, index = _crawl_with_eio(tmp_path, ":when=1")
    log = done.stderr
    assert done.returncode == 0 and "Traceback" not in log
    assert "'finish_reason': 'finished'" in log
    assert "'simhash/index/errors': 1" in log
    assert "written after 1 failed attempts" in log
    with SimhashIndex(index, readonly=True) as reopened:
        assert reopened.verify() == []
        assert sorted(m.key.rsplit("/", 1)[-1] for m in reopened.items()) == [
            "bakery-award.html",
            "bike-lanes.html",
            "coral-survey.html",
            "heatwave-grid.html",
            "library-night-school.html",
        ]
        assert reopened.drop_count() == 7
        # the drop records written again keep the rule that found each (the example
        # crawl's simhash/duplicate/by/* stats)
        rules = sorted(drop.rule for drop in reopened.drops())
        assert rules == ["hamming"] * 6 + ["sentences"]


@pytest.mark.skipif(STRACE is None, reason="no strace on PATH (.ci/run installs Debian's)")
def test_each_page_its_own_commit_waits_for_the_retry_before_giving_up(tmp_path):
    """SIMHASH_COMMIT_EVERY = 1: the first four commits fail, back to back. Those made while
    the first failure's wait runs are the same fault (their pages pass unchecked, counted),
    not three more attempts spent within the same second: the crawl goes on and the pages
    after them are written. It gave up, and stopped the crawl, after the fourth page."""
    done, index = _crawl_with_eio(tmp_path, ":when=1..4", "SIMHASH_COMMIT_EVERY=1")
    log = done.stderr
    assert done.returncode == 0 and "Traceback" not in log
    assert "'finish_reason': 'finished'" in log
    assert "'simhash/index/errors': 4" in log and "'simhash/skipped/index_error': 4" in log
    assert "still not written" not in log and log.count("writing failed") == 1
    with SimhashIndex(index, readonly=True) as reopened:
        assert reopened.verify() == [] and len(reopened) >= 1


@deferred_f_from_coro_f
async def test_a_batch_that_cannot_begin_waits_for_its_retry(tmp_path):
    """Two write sides on one index in one process (two crawls of one spider at once): while
    the first holds its batch, LMDB refuses the second one's (a write transaction is open on
    the thread). The second waits for its retry instead of spending every attempt at once,
    a check failing meanwhile is the same fault, and once the first commits, the second's
    journal and later pages are written."""
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    from scrapy_simhash.crawl.config import SimhashConfig
    from scrapy_simhash.crawl.writes import RETRY_DELAYS, IndexWrites, Written
    from scrapy_simhash.index import STORAGE_ERRORS
    from scrapy_simhash.text.signature import page_signature

    def article(i: int) -> str:
        rng = random.Random(i)
        return " ".join(_word(rng) for _ in range(120))

    path = str(tmp_path / "shared")
    settings = {"SIMHASH_COMMIT_INTERVAL": 30}
    config = SimhashConfig.from_settings(get_crawler(SiteSpider, settings).settings)
    first_index, second_index = SimhashIndex(path), SimhashIndex(path)
    sides = []
    for index in (first_index, second_index):
        crawler = get_crawler(SiteSpider, settings)
        sides.append((crawler, IndexWrites(crawler, config, lambda i=index: i, lambda: path, bool)))
    (_, first), (second_crawler, second) = sides
    try:
        first.writable()  # the first side's batch: a write transaction held on this thread
        for _ in range(2):  # a check, then another while the retry waits
            with pytest.raises(STORAGE_ERRORS):
                second.writable()
            second.failed(STORAGE_ERRORS[0]("begin refused"))
        stats = second_crawler.stats
        assert stats.get_value("simhash/index/errors") == 2
        assert not second.given_up
        first.commit()
        await maybe_deferred_to_future(deferLater(reactor, RETRY_DELAYS[0] + 0.1, lambda: None))
        # the retry began the second side's batch; a page checked now goes into it
        signature = page_signature(article(1))
        second.writable().insert(signature, "https://b.example/1", url="https://b.example/1")
        second.checked(Written(signature, "https://b.example/1", {"url": "https://b.example/1"}))
        assert second.commit()
        assert not second.given_up and stats.get_value("simhash/index/errors") == 3
    finally:
        first_index.close()
        second_index.close()
    with SimhashIndex(path, readonly=True) as index:
        assert list(index.keys()) == ["https://b.example/1"]


def test_a_batch_that_never_begins_is_given_up_at_the_last_commit(tmp_path):
    """The closing commits of a write side whose batch cannot begin are attempts like any:
    after the last retry it gives up and says what it could not write, never leaving the
    journal unwritten with nothing said."""
    from scrapy_simhash.crawl.config import SimhashConfig
    from scrapy_simhash.crawl.writes import RETRY_DELAYS, IndexWrites
    from scrapy_simhash.index import STORAGE_ERRORS

    path = str(tmp_path / "shared")
    settings = {"SIMHASH_COMMIT_INTERVAL": 30, "SIMHASH_ON_INDEX_ERROR": "skip"}
    config = SimhashConfig.from_settings(get_crawler(SiteSpider, settings).settings)
    with SimhashIndex(path) as holder, SimhashIndex(path) as index:
        crawler = get_crawler(SiteSpider, settings)
        writes = IndexWrites(crawler, config, lambda: index, lambda: path, bool)
        with holder.batch():  # a write transaction held on this thread to the end
            with pytest.raises(STORAGE_ERRORS):
                writes.writable()
            writes.failed(STORAGE_ERRORS[0]("begin refused"))
            for _ in RETRY_DELAYS:
                assert not writes.commit()
            assert writes.given_up
            assert crawler.stats.get_value("simhash/index/unsaved") == 0


@deferred_f_from_coro_f
async def test_a_page_after_the_spider_closed_passes_counted_and_said_once(site, tmp_path, caplog):
    """A component that outlives the crawl's close (a pipeline still at work, a late
    callback) asks for a decision: the page passes unchecked, is counted, and the log
    says so once; the index, already closed, is not opened again."""
    from scrapy_simhash.crawl.service import DedupService

    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    assert "simhash/skipped/closed" not in crawler.stats.get_stats()
    service = DedupService.from_crawler(crawler)
    caplog.set_level(logging.WARNING)
    late = " ".join(_word(random.Random(7)) for _ in range(60))
    for n in (1, 2):
        decision = await service.decide_text(f"late-{n}", late)
        assert decision.skipped == "closed" and decision.duplicate_of is None
        assert crawler.stats.get_value("simhash/skipped/closed") == n
    said = [r.getMessage() for r in caplog.records if "after the spider closed" in r.getMessage()]
    assert said == [
        "A page came after the spider closed: passed on unchecked (simhash/skipped/closed), "
        "as any later ones"
    ]
    assert service._index is None  # not opened again


class _BrokenPipeline:
    @classmethod
    def from_crawler(cls, crawler):
        raise RuntimeError("a later component cannot start")


@deferred_f_from_coro_f
async def test_an_index_that_fails_to_close_after_a_failed_start_is_logged(
    site, tmp_path, caplog, capsys
):
    """The same failed start, the index's close failing (an I/O error after it closed, put in
    its place): the release is logged as an error of the package's logger, with its cause,
    instead of the interpreter printing an error in a finalizer; the worker threads are
    still closed."""
    import gc
    import threading

    from scrapy_simhash.crawl import service as service_module

    settings = {
        **MIDDLEWARE,
        "ITEM_PIPELINES": {_BrokenPipeline: 300},
        "SIMHASH_DIR": str(tmp_path / "simhash"),
        "SIMHASH_WORKERS": 1,
    }
    crawler = get_crawler(SiteSpider, settings)
    with pytest.raises(RuntimeError, match="cannot start"):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    index = getattr(crawler, service_module._ATTRIBUTE)._index
    close = index.close

    def failing_close() -> None:
        close()
        raise OSError(5, "Input/output error")

    index.close = failing_close
    del crawler
    with caplog.at_level(logging.ERROR, logger="scrapy_simhash"):
        gc.collect()
    [record] = [r for r in caplog.records if r.name == "scrapy_simhash.crawl.service"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "Closing the simhash index of a crawl that never started failed"
    assert isinstance(record.exc_info[1], OSError)
    assert "Exception ignored" not in capsys.readouterr().err
    for thread in threading.enumerate():
        if thread.name.startswith("simhash-worker"):
            thread.join(timeout=10)
    assert not [t for t in threading.enumerate() if t.name.startswith("simhash-worker")]


@deferred_f_from_coro_f
async def test_a_crawl_whose_start_fails_after_the_index_opened_releases_it(site, tmp_path):
    """A component after the plugin's raises in from_crawler: the crawl never starts, and no
    spider_closed comes. The index the plugin opened, and its worker threads, are released
    once the crawler is gone, so that the process can open that index anew (or reset it)."""
    import gc
    import threading

    from scrapy_simhash.index import lmdb_storage

    folder = tmp_path / "simhash"
    settings = {
        **MIDDLEWARE,
        "ITEM_PIPELINES": {_BrokenPipeline: 300},
        "SIMHASH_DIR": str(folder),
        "SIMHASH_WORKERS": 1,
    }

    def held() -> list[str]:
        return [path for path in lmdb_storage._open if path.startswith(str(folder))]

    def workers() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("simhash-worker")]

    crawler = get_crawler(SiteSpider, settings)
    with pytest.raises(RuntimeError, match="cannot start"):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    assert held() and workers()  # opened when the middleware was made
    del crawler
    gc.collect()
    assert held() == []
    for thread in threading.enumerate():
        if thread.name.startswith("simhash-worker"):
            thread.join(timeout=10)
    assert workers() == []
    # the index opens again, and can be reset
    index = SimhashIndex(str(folder / "site"), reset=True)
    assert len(index) == 0
    index.close()


@deferred_f_from_coro_f
async def test_two_crawls_running_in_one_process_do_not_share_an_index(site, tmp_path):
    """Two crawls of one spider at once in one process (two crawlers of one runner): the
    second to open the index is refused at its start, naming SIMHASH_DIR and what to do. It
    used to start, and every one of its pages passed unchecked, said as a failed write to the
    disk (LMDB allows one write transaction a thread, and each crawl holds its batch's open).
    A crawl whose start failed holds nothing, and the index opens again once the first
    crawl is over."""
    from scrapy import signals
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet.defer import Deferred

    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    failed = get_crawler(SiteSpider, {**settings, "ITEM_PIPELINES": {_BrokenPipeline: 300}})
    with pytest.raises(RuntimeError, match="cannot start"):
        await failed.crawl_async(start_url=site.url("/index.html"))
    first = get_crawler(SiteSpider, settings)
    opened: Deferred[None] = Deferred()
    first.signals.connect(lambda spider: opened.callback(None), signals.spider_opened, weak=False)
    running = deferred_from_coro(first.crawl_async(start_url=site.url("/index.html")))
    await maybe_deferred_to_future(opened)  # the first crawl holds its index
    second = get_crawler(SiteSpider, settings)
    with pytest.raises(ValueError) as refused:
        await second.crawl_async(start_url=site.url("/index.html"))
    assert str(refused.value).startswith(
        f"SIMHASH_DIR: the index {tmp_path / 'simhash' / 'site'} is in use by another crawl "
        "running in this process;"
    )
    await maybe_deferred_to_future(running)
    stats = first.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert stats["simhash/unique"] == 5
    assert "simhash/skipped/index_error" not in stats
    again = get_crawler(SiteSpider, settings)
    await again.crawl_async(start_url=site.url("/index.html"))
    assert again.stats.get_value("simhash/duplicate") == 11  # every page stored by the first
