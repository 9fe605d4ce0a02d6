"""README promises kept with worker processes (``SIMHASH_WORKERS``): ``SIMHASH_FAST`` reaches
the workers' extraction, and a page that its worker dies on twice is skipped
(``simhash/skipped/worker_died``) while the crawl goes on. A worker dies by a launcher set as
``sys.executable`` that kills it on one page (see ``tests/_procs.py``): the real worker, real
extraction, a death at a known moment."""

from __future__ import annotations

import logging
import os
import signal
import sys

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash.text.extract import extract_text
from scrapy_simhash.text.fingerprint import Fingerprinter, hamming

from ._procs import faulty_python, worker_pids
from .test_redis_crawl import _OnThirdArticle
from .test_scrapy_crawl import ARTICLES, MIDDLEWARE, SITE_STATS, SiteSpider, crawl, paths

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="finds worker processes through /proc"
)

SENTENCES = [
    "The harbour ferry timetable changes on Monday, with two early sailings added for commuters",
    "Residents of the island asked the operator for a later boat on weekends during the summer",
    "The operator said the new vessel would carry more bicycles and have a heated waiting room",
    "Tickets bought before the change stay valid until the end of the month on every route",
]
#: A page whose text is in <span>s, under a menu <div>: trafilatura's fallback extractors (left
#: out in fast mode) leave the menu out; fast mode keeps it.
FERRY = (
    "<html><head><title>Ferry notice</title></head><body><div class='menu'>Island council "
    "notes on lighthouse repairs, fishing quotas and the winter market</div>"
    + "".join(f"<span>{sentence}.</span> " for sentence in SENTENCES)
    + "</body></html>"
).encode()


def _one_page_spider(path: str):
    class OnePageSpider(SiteSpider):
        seen: dict = {}  # noqa: RUF012

        def parse_index(self, response):
            yield response.follow(path, self.parse_page, priority=1000)
            yield from super().parse_index(response)

        def parse_page(self, response):
            if response.url.endswith(path):
                self.seen[path] = response.meta.get("simhash")
            yield from super().parse_page(response)

    OnePageSpider.seen = {}
    return OnePageSpider


@deferred_f_from_coro_f
async def test_simhash_fast_is_honoured_in_the_worker_processes(site, tmp_path, routes):
    routes["/ferry.html"] = (200, "text/html; charset=utf-8", FERRY)
    fp = Fingerprinter()
    fast, full = (fp.fingerprint(extract_text(FERRY, fast=f)) for f in (True, False))
    assert "Island council" in extract_text(FERRY, fast=True)
    assert "Island council" not in extract_text(FERRY)
    assert hamming(fast, full) > 3  # not a near duplicate of itself either way
    for setting, expected in ((True, fast), (False, full)):
        spider = _one_page_spider("/ferry.html")
        settings = {**MIDDLEWARE, "SIMHASH_WORKERS": 1, "SIMHASH_FAST": setting}
        result = await crawl(settings, tmp_path / str(setting), site, spider=spider)
        assert spider.seen["/ferry.html"]["fingerprint"] == expected
        assert result.simhash["simhash/unique"] == 6
    assert worker_pids() == []


@deferred_f_from_coro_f
async def test_a_page_its_worker_dies_on_twice_is_skipped_and_the_crawl_goes_on(
    site, tmp_path, routes, monkeypatch, caplog
):
    routes["/poison.html"] = (200, "text/html; charset=utf-8", FERRY)
    launcher, deaths = faulty_python(tmp_path, "/poison.html", kills=1000)
    monkeypatch.setattr(sys, "executable", str(launcher))
    spider = _one_page_spider("/poison.html")
    settings = {**MIDDLEWARE, "SIMHASH_WORKERS": 1}
    result = await crawl(settings, tmp_path, site, spider=spider)
    assert deaths.read_text() == "xx"  # tried twice, not more
    assert sorted(paths(site, result.kept)) == sorted([*ARTICLES, "/poison.html"])
    assert spider.seen["/poison.html"] is None  # passed on, unchecked
    assert result.simhash == {
        **SITE_STATS,
        "simhash/skipped/dont_simhash": 1,
        "simhash/skipped/worker_died": 1,
        # the worker that died on the first try, and the one that died on the second (its
        # replacement starts for the next page)
        "simhash/workers/restarted": 2,
    }
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    died = [m for m in warnings if " died " in m]
    assert len(died) == 2
    assert died[0].endswith("/poison.html: trying it on a new worker")
    assert died[1].endswith("/poison.html: page skipped")
    assert worker_pids() == []


class _SignalsWorkers(_OnThirdArticle):
    """Sends SIGINT and SIGTERM to every worker at the third article, as a terminal's Ctrl-C
    and systemd's stop (a SIGTERM to every process of the unit) do."""

    def act(self) -> None:
        pids = worker_pids()
        assert pids
        for pid in pids:
            # a session of its own: a terminal's Ctrl-C (to the crawl's group) never reaches it
            assert os.getsid(pid) == pid != os.getsid(0)
            os.kill(pid, signal.SIGINT)
            os.kill(pid, signal.SIGTERM)


@deferred_f_from_coro_f
async def test_workers_outlive_a_ctrl_c_or_sigterm_sent_to_every_process(site, tmp_path, caplog):
    """The crawl shuts down gracefully on SIGINT or SIGTERM and needs its workers until it
    closes them: workers that SIGTERM killed (systemd's stop) were said dead and replaced,
    and a Ctrl-C while one imported its libraries printed a traceback and killed it."""
    settings = {
        **MIDDLEWARE,
        "DOWNLOADER_MIDDLEWARES": {**MIDDLEWARE["DOWNLOADER_MIDDLEWARES"], _SignalsWorkers: 600},
        "SIMHASH_WORKERS": 2,
    }
    result = await crawl(settings, tmp_path, site)
    stats = result.simhash
    assert {k: stats[k] for k in SITE_STATS if k in stats} == SITE_STATS
    assert "simhash/workers/restarted" not in stats
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert worker_pids() == []
