"""Crawls on an index on a real Redis server: in-process crawls, two ``scrapy crawl``
processes sharing one index, and a server shut down and restarted in the middle of a crawl."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import pytest
import redis
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

import scrapy_simhash.crawl.remote as remote
import scrapy_simhash.crawl.service as service_module
from scrapy_simhash.crawl.config import SimhashConfig
from scrapy_simhash.index import DamagedIndexError, SimhashIndex
from scrapy_simhash.index.records import doc_id
from scrapy_simhash.index.redis_client import redact
from scrapy_simhash.index.redis_index import RedisIndex
from scrapy_simhash.text.fingerprint import hamming
from scrapy_simhash.text.rule import RULES

from ._redis_server import RedisClusterServers, RedisServer, SlotMove
from .test_example_project import ARTICLES as TITLES
from .test_example_project import EXAMPLE, simhash_stats
from .test_promises import AgainSpider, LateItemsSpider
from .test_scrapy_crawl import (
    _POSTS,
    ARTICLES,
    BOTH,
    MIDDLEWARE,
    PIPELINE,
    SITE_STATS,
    BlogSpider,
    SiteSpider,
    blog,  # noqa: F401 (the fixture of a blog's pages)
    crawl,
    paths,
)
from .test_signature import partner_copies


def redis_settings(url: str, key: str) -> dict:
    return {"SIMHASH_REDIS_URL": url, "SIMHASH_REDIS_KEY": f"{key}:%(spider)s"}


@pytest.fixture
def key() -> str:
    return f"crawl:{uuid.uuid4().hex}"


@deferred_f_from_coro_f
async def test_a_crawl_on_redis_decides_as_on_lmdb(site, tmp_path, redis_server, key):
    settings = {**MIDDLEWARE, **redis_settings(redis_server.url, key)}
    result = await crawl(settings, tmp_path, site)
    assert paths(site, result.kept) == ARTICLES
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
    assert not (tmp_path / "simhash").exists()  # no LMDB index
    with RedisIndex(redis_server.url, f"{key}:site") as index:
        assert sorted(index.keys()) == sorted(site.url(p) for p in ARTICLES)
        # a second crawl finds every page stored
        second = await crawl(settings, tmp_path, site)
        assert second.kept == []
        assert second.simhash["simhash/duplicate"] == 11


@pytest.mark.usefixtures("blog")
@deferred_f_from_coro_f
async def test_a_listing_is_neither_checked_nor_stored_on_redis(site, tmp_path, redis_server, key):
    """A blog's home page showing its posts whole is let through as on LMDB: every post is
    kept, and the index holds the posts alone."""
    settings = {**BOTH, **redis_settings(redis_server.url, key)}
    result = await crawl(settings, tmp_path, site, "/blog/", spider=BlogSpider)
    assert sorted(paths(site, result.kept)) == ["/blog/", *sorted(_POSTS)]
    assert result.simhash["simhash/skipped/listing"] == 1
    assert result.simhash["simhash/unique"] == 3
    with RedisIndex(redis_server.url, f"{key}:blog") as index:
        assert sorted(index.keys()) == sorted(site.url(p) for p in _POSTS)


def _drops_logged(caplog, site) -> dict[str, tuple[str, str]]:
    """{dropped page's path: (path of the page it duplicates, rule)} from the DEBUG lines."""
    drops = {}
    for record in caplog.records:
        if record.getMessage().startswith("Dropped near-duplicate"):
            args = record.args
            drops[args["url"].removeprefix(site.url(""))] = (
                args["of"].removeprefix(site.url("")),
                args["rule"],
            )
    return drops


@deferred_f_from_coro_f
async def test_a_crawl_on_redis_drops_partner_copies_as_on_lmdb(
    site, routes, tmp_path, redis_server, key, caplog
):
    """tests/test_signature.py's articles copied into another site's layout: on Redis the
    same pages are dropped, as duplicates of the same articles, by the same rules as on LMDB,
    the drop records say so on both, and the index keeps the signatures."""
    caplog.set_level(logging.DEBUG, logger="scrapy_simhash")
    expected = partner_copies(routes)
    fields = ("url", "simhash")
    on_lmdb = await crawl(
        MIDDLEWARE, tmp_path / "lmdb", site, start="/partner-index.html", fields=fields
    )
    lmdb_drops = _drops_logged(caplog, site)
    with SimhashIndex(tmp_path / "lmdb" / "simhash" / "site") as index:
        for path, (article, rule) in expected.items():
            drop = index.dropped(site.url(path))
            assert (drop.kept, drop.rule) == (site.url(article), rule)
            assert drop.record["url"] == site.url(path) and drop.record["title"]
        assert all(index.get(site.url(p)).record["url"] == site.url(p) for p in ARTICLES)
    caplog.clear()
    settings = {**MIDDLEWARE, **redis_settings(redis_server.url, key)}
    on_redis = await crawl(
        settings, tmp_path / "redis", site, start="/partner-index.html", fields=fields
    )
    assert paths(site, on_redis.kept) == paths(site, on_lmdb.kept) == ARTICLES
    assert _drops_logged(caplog, site) == lmdb_drops == expected
    # the same stats (distances of the drops included) and the same decisions in the meta
    assert on_redis.simhash == on_lmdb.simhash
    assert "simhash/duplicate/distance/0" not in on_redis.simhash  # sentence-rule drops, far apart
    assert [i["simhash"] for i in on_redis.kept] == [i["simhash"] for i in on_lmdb.kept]
    rules = Counter(rule for _, rule in expected.values())
    assert rules["sentences"] >= 3
    for rule in RULES:
        stat = f"simhash/duplicate/by/{rule}"
        assert on_redis.simhash.get(stat, 0) == on_lmdb.simhash.get(stat, 0) == rules[rule]
    with RedisIndex(redis_server.url, f"{key}:site") as index:
        assert index.verify() == []
        assert all(index.signature(site.url(p)) is not None for p in ARTICLES)
        assert [i["simhash"]["fingerprint"] for i in on_redis.kept] == [
            index.get(site.url(p)).fingerprint for p in ARTICLES
        ]
        # each drop recorded on the server, in the script that decided it, as on LMDB
        assert index.drop_count() == len(expected)
        for path, (article, rule) in expected.items():
            drop = index.dropped(site.url(path))
            assert (drop.kept, drop.rule) == (site.url(article), rule)
            assert drop.record["url"] == site.url(path) and drop.record["title"]


@deferred_f_from_coro_f
async def test_a_dry_run_on_redis_reports_as_on_lmdb(site, routes, tmp_path, redis_server, key):
    """In a dry run every page reaches the spider with its decision in the meta: on Redis the
    same decisions (fingerprint, page duplicated, distance, rule) as on LMDB, page by page."""
    partner_copies(routes)
    dry = {**MIDDLEWARE, "SIMHASH_DRY_RUN": True}
    fields = ("url", "simhash")
    start = "/partner-index.html"
    on_lmdb = await crawl(dry, tmp_path / "lmdb", site, start=start, fields=fields)
    settings = {**dry, **redis_settings(redis_server.url, key)}
    on_redis = await crawl(settings, tmp_path / "redis", site, start=start, fields=fields)
    decisions = [(i["url"], i["simhash"]) for i in on_redis.kept]
    assert decisions == [(i["url"], i["simhash"]) for i in on_lmdb.kept]
    duplicates = [meta for _, meta in decisions if meta["duplicate_of"] is not None]
    assert len(duplicates) == on_lmdb.simhash["simhash/duplicate"] > 0
    assert all(isinstance(meta["fingerprint"], int) for _, meta in decisions)
    assert on_redis.simhash == on_lmdb.simhash


@deferred_f_from_coro_f
async def test_items_of_pages_older_than_the_decision_memory_on_redis(
    site, tmp_path, redis_server, key, monkeypatch
):
    """With room for one decision, the items of five articles, yielded after the last was
    decided, are linked to their pages by the entries this crawl stored on the server, read
    off the reactor thread: each is kept, none is fingerprinted or checked again (the stats
    are LMDB's)."""
    monkeypatch.setattr(service_module, "DECISION_MEMORY", 1)
    # No read or check on the server from the reactor thread (the index is opened and
    # counted there before the first request): the service must not read the index there to
    # recall a forgotten page, as it does on LMDB.
    on_reactor: list[str] = []
    recalled: list[str] = []
    for name in ("get", "get_many", "check_and_insert_many", "query", "probe"):
        method = getattr(RedisIndex, name)

        def watched(self, *args, _method=method, _name=name, **kwargs):
            if threading.current_thread() is threading.main_thread():
                on_reactor.append(_name)
            elif _name == "get":
                recalled.extend(args)
            return _method(self, *args, **kwargs)

        monkeypatch.setattr(RedisIndex, name, watched)
    settings = {**BOTH, **redis_settings(redis_server.url, key)}
    result = await crawl(settings, tmp_path, site, spider=LateItemsSpider, fields=("url", "html"))
    # the reads answer in any order (Scrapy handles a page's items concurrently)
    assert sorted(paths(site, result.kept)) == sorted(ARTICLES)
    assert result.simhash == {"simhash/checked": 5, "simhash/unique": 5, "simhash/index/size": 5}
    assert on_reactor == []
    assert sorted(url.removeprefix(site.url("")) for url in recalled) == sorted(ARTICLES)


@deferred_f_from_coro_f
async def test_a_page_fetched_again_beyond_the_decision_memory_on_redis(
    site, tmp_path, redis_server, key, monkeypatch
):
    """As on LMDB: a page this crawl stored, fetched again once the decision memory has
    forgotten it, is found on the server as this crawl's own entry, and kept again."""
    monkeypatch.setattr(service_module, "DECISION_MEMORY", 1)
    first, second = (site.url(path) for path in ARTICLES[:2])
    settings = {**MIDDLEWARE, **redis_settings(redis_server.url, key)}
    result = await crawl(settings, tmp_path, site, spider=AgainSpider)
    assert [item["url"] for item in result.kept] == [first, second, first]
    assert "simhash/duplicate" not in result.simhash


@deferred_f_from_coro_f
async def test_reset_on_redis_must_name_the_index(site, tmp_path, redis_server, key):
    settings = {**MIDDLEWARE, **redis_settings(redis_server.url, key)}
    await crawl(settings, tmp_path, site)
    with pytest.raises(ValueError, match="must name the index's key"):
        SimhashConfig.from_settings(
            get_crawler(settings_dict={**settings, "SIMHASH_RESET": True}).settings
        )
    wrong = {**settings, "SIMHASH_RESET": "other:site"}
    crawler = get_crawler(SiteSpider, wrong)
    with pytest.raises(ValueError, match="nothing was reset"):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    again = await crawl({**settings, "SIMHASH_RESET": f"{key}:site"}, tmp_path, site)
    assert paths(site, again.kept) == ARTICLES


@pytest.mark.parametrize("flag", ["auto", True])
@deferred_f_from_coro_f
async def test_a_crawl_on_the_cluster_decides_as_on_one_server(site, tmp_path, redis_cluster, flag):
    """On the 3-master cluster, found by asking the server or said by SIMHASH_REDIS_CLUSTER,
    the crawl keeps and drops what it does on one server; the index is on the cluster."""
    key = f"crawl:{uuid.uuid4().hex}"
    settings = {
        **MIDDLEWARE,
        **redis_settings(redis_cluster.url, key),
        "SIMHASH_REDIS_CLUSTER": flag,
    }
    result = await crawl(settings, tmp_path, site)
    assert paths(site, result.kept) == ARTICLES
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
    with RedisIndex(redis_cluster.url, f"{key}:site", cluster=True) as index:
        try:
            assert index.cluster
            assert sorted(index.keys()) == sorted(site.url(p) for p in ARTICLES)
        finally:
            index.drop()


@deferred_f_from_coro_f
async def test_the_cluster_flag_on_a_server_that_is_not_one_stops_the_crawl(
    site, tmp_path, redis_server, key
):
    settings = {
        **MIDDLEWARE,
        **redis_settings(redis_server.url, key),
        "SIMHASH_REDIS_CLUSTER": True,
    }
    crawler = get_crawler(SiteSpider, settings)
    said = r"as a Redis Cluster \(SIMHASH_REDIS_CLUSTER is true\): .*Cluster mode is not enabled"
    with pytest.raises(ValueError, match=said):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    assert crawler.stats.get_value("simhash/checked") is None


def _scrapy_crawl(tmp_path, name: str, *args: str) -> subprocess.Popen:
    out = tmp_path / f"{name}.jsonl"
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(out), *args]
    return subprocess.Popen(command, cwd=EXAMPLE, stderr=subprocess.PIPE, text=True)


def test_two_scrapy_crawl_processes_share_one_index(tmp_path, redis_server, key):
    """Both crawl the same pages at once: between them they keep what one crawl keeps, and
    no near-duplicate pair twice."""
    args = ["-s", f"SIMHASH_REDIS_URL={redis_server.url}", "-s", f"SIMHASH_REDIS_KEY={key}"]
    procs = [_scrapy_crawl(tmp_path, name, *args) for name in ("a", "b")]
    errors = [p.communicate(timeout=180)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors[0][-3000:] + errors[1][-3000:]
    items = [
        json.loads(line)
        for name in ("a", "b")
        for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()
    ]
    assert len(items) == 5
    fingerprints = [int(item["fingerprint"], 16) for item in items]
    assert all(hamming(a, b) > 3 for i, a in enumerate(fingerprints) for b in fingerprints[i + 1 :])
    stats = [simhash_stats(e) for e in errors]
    assert sum(s.get("simhash/unique", 0) for s in stats) == 5
    assert sum(s["simhash/checked"] for s in stats) == 24
    assert all("Simhash index redis://127.0.0.1" in e for e in errors)
    with RedisIndex(redis_server.url, key) as index:
        assert len(index) == 5
        assert index.verify() == []
        assert {m.record["url"] for m in index.items()} == {item["url"] for item in items}
    assert len(TITLES) == 5


class _OnThirdArticle:
    """A downloader middleware that the responses pass before the simhash middleware: it
    acts on the server when the third article arrives, before that article is checked
    (acting from the spider instead would race the checks: the middleware checks a page when
    it is downloaded, and the downloader may run ahead of the spider)."""

    def __init__(self, crawler) -> None:
        self.crawler = crawler
        self.articles = 0

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_response(self, request, response):
        if request.meta.get("dont_simhash"):
            return response
        self.articles += 1
        if self.articles == 3:
            self.act()
        return response

    def act(self) -> None:
        raise NotImplementedError

    def later(self, delay: float, action, *args) -> None:
        """``action(*args)`` ``delay`` seconds from now, joined when the spider closes."""
        timer = threading.Timer(delay, action, args)
        timer.start()
        self.crawler.signals.connect(timer.join, signals.spider_closed, weak=False)


class _ServerStopper(_OnThirdArticle):
    """Shuts the Redis server (or every node of the cluster) down (SHUTDOWN, the AOF
    written) at the third article, and starts it again ``down_for`` seconds later (never
    when None)."""

    server: RedisServer | RedisClusterServers
    down_for: float | None = 1.0

    def act(self) -> None:
        self.server.stop()
        if self.down_for is not None:
            self.later(self.down_for, _start_again, self.server)


def _start_again(server: RedisServer | RedisClusterServers) -> None:
    if isinstance(server, RedisClusterServers):
        server.restart()
    elif server.proc is None:
        server.start()


async def _restart_crawl(site, tmp_path, settings, down_for, *, cluster=False):
    if cluster:
        server = RedisClusterServers(tmp_path / "redis", aof=True).start()
    else:
        server = RedisServer(tmp_path / "redis", aof=True).start()
    stopper = type("Stopper", (_ServerStopper,), {"server": server, "down_for": down_for})
    settings = {
        "DOWNLOADER_MIDDLEWARES": {**MIDDLEWARE["DOWNLOADER_MIDDLEWARES"], stopper: 600},
        **redis_settings(server.url, "restart"),
        **settings,
    }
    crawler = get_crawler(SiteSpider, {"SIMHASH_WORKERS": 0, **settings})
    try:
        await crawler.crawl_async(start_url=site.url("/index.html"))
        _start_again(server)
        with RedisIndex(server.url, "restart:site") as index:
            stored = {m.key for m in index.items()}
    finally:
        server.stop()
    return crawler.stats.get_stats(), stored


def _names_the_outage(messages: list[str], said: str, cluster: bool) -> bool:
    """Whether a message says ``said`` and names the error of a server that does not answer:
    redis-py's ConnectionError, or for a cluster none of whose nodes answers its
    RedisClusterException (a subclass of it since redis-py 8, RedisClusterUnreachableError),
    or the ClusterDownError of masters started again that do not yet serve all their slots."""
    errors = redis.exceptions
    expected = (
        (errors.RedisClusterException, errors.ClusterDownError)
        if cluster
        else (errors.ConnectionError,)
    )
    for message in messages:
        found = re.search(re.escape(said) + r" \((\w+)", message)
        named = found and getattr(redis.exceptions, found.group(1), None)
        if isinstance(named, type) and issubclass(named, expected):
            return True
    return False


class _PolicyChanger(_OnThirdArticle):
    """Sets the server's ``maxmemory-policy`` to ``allkeys-lru`` at the third article."""

    server: RedisServer

    def act(self) -> None:
        with self.server.client() as client:
            client.config_set("maxmemory-policy", "allkeys-lru")


@deferred_f_from_coro_f
async def test_an_eviction_policy_set_mid_crawl_stops_the_checks(
    site, tmp_path, redis_server, key, caplog, monkeypatch
):
    """A server told to evict keys (``allkeys-lru``) after the crawl started: refused as at
    the start (the index would lose pages without a word), once the crawl looks again (every
    minute; at every batch here). The crawl stops, saying the policy; no page is lost
    unsaid."""
    monkeypatch.setattr(remote, "POLICY_EVERY", 0.0)
    changer = type("Changer", (_PolicyChanger,), {"server": redis_server})
    settings = {
        "DOWNLOADER_MIDDLEWARES": {**MIDDLEWARE["DOWNLOADER_MIDDLEWARES"], changer: 600},
        **redis_settings(redis_server.url, key),
        "SIMHASH_WORKERS": 0,
    }
    crawler = get_crawler(SiteSpider, settings)
    try:
        await crawler.crawl_async(start_url=site.url("/index.html"))
    finally:
        with redis_server.client() as client:
            client.config_set("maxmemory-policy", "noeviction")
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "simhash_index_error"
    assert stats["simhash/skipped/index_error"] >= 1
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("cannot be used (EvictingServerError: " in m and "allkeys-lru" in m for m in errors)


@pytest.mark.parametrize("cluster", [False, True])
@deferred_f_from_coro_f
async def test_a_server_restarted_mid_crawl_loses_nothing(site, tmp_path, caplog, cluster):
    """The server, or all three masters of a cluster, shut down (the AOF written) and started
    again a second later, in the middle of a crawl."""
    caplog.set_level(logging.INFO)
    stats, stored = await _restart_crawl(site, tmp_path, {}, down_for=1.0, cluster=cluster)
    assert stats["finish_reason"] == "finished"
    assert "simhash/skipped/index_error" not in stats
    # the same decisions as without the restart, and every page kept is in the index
    assert stats["simhash/unique"] == 5 and stats["simhash/duplicate"] == 6
    assert stored == {site.url(p) for p in ARTICLES}
    assert stats["simhash/index/size"] == len(stored)  # counted at the close, off the reactor
    # redis-py 8 retries a call itself for a few seconds: a second's outage may never reach
    # the crawl (test_a_server_that_stays_down shows the crawl's own retries then).
    if stats.get("simhash/index/errors", 0):
        messages = [r.getMessage() for r in caplog.records]
        assert _names_the_outage(messages, "a call failed", cluster)
        assert any("the server answers again" in m for m in messages)


class _SlotMover(_OnThirdArticle):
    """Starts moving the index's slot to another master at the third article, half of its
    keys migrated at once, and finishes the move once the crawl has met it (a call refused,
    or 10 s at most), as ``redis-cli --cluster reshard`` does on a live cluster."""

    move: SlotMove

    def act(self) -> None:
        self.move.begin(share=0.5)
        self.later(0.0, self.finish_when_met)

    def finish_when_met(self) -> None:
        deadline = time.monotonic() + 10
        while not self.crawler.stats.get_value("simhash/index/errors"):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.move.finish()


@deferred_f_from_coro_f
async def test_the_index_slot_resharded_mid_crawl_loses_nothing(
    site, tmp_path, caplog, redis_cluster
):
    """While its slot moves to another master, the index answers no script (the source
    redirects with ASK, the target says TRYAGAIN until it holds every key): the crawl's
    pages wait, are checked once the slot has moved, and decide as without the move."""
    caplog.set_level(logging.INFO)
    key = f"crawl:{uuid.uuid4().hex}"
    move = SlotMove(redis_cluster, f"{key}:site")
    mover = type("Mover", (_SlotMover,), {"move": move})
    settings = {
        "DOWNLOADER_MIDDLEWARES": {**MIDDLEWARE["DOWNLOADER_MIDDLEWARES"], mover: 600},
        **redis_settings(redis_cluster.url, key),
        "SIMHASH_WORKERS": 0,
    }
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    with RedisIndex(redis_cluster.url, f"{key}:site") as index:
        try:
            with redis_cluster.nodes[0].client() as client:
                slots = client.cluster("SLOTS")
            owner = next(int(m[1]) for a, b, m, *_ in slots if a <= move.slot <= b)
            assert owner == move.target.port  # the slot did move
            stored = {m.key for m in index.items()}
            assert index.verify() == []
        finally:
            index.drop()
    assert stats["finish_reason"] == "finished"
    assert "simhash/skipped/index_error" not in stats
    assert stats["simhash/unique"] == 5 and stats["simhash/duplicate"] == 6
    assert stored == {site.url(p) for p in ARTICLES}
    messages = [r.getMessage() for r in caplog.records]
    assert stats["simhash/index/errors"] >= 1  # the move was met, not missed
    assert any("as the index's slot moves to another master" in m for m in messages)
    assert any("the server answers again" in m for m in messages)


class _IndexLoser(_OnThirdArticle):
    """Deletes the index's keys at the third article, as a server restarted without
    persistence (or another crawl's reset) leaves it."""

    server: RedisServer
    key: str

    def act(self) -> None:
        with self.server.client() as client:
            client.delete(*client.keys(f"{{{self.key}}}:*"))


@pytest.mark.parametrize("on_error", ["stop", "skip"])
@deferred_f_from_coro_f
async def test_an_index_lost_mid_crawl(site, tmp_path, redis_server, key, caplog, on_error):
    """With "skip", the crawl opens its index again and goes on deduplicating (the batch
    that met the loss checked on the new index: no page passes unchecked); it says so at
    WARNING and counts it. With "stop", the crawl stops, as the README says."""
    loser = type("Loser", (_IndexLoser,), {"server": redis_server, "key": f"{key}:site"})
    settings = {
        "DOWNLOADER_MIDDLEWARES": {**MIDDLEWARE["DOWNLOADER_MIDDLEWARES"], loser: 600},
        **redis_settings(redis_server.url, key),
        "SIMHASH_WORKERS": 0,
        "SIMHASH_ON_INDEX_ERROR": on_error,
        "SIMHASH_RESET": f"{key}:site",  # never applied again when the index is opened again
    }
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    if on_error == "stop":
        assert stats["finish_reason"] == "simhash_index_error"
        assert "simhash/index/reopened" not in stats
        return
    with RedisIndex(redis_server.url, f"{key}:site", readonly=True) as index:
        stored = {m.key for m in index.items()}
        assert index.verify() == []
    assert stats["finish_reason"] == "finished"
    assert stats["simhash/index/reopened"] == 1 and stats["simhash/index/errors"] == 1
    assert "simhash/skipped/index_error" not in stats
    assert stats["simhash/checked"] == 11
    # the pages kept after the loss are in the new index, and their copies were dropped
    # one page a story in the new index: the pages kept before the loss are gone with it,
    # and each story's next copy took their place
    assert {url.rsplit("/", 1)[1] for url in stored} == {p.rsplit("/", 1)[1] for p in ARTICLES}
    assert stats["simhash/unique"] > len(stored) == stats["simhash/index/size"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("changed since the crawl opened it" in m and "opened again" in m for m in warnings)


@pytest.mark.parametrize(
    ("on_error", "cluster"), [("stop", False), ("skip", False), ("skip", True)]
)
@deferred_f_from_coro_f
async def test_a_server_that_stays_down(site, tmp_path, caplog, monkeypatch, on_error, cluster):
    """The server, or every node of a cluster, shut down for good mid-crawl: the pages that
    cannot be checked are counted (or the crawl stops), never a hang or a crash."""
    monkeypatch.setattr(remote, "RETRY_DELAYS", (0.05, 0.1))
    settings = {"SIMHASH_ON_INDEX_ERROR": on_error}
    stats, stored = await _restart_crawl(site, tmp_path, settings, down_for=None, cluster=cluster)
    assert stats["simhash/skipped/index_error"] >= 1
    assert stats["simhash/unique"] == len(stored)  # every page reported kept is in the index
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert _names_the_outage(messages, "cannot be used", cluster)
    if on_error == "stop":
        assert stats["finish_reason"] == "simhash_index_error"
    else:
        assert stats["finish_reason"] == "finished"
        assert stats["simhash/checked"] == 11
    assert all("password" not in m for m in messages)
    # the server is still down at the close: said in one line, no traceback, no size
    assert any(
        m.startswith("Simhash index redis://127.0.0.1:")
        and " restart:site: cannot count its entries (" in m
        for m in messages
    )
    assert not any("Error caught on signal handler" in m for m in messages)
    assert "simhash/index/size" not in stats


@deferred_f_from_coro_f
async def test_an_unexpected_error_in_a_batch_of_checks(
    site, tmp_path, redis_server, key, monkeypatch, caplog
):
    """A bug in the checks' thread (planted: the first batch's check-and-insert raises a
    RuntimeError) is logged with its traceback and its pages are counted, without retries;
    the next batch is checked and the crawl finishes."""
    check_and_insert_many = RedisIndex.check_and_insert_many
    batches: list[int] = []

    def failing_first(self, items):
        batches.append(len(items))
        if len(batches) == 1:
            raise RuntimeError("a planted bug")
        return check_and_insert_many(self, items)

    monkeypatch.setattr(RedisIndex, "check_and_insert_many", failing_first)
    settings = {
        **MIDDLEWARE,
        **redis_settings(redis_server.url, key),
        "SIMHASH_WORKERS": 0,
        "SIMHASH_ON_INDEX_ERROR": "skip",
    }
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert len(batches) >= 2
    assert stats["simhash/skipped/index_error"] == batches[0]
    assert "simhash/index/errors" not in stats  # a bug is not the server's: no retry
    decided = stats.get("simhash/unique", 0) + stats.get("simhash/duplicate", 0)
    assert decided + batches[0] == stats["simhash/checked"] == 11
    planted = [r for r in caplog.records if r.exc_info and "a planted bug" in str(r.exc_info[1])]
    assert [r.getMessage() for r in planted] == [
        f"Simhash index {redact(redis_server.url)} {key}:site: unexpected error in a check"
    ]


@deferred_f_from_coro_f
async def test_a_damaged_record_on_redis_read_by_the_pipeline_costs_no_item(
    site, tmp_path, redis_server, key, caplog
):
    """The pipeline alone, on a Redis index: an item's page is looked up by its URL first (a
    decision of this crawl that was forgotten), and a damaged record read there is a page to
    decide again, not an item error (the damage escaped as one, and the item was lost)."""
    settings = {
        **PIPELINE,
        **redis_settings(redis_server.url, key),
        "SIMHASH_WORKERS": 0,
    }
    first = await crawl(settings, tmp_path, site, fields=("url", "html"))
    assert sorted(paths(site, first.kept)) == sorted(ARTICLES)
    client = redis_server.client()
    [docs] = [name for name in client.keys(f"*{key}:site*") if name.endswith(b":docs")]
    damaged = site.url(ARTICLES[0])
    record = bytearray(client.hget(docs, doc_id(damaged)))
    record[-6] ^= 0xFF
    client.hset(docs, doc_id(damaged), bytes(record))
    crawler = get_crawler(SiteSpider, settings)
    failed = []
    crawler.signals.connect(
        lambda item, failure, **kw: failed.append(failure), signals.item_error, weak=False
    )
    await crawler.crawl_async(start_url=site.url("/index.html"), fields=("url", "html"))
    stats = crawler.stats.get_stats()
    assert failed == []
    assert stats["finish_reason"] == "finished"
    assert stats["simhash/checked"] + stats.get("simhash/skipped/index_error", 0) >= 11


@deferred_f_from_coro_f
async def test_a_damaged_record_on_redis_costs_its_pages_a_check_not_the_crawl(
    site, tmp_path, redis_server, key, caplog
):
    """As on LMDB: a stored record that cannot be decoded (a byte changed on the server) is
    said once at ERROR; the pages whose check reads it pass unchecked, counted; the others
    are decided and the crawl finishes (it used to stop, with every page of the batch
    unchecked)."""
    settings = {**MIDDLEWARE, **redis_settings(redis_server.url, key), "SIMHASH_WORKERS": 0}
    first = await crawl(settings, tmp_path, site)
    assert paths(site, first.kept) == ARTICLES
    client = redis_server.client()
    [docs] = [name for name in client.keys(f"*{key}:site*") if name.endswith(b":docs")]
    damaged = site.url(ARTICLES[0])
    with RedisIndex(redis_server.url, f"{key}:site") as index:
        record = bytearray(client.hget(docs, doc_id(damaged)))
        record[-6] ^= 0xFF
        client.hset(docs, doc_id(damaged), bytes(record))
        with pytest.raises(DamagedIndexError):
            index.get(damaged)
    caplog.clear()
    crawler = get_crawler(SiteSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    assert crawler.stats.get_value("finish_reason") == "finished"
    stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("simhash/")}
    unchecked = stats["simhash/skipped/index_error"]
    assert 1 <= unchecked < stats["simhash/checked"] == 11
    assert stats["simhash/duplicate"] == 11 - unchecked  # every other page is stored already
    assert stats["simhash/index/errors"] >= 1
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(said) == 1
    assert said[0].startswith(f"Simhash index {redact(redis_server.url)} {key}:site is damaged")
    assert said[0].endswith(f"'scrapy-simhash verify {redact(redis_server.url)} --key {key}:site'")


@deferred_f_from_coro_f
async def test_a_crawl_on_redis_whose_start_fails_releases_its_thread(
    site, tmp_path, redis_server, key
):
    """As on LMDB (test_faults.py): a component after the plugin's raises in from_crawler, and
    no spider_closed comes. Once the crawler is gone the service is collected, and the thread
    of its checks with it (its reports held the service, and kept both alive)."""
    import gc
    import weakref

    from .test_faults import _BrokenPipeline

    settings = {
        **MIDDLEWARE,
        **redis_settings(redis_server.url, key),
        "ITEM_PIPELINES": {_BrokenPipeline: 300},
        "SIMHASH_DIR": str(tmp_path / "simhash"),
        "SIMHASH_WORKERS": 0,
    }

    def checks() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "simhash-redis"]

    before = checks()
    crawler = get_crawler(SiteSpider, settings)
    with pytest.raises(RuntimeError, match="cannot start"):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    service = weakref.ref(getattr(crawler, service_module._ATTRIBUTE))
    assert len(checks()) == len(before) + 1
    del crawler
    gc.collect()
    assert service() is None
    for thread in checks():
        if thread not in before:
            thread.join(timeout=10)
    assert checks() == before
