"""Worker processes (``SIMHASH_WORKERS``) in real crawls: work finishing out of order, a worker
killed mid-crawl, a page that makes extraction run past the timeout, batched index writes
and the close path, and a crawl killed mid-batch."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import ClassVar

import pytest
from scrapy import Request, Spider, signals
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

import scrapy_simhash
from scrapy_simhash.crawl.turns import Turns
from scrapy_simhash.crawl.workers import package_folder
from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.text.extract import extract_text
from scrapy_simhash.text.fingerprint import Fingerprinter, hamming

from ._procs import alive, faulty_python, worker_pids
from .test_scrapy_crawl import (
    ARTICLES,
    BOTH,
    MIDDLEWARE,
    PIPELINE,
    SITE_STATS,
    SiteSpider,
    crawl,
    paths,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="finds worker processes through /proc"
)

#: A page whose extraction takes seconds (a few MB of distinct paragraphs).
SLOW = "/slow/long.html"


def _slow_page(paragraphs: int = 5_000) -> bytes:
    body = "".join(
        f"<p>Record {i}: the committee noted item {i * 7 % 1009} and deferred item "
        f"{i * 13 % 997} to the session of week {i % 52}.</p>\n"
        for i in range(paragraphs)
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Minutes</title></head>"
        f"<body><article>{body}</article></body></html>"
    ).encode()


@pytest.fixture
def slow_site(site, routes):
    routes[SLOW] = (200, "text/html; charset=utf-8", _slow_page())
    return site


class PairSpider(Spider):
    """Fetches an article and its wire copy, then yields two items at once: the article with
    a heavy page around it (slow to extract) and the copy (fast), so that with workers the
    copy's work finishes first."""

    name = "pair"
    custom_settings: ClassVar[dict] = {"CONCURRENT_REQUESTS": 1}

    def __init__(self, base: str, **kwargs):
        super().__init__(**kwargs)
        self.base = base

    async def start(self):
        yield Request(self.base + "/news/bike-lanes.html", meta={"dont_simhash": True})

    def parse(self, response):
        yield Request(
            self.base + "/wire/bike-lanes.html",
            self.parse_copy,
            meta={"dont_simhash": True, "original": response},
        )

    def parse_copy(self, response):
        original = response.meta["original"]
        yield {"url": original.url, "html": heavy(original.text)}
        yield {"url": response.url, "html": response.text}


def heavy(html: str) -> str:
    """The page with thousands of navigation links around its article (same main text)."""
    links = "".join(f'<li><a href="/topic/{i}">Topic {i}</a></li>' for i in range(6000))
    return html.replace("</body>", f"<nav><ul>{links}</ul></nav></body>")


@pytest.mark.parametrize("workers", [0, 2], ids=["inline", "2-workers"])
@deferred_f_from_coro_f
async def test_decisions_follow_arrival_order_not_finishing_order(site, tmp_path, workers):
    original = (Path(__file__).parents[1] / "example_project/site/news/bike-lanes.html").read_text()
    copy = (Path(__file__).parents[1] / "example_project/site/wire/bike-lanes.html").read_text()
    fp = Fingerprinter()
    timings = []
    for html in (heavy(original), copy):
        started = time.perf_counter()
        timings.append((fp.fingerprint(extract_text(html)), time.perf_counter() - started))
    assert hamming(timings[0][0], timings[1][0]) <= 3
    assert timings[0][1] > 5 * timings[1][1]  # the article's work takes much longer

    settings = {**PIPELINE, "SIMHASH_DIR": str(tmp_path), "SIMHASH_WORKERS": workers}
    crawler = get_crawler(PairSpider, settings)
    kept, dropped = [], []
    crawler.signals.connect(lambda item: kept.append(item), signals.item_scraped, weak=False)
    crawler.signals.connect(
        lambda item, exception: dropped.append(item), signals.item_dropped, weak=False
    )
    await crawler.crawl_async(base=site.url("").rstrip("/"))
    assert paths(site, kept) == ["/news/bike-lanes.html"]
    assert paths(site, dropped) == ["/wire/bike-lanes.html"]


def test_many_pages_waiting_for_their_turn_are_released_without_recursion():
    """Under a reactor other than asyncio, a page's coroutine resumes inside the call that
    gives it its turn, and releases its own ticket there: released one inside the other, a
    few hundred waiting pages went past Python's recursion limit, and those after it never
    got their turn (the crawl hung). Each release inside another is taken up by the outer
    one's loop instead."""
    turns = Turns()
    tickets = [turns.take() for _ in range(5 * sys.getrecursionlimit())]
    decided: list[int] = []
    for ticket in tickets[1:]:

        def decide(_, ticket=ticket):
            decided.append(ticket)
            turns.release(ticket)  # synchronously, as a coroutine resumed in the callback

        turns.wait(ticket).addCallback(decide)
    settled: list[bool] = []
    turns.settled().addCallback(lambda _: settled.append(True))
    turns.release(tickets[0])
    assert decided == tickets[1:]
    assert settled == [True]


def test_worker_processes_find_the_package_where_the_crawl_found_it():
    """A worker is started with the folder that holds the package on its PYTHONPATH, so that
    a crawl which imports the package from a checkout (not installed) has workers too."""
    folder = Path(package_folder())
    assert (folder / "scrapy_simhash" / "__init__.py").is_file()
    assert (folder / "scrapy_simhash").resolve() == Path(scrapy_simhash.__file__).parent.resolve()


def slow_first_spider():
    """A site spider that fetches the slow page first."""

    class SlowFirstSpider(SiteSpider):
        def parse_index(self, response):
            yield response.follow(SLOW, self.parse_page, priority=1000)
            yield from super().parse_index(response)

    return SlowFirstSpider


@deferred_f_from_coro_f
async def test_workers_killed_mid_crawl_are_replaced_and_their_pages_retried(
    slow_site, tmp_path, caplog, monkeypatch
):
    """Both workers are killed while one of them works on the slow page (by that worker,
    launched to kill its sibling and itself there, once)."""
    site = slow_site
    launcher, deaths = faulty_python(tmp_path, SLOW, kills=1, siblings=True)
    monkeypatch.setattr(sys, "executable", str(launcher))
    settings = {**BOTH, "SIMHASH_WORKERS": 2}
    result = await crawl(settings, tmp_path, site, spider=slow_first_spider())
    assert deaths.read_text() == "x"
    # The slow page was being extracted when its worker was killed: it is tried again on a
    # new worker and decided; every other page is decided as inline.
    assert sorted(paths(site, result.kept)) == sorted([*ARTICLES, SLOW])
    assert result.simhash == {
        **SITE_STATS,
        "simhash/skipped/dont_simhash": 1,
        "simhash/checked": 12,
        "simhash/unique": 6,
        "simhash/index/size": 6,
        "simhash/workers/restarted": result.simhash["simhash/workers/restarted"],
    }
    # the slow page's worker is replaced at once; its sibling when a page comes to it
    assert result.simhash["simhash/workers/restarted"] in (1, 2)
    assert "died" in caplog.text and "trying it on a new worker" in caplog.text
    assert worker_pids() == []  # all stopped at close


@deferred_f_from_coro_f
async def test_a_page_past_the_timeout_is_skipped_and_the_crawl_goes_on(
    site, tmp_path, routes, monkeypatch, caplog
):
    """The slow page hangs its worker (launched to hang there); the other pages take a
    fraction of the timeout, even on a loaded machine. The warning names the timeout set
    and the page."""
    caplog.set_level("WARNING", logger="scrapy_simhash")
    routes[SLOW] = (200, "text/html; charset=utf-8", _slow_page(200))
    launcher, _ = faulty_python(tmp_path, SLOW, hang=True)
    monkeypatch.setattr(sys, "executable", str(launcher))
    settings = {**MIDDLEWARE, "SIMHASH_WORKERS": 2, "SIMHASH_TIMEOUT": 3}
    started = time.monotonic()
    result = await crawl(settings, tmp_path, site, spider=slow_first_spider())
    assert time.monotonic() - started < 60
    assert sorted(paths(site, result.kept)) == sorted([*ARTICLES, SLOW])
    assert result.simhash == {
        **SITE_STATS,
        "simhash/skipped/dont_simhash": 1,
        "simhash/skipped/timeout": 1,
        "simhash/workers/restarted": 1,
    }
    assert worker_pids() == []
    warnings = [r.getMessage() for r in caplog.records if "took more than" in r.getMessage()]
    assert len(warnings) == 1
    assert re.fullmatch(
        rf"Simhash worker \d+ took more than 3 s on {re.escape(site.url(SLOW))}: killed, "
        r"page skipped",
        warnings[0],
    )


@deferred_f_from_coro_f
async def test_writes_are_batched_and_the_close_commits_them(site, tmp_path):
    path = tmp_path / "simhash" / "site"
    seen_during_crawl = []

    class PeekingSpider(SiteSpider):
        def parse_page(self, response):
            if response.url.endswith(ARTICLES[-1]):  # every page is decided by now
                seen_during_crawl.append(_entries_seen_by_another_process(path))
            yield from super().parse_page(response)

    settings = {
        **MIDDLEWARE,
        "SIMHASH_WORKERS": 2,
        "SIMHASH_COMMIT_EVERY": 100_000,
        "SIMHASH_COMMIT_INTERVAL": 3600,
    }
    result = await crawl(settings, tmp_path, site, spider=PeekingSpider)
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
    assert seen_during_crawl == [0]  # one open batch: nothing committed yet
    assert _entries_seen_by_another_process(path) == 5  # committed at close
    with SimhashIndex(path, readonly=True) as index:
        assert sorted(index.keys()) == sorted(site.url(p) for p in ARTICLES)
        assert index.verify() == []


def _entries_seen_by_another_process(path: Path) -> int:
    code = (
        "import sys; from scrapy_simhash.index import SimhashIndex; "
        "print(len(SimhashIndex(sys.argv[1], readonly=True)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


KILLED_CRAWL = """
import json, os, signal, sys
from pathlib import Path

import scrapy

ARTICLES = json.loads(os.environ["ARTICLES"])
sys.path.insert(0, os.environ["TESTS_PARENT"])
from tests._procs import worker_pids


class Spider(scrapy.Spider):
    name = "killed"
    custom_settings = {"CONCURRENT_REQUESTS": 1}

    async def start(self):
        for i, path in enumerate(ARTICLES):
            yield scrapy.Request(os.environ["BASE"] + path, priority=-i)

    def parse(self, response):
        if response.url.endswith(ARTICLES[3]):  # four pages decided, three committed
            Path("workers.json").write_text(json.dumps(worker_pids()))
            os.kill(os.getpid(), signal.SIGKILL)
        yield {"url": response.url}
"""


def test_a_crawl_killed_mid_batch_loses_only_that_batch(site, tmp_path):
    (tmp_path / "killed.py").write_text(textwrap.dedent(KILLED_CRAWL))
    env = {
        **os.environ,
        "ARTICLES": json.dumps(ARTICLES),
        "BASE": site.url("").rstrip("/"),
        "TESTS_PARENT": str(Path(__file__).parents[1]),
    }
    argv = [sys.executable, "-m", "scrapy", "runspider", "killed.py"]
    argv += ["-s", 'DOWNLOADER_MIDDLEWARES={"scrapy_simhash.SimhashMiddleware": 543}']
    argv += ["-s", "SIMHASH_DIR=index", "-s", "SIMHASH_WORKERS=2"]
    argv += ["-s", "SIMHASH_COMMIT_EVERY=3", "-s", "SIMHASH_COMMIT_INTERVAL=3600"]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    with SimhashIndex(tmp_path / ".scrapy" / "index" / "killed", readonly=True) as index:
        assert index.verify() == []
        assert sorted(index.keys()) == sorted(site.url(p) for p in ARTICLES[:3])
    # The orphaned workers notice that the crawl is gone and exit, quietly (they share the
    # crawl's stderr: the pipe above closed only once they had exited).
    workers = json.loads((tmp_path / "workers.json").read_text())
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while any(map(alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(alive, workers))
    assert b"Traceback" not in proc.stderr


@deferred_f_from_coro_f
async def test_workers_that_cannot_start_leave_the_work_inline(site, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    settings = {**MIDDLEWARE, "SIMHASH_WORKERS": 2}
    crawler = get_crawler(SiteSpider, {**settings, "SIMHASH_DIR": str(tmp_path / "simhash")})
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert {k: v for k, v in stats.items() if k.startswith("simhash/")} == {
        **SITE_STATS,
        "simhash/skipped/dont_simhash": 1,
    }
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1
    assert errors[0].startswith("Simhash worker processes cannot start (FileNotFoundError")


@deferred_f_from_coro_f
async def test_a_job_the_pool_cannot_hand_over_is_answered_and_the_pool_goes_on():
    """A fault in the pool's own thread (here a job that cannot be pickled for the worker)
    answers that job with a WorkerError instead of killing the thread, whose every later
    job would then never be answered, and the next job gets a worker again."""
    from scrapy.utils.defer import maybe_deferred_to_future

    from scrapy_simhash.crawl.pages import PageOptions, PageWork
    from scrapy_simhash.crawl.workers import WorkerError, WorkerPool

    page = (Path(__file__).parents[1] / "example_project/site/news/bike-lanes.html").read_bytes()
    pool = WorkerPool(1, PageOptions())
    pool.start()
    try:
        with pytest.raises(WorkerError, match="pickle"):
            await maybe_deferred_to_future(pool.submit("html", lambda: page, None))
        answer = await maybe_deferred_to_future(pool.submit("html", page, None))
    finally:
        pool.close()
    assert answer == PageWork(PageOptions()).html(page, None)
    assert worker_pids() == []


def test_the_pool_refuses_a_timeout_no_socket_wait_can_take():
    from scrapy_simhash.crawl.pages import PageOptions
    from scrapy_simhash.crawl.workers import MAX_TIMEOUT, WorkerPool

    with pytest.raises(ValueError, match="timeout must be > 0 and <= 86400 s"):
        WorkerPool(1, PageOptions(), timeout=1e7)
    assert WorkerPool(1, PageOptions(), timeout=MAX_TIMEOUT).timeout == MAX_TIMEOUT


@deferred_f_from_coro_f
async def test_the_pool_hands_over_at_most_queue_size_pages(tmp_path):
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet.defer import gatherResults

    from scrapy_simhash.crawl.pages import PageOptions, PageWork
    from scrapy_simhash.crawl.workers import WorkerPool

    pages = [
        path.read_bytes()
        for path in sorted((Path(__file__).parents[1] / "example_project/site").rglob("*.html"))
    ]
    pool = WorkerPool(1, PageOptions(), queue_size=2)
    pool.start()
    try:
        results = [pool.submit("html", page, None) for page in pages]
        # Two pages handed over (queued or in the worker), the others wait in the reactor.
        assert pool._slots.tokens == 0
        assert len(pool._slots.waiting) == len(pages) - 2
        answers = await maybe_deferred_to_future(gatherResults(results))
    finally:
        pool.close()
    work = PageWork(PageOptions())
    assert answers == [work.html(page, None) for page in pages]
    assert worker_pids() == []
