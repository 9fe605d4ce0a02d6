"""Real in-process crawls of the loopback site with the middleware, the pipeline, or both."""

from __future__ import annotations

import gc
import logging
import weakref
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import attrs
import pytest
import scrapy
from scrapy import Request, Spider, signals
from scrapy.http import HtmlResponse
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash.crawl.middleware import SimhashMiddleware
from scrapy_simhash.crawl.pipeline import SimhashPipeline
from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.text.extract import extract_text

SITE = Path(__file__).parents[1] / "example_project" / "site"
BAD = Path(__file__).parent / "site" / "bad"

MIDDLEWARE = {"DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 543}}
PIPELINE = {"ITEM_PIPELINES": {SimhashPipeline: 200}}
BOTH = {**MIDDLEWARE, **PIPELINE}

ARTICLES = [
    f"/news/{slug}.html"
    for slug in (
        "bike-lanes",
        "heatwave-grid",
        "coral-survey",
        "bakery-award",
        "library-night-school",
    )
]
UTM = "/news/bike-lanes.html?utm_source=newsletter&utm_medium=email&utm_campaign=morning-briefing"


COPIES = {  # page -> (the page it duplicates, distance)
    "/wire/bike-lanes.html": ("/news/bike-lanes.html", 0),
    "/wire/heatwave-grid.html": ("/news/heatwave-grid.html", 0),
    "/print/bike-lanes.html": ("/news/bike-lanes.html", 0),
    "/print/heatwave-grid.html": ("/news/heatwave-grid.html", 0),
    # ads, comments and a correction: the README says it has the article's fingerprint
    "/archive/bike-lanes.html": ("/news/bike-lanes.html", 0),
    UTM: ("/news/bike-lanes.html", 0),
}


def distance_stats(distances: list[int]) -> dict[str, int]:
    """The stats of drops at these distances, all by the Hamming rule."""
    counts = {f"simhash/duplicate/distance/{d}": n for d, n in Counter(distances).items()}
    return {**counts, "simhash/duplicate/by/hamming": len(distances)}


#: The example crawl's stats as the README prints them (less the start page and robots.txt).
SITE_STATS = {
    "simhash/checked": 11,
    "simhash/unique": 5,
    "simhash/duplicate": 6,
    "simhash/duplicate/distance/0": 6,
    "simhash/duplicate/by/hamming": 6,
    "simhash/index/size": 5,
}


class SiteSpider(Spider):
    """Follows the links of a start page in their order (one request at a time) and yields
    ``items_per_page`` items per HTML page, with the fields named in ``fields``."""

    name = "site"
    custom_settings: ClassVar[dict] = {"CONCURRENT_REQUESTS": 1, "LOG_LEVEL": "DEBUG"}

    def __init__(self, start_url, fields=("url", "title"), items_per_page=1, **kwargs):
        super().__init__(**kwargs)
        self.start_url = start_url
        self.fields = fields
        self.items_per_page = items_per_page

    async def start(self):
        yield Request(self.start_url, self.parse_index, meta={"dont_simhash": True})

    def parse_index(self, response):
        links = response.css("li a::attr(href)").getall()
        for i, href in enumerate(links):
            yield response.follow(href, self.parse_page, priority=len(links) - i)

    def parse_page(self, response):
        if not isinstance(response, HtmlResponse):
            return
        values = {
            "url": response.url,
            "title": response.css("title::text").get(""),
            "html": response.text,
            "simhash": response.meta.get("simhash"),
        }
        for part in range(self.items_per_page):
            yield {"part": part, **{f: values[f] for f in self.fields}}


@dataclass
class Crawl:
    kept: list
    dropped: list
    stats: dict
    simhash: dict


async def crawl(
    settings, tmp_path, site, start="/index.html", spider=SiteSpider, **kwargs
) -> Crawl:
    # Inline unless a test asks for workers (each crawl with workers starts its processes).
    settings = {"SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0, **settings}
    crawler = get_crawler(spider, settings)
    kept, dropped = [], []
    crawler.signals.connect(lambda item: kept.append(item), signals.item_scraped, weak=False)
    crawler.signals.connect(
        lambda item, exception: dropped.append((item, exception)),
        signals.item_dropped,
        weak=False,
    )
    await crawler.crawl_async(start_url=site.url(start), **kwargs)
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert "log_count/ERROR" not in stats
    simhash = {k: v for k, v in stats.items() if k.startswith("simhash/")}
    return Crawl(kept, dropped, stats, simhash)


def paths(site, items) -> list[str]:
    prefix = site.url("")
    return [item["url"].removeprefix(prefix) for item in items]


#: The same decisions are expected inline and with worker processes.
WORKERS = pytest.mark.parametrize("workers", [0, 2], ids=["inline", "2-workers"])


@WORKERS
@deferred_f_from_coro_f
async def test_middleware_drops_near_duplicate_pages(site, tmp_path, workers):
    # As the README says: import paths of the package's re-exports.
    settings = {
        "DOWNLOADER_MIDDLEWARES": {"scrapy_simhash.SimhashMiddleware": 543},
        "SIMHASH_WORKERS": workers,
    }
    result = await crawl(settings, tmp_path, site)
    assert paths(site, result.kept) == ARTICLES
    assert result.dropped == []
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
    assert "item_dropped_count" not in result.stats
    with SimhashIndex(tmp_path / "simhash" / "site") as index:
        assert sorted(m.key for m in index.items()) == sorted(site.url(p) for p in ARTICLES)


@deferred_f_from_coro_f
async def test_middleware_attaches_the_fingerprint_for_the_spider(site, tmp_path):
    result = await crawl(MIDDLEWARE, tmp_path, site, fields=("url", "simhash"))
    with SimhashIndex(tmp_path / "simhash" / "site") as index:
        for item in result.kept:
            stored = index.get(item["url"])
            assert item["simhash"] == {
                "fingerprint": stored.fingerprint,
                "duplicate_of": None,
                "distance": None,
                "rule": None,
            }


@WORKERS
@deferred_f_from_coro_f
async def test_pipeline_drops_items_of_near_duplicate_pages(site, tmp_path, caplog, workers):
    caplog.set_level(logging.DEBUG)
    settings = {**PIPELINE, "SIMHASH_WORKERS": workers}
    result = await crawl(settings, tmp_path, site, fields=("url", "title", "html"))
    assert paths(site, result.kept) == ARTICLES
    assert paths(site, (item for item, _ in result.dropped)) == list(COPIES)
    for item, exception in result.dropped:
        path = item["url"].removeprefix(site.url(""))
        of, distance = COPIES[path]
        assert str(exception) == f"Near-duplicate of {site.url(of)} (distance {distance})"
    assert result.simhash == SITE_STATS
    assert result.stats["item_dropped_reasons_count/NearDuplicate"] == 6
    # One short DEBUG line per drop; the item (with its page's HTML) is never logged.
    shown = [r.getMessage() for r in caplog.records if r.levelno >= logging.DEBUG]
    drops = [m for m in shown if m.startswith("Dropped near-duplicate item")]
    assert len(drops) == 6
    assert drops[0] == (
        f"Dropped near-duplicate item {site.url('/wire/bike-lanes.html')}: duplicate of "
        f"{site.url('/news/bike-lanes.html')} (distance 0, by hamming)"
    )
    assert not [m for m in shown if m.startswith("Dropped:")]  # Scrapy's, with the item
    # each says which spider's crawl it is about, as Scrapy's own lines do
    spiders = [
        getattr(r, "spider", None)
        for r in caplog.records
        if r.getMessage().startswith("Dropped near-duplicate item")
    ]
    assert [spider.name for spider in spiders] == [SiteSpider.name] * 6


@deferred_f_from_coro_f
async def test_pipeline_checks_the_text_field(site, tmp_path):
    class TextSpider(SiteSpider):
        def parse_page(self, response):
            text = extract_text(response.body)
            yield {"url": response.url, "text": text}

    settings = {**PIPELINE, "SIMHASH_DIR": str(tmp_path)}
    crawler = get_crawler(TextSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert stats["item_scraped_count"] == 5
    assert stats["simhash/unique"] == 5
    assert stats["simhash/checked"] == 11


@pytest.mark.parametrize(
    "fields",
    [("url", "title", "html"), ("title", "html")],
    ids=["linked-by-url", "linked-by-html"],
)
@WORKERS
@deferred_f_from_coro_f
async def test_both_components_check_each_page_once(site, tmp_path, fields, workers):
    settings = {**BOTH, "SIMHASH_WORKERS": workers}
    result = await crawl(settings, tmp_path, site, fields=fields, items_per_page=2)
    # Two items of each new page are kept, none is taken for a duplicate of its own page;
    # near-duplicate pages never reach the spider.
    assert [item["title"] for item in result.kept] == [
        t for t in _titles(ARTICLES) for _ in range(2)
    ]
    assert result.dropped == []
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}


class LateItemsSpider(SiteSpider):
    """Holds the items of every page until all pages are answered (parsed, or dropped by the
    middleware), and puts the page's URL in ``page``, a field the pipeline does not read: the
    pipeline gets each item after the middleware decided every page, its copies included."""

    def parse_index(self, response):
        self.unanswered = 0
        self.held = []
        for request in super().parse_index(response):
            self.unanswered += 1
            yield request.replace(errback=self.dropped)

    def parse_page(self, response):
        self.held += [{**item, "page": response.url} for item in super().parse_page(response)]
        yield from self._answered()

    def dropped(self, failure):
        yield from self._answered()

    def _answered(self):
        self.unanswered -= 1
        if not self.unanswered:
            yield from self.held


@deferred_f_from_coro_f
async def test_items_linked_by_html_reach_the_pipeline_after_copies_of_their_page(site, tmp_path):
    # /news/bike-lanes.html with tracking parameters is the article's page, byte for byte: an
    # item of the article, whose HTML is also the copy's, must get the article's decision.
    result = await crawl(
        BOTH,
        tmp_path,
        site,
        spider=LateItemsSpider,
        fields=("title", "html"),
        items_per_page=2,
    )
    dropped_as_itself = [
        item["page"] for item, drop in result.dropped if drop.duplicate_of == item["page"]
    ]
    assert dropped_as_itself == []
    prefix = site.url("")
    assert sorted(item["page"].removeprefix(prefix) for item in result.kept) == sorted(ARTICLES * 2)
    assert result.dropped == []
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}


@WORKERS
@deferred_f_from_coro_f
async def test_pipeline_keeps_or_drops_all_items_of_a_page(site, tmp_path, workers):
    settings = {**PIPELINE, "SIMHASH_WORKERS": workers}
    result = await crawl(settings, tmp_path, site, fields=("url", "html"), items_per_page=3)
    # The items of a page wait for its one decision together (with workers, while their
    # page is in a worker), and may finish in any order.
    assert sorted(paths(site, result.kept)) == sorted(ARTICLES * 3)
    assert sorted(paths(site, (i for i, _ in result.dropped))) == sorted(list(COPIES) * 3)
    assert result.simhash == SITE_STATS  # each page extracted and checked once


@deferred_f_from_coro_f
async def test_addon_wires_both_components(site, tmp_path):
    # As the README says: the import path of the package's re-export.
    settings = {"ADDONS": {"scrapy_simhash.Addon": 300}}
    result = await crawl(settings, tmp_path, site, fields=("url", "html"))
    assert paths(site, result.kept) == ARTICLES
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}


@pytest.mark.parametrize(("components", "what"), [(BOTH, "page"), (PIPELINE, "item")])
@deferred_f_from_coro_f
async def test_dry_run_counts_but_keeps_everything(site, tmp_path, caplog, components, what):
    caplog.set_level(logging.DEBUG)
    settings = {**components, "SIMHASH_DRY_RUN": True}
    result = await crawl(settings, tmp_path, site, fields=("url", "html"))
    assert paths(site, result.kept) == [*ARTICLES, *COPIES]
    assert result.simhash["simhash/duplicate"] == len(COPIES)
    if components is BOTH:
        assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
    messages = [r.getMessage() for r in caplog.records]
    assert f"Kept (dry run) near-duplicate {what} {site.url(UTM)}: duplicate of " in "\n".join(
        messages
    )
    # one line a near duplicate, said by the component that checked its page: with the
    # middleware, none again for the page's item in the pipeline
    said = [m for m in messages if m.startswith("Kept (dry run) near-duplicate ")]
    assert len(said) == len(COPIES)
    assert all(m.startswith(f"Kept (dry run) near-duplicate {what} ") for m in said)


@deferred_f_from_coro_f
async def test_second_crawl_drops_what_the_first_stored(site, tmp_path, routes):
    first = await crawl(MIDDLEWARE, tmp_path, site)
    assert first.simhash["simhash/index/size"] == 5
    # The coral story is rewritten (changed beyond k) and a new story is linked.
    routes["/news/coral-survey.html"] = (
        200,
        "text/html",
        (BAD / "malformed.html").read_bytes(),
    )
    routes["/news/ferry.html"] = (200, "text/html", (BAD / "no-charset.html").read_bytes())
    index = (
        (SITE / "index.html")
        .read_bytes()
        .replace(b"</ul>", b'<li><a href="/news/ferry.html">new</a></li></ul>')
    )
    routes["/index.html"] = (200, "text/html; charset=utf-8", index)
    second = await crawl(MIDDLEWARE, tmp_path, site)
    assert paths(site, second.kept) == ["/news/coral-survey.html", "/news/ferry.html"]
    assert second.simhash == {
        "simhash/checked": 12,
        "simhash/unique": 2,
        "simhash/duplicate": 10,
        # the five articles stored by the first crawl, unchanged (but one), and the copies
        **distance_stats([0, 0, 0, 0, *(d for _, d in COPIES.values())]),
        "simhash/index/size": 6,
        "simhash/skipped/dont_simhash": 1,
    }
    # SIMHASH_RESET starts from an empty index.
    third = await crawl({**MIDDLEWARE, "SIMHASH_RESET": True}, tmp_path, site)
    assert len(third.kept) == 6


@WORKERS
@deferred_f_from_coro_f
async def test_bad_inputs_are_counted_and_the_crawl_goes_on(site, tmp_path, workers):
    class BadSpider(SiteSpider):
        def parse_index(self, response):
            yield {"title": "an item without URL nor HTML"}
            # a URL no index can hold: a lone surrogate (bytes decoded with surrogateescape)
            yield {"url": "https://b.example/\udcff", "text": "words " * 100}
            yield from super().parse_index(response)

    settings = {**BOTH, "SIMHASH_DIR": str(tmp_path), "SIMHASH_WORKERS": workers}
    crawler = get_crawler(BadSpider, settings)
    kept = []
    crawler.signals.connect(lambda item: kept.append(item), signals.item_scraped, weak=False)
    await crawler.crawl_async(start_url=site.url("/bad/index.html"))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert "log_count/ERROR" not in stats
    assert {k: v for k, v in stats.items() if k.startswith("simhash/")} == {
        "simhash/checked": 4,  # wrong and missing charset, malformed HTML, the good article
        "simhash/unique": 4,
        "simhash/skipped/dont_simhash": 1,
        "simhash/skipped/no_text": 2,  # binary body served as text/html, empty page
        "simhash/skipped/too_large": 1,  # 20 MB
        "simhash/skipped/too_short": 1,
        "simhash/skipped/not_html": 2,  # PNG, JSON
        "simhash/skipped/status": 1,  # 404
        "simhash/skipped/no_field": 1,
        "simhash/skipped/bad_url": 1,
        "simhash/index/size": 4,
    }
    assert sorted(item.get("url", "") for item in kept) == sorted(
        ["", "https://b.example/\udcff"]
        + [
            site.url(p)
            for p in [
                "/bad/binary.html",
                "/bad/huge.html",
                "/bad/empty.html",
                "/bad/wrong-charset.html",
                "/bad/no-charset.html",
                "/bad/malformed.html",
                "/bad/short.html",
                "/news/coral-survey.html",
            ]
        ]
    )


@deferred_f_from_coro_f
async def test_a_bad_setting_stops_the_crawl_at_start(site, tmp_path):
    settings = {**BOTH, "SIMHASH_MAX_DISTANCE": 70, "SIMHASH_DIR": str(tmp_path / "simhash")}
    crawler = get_crawler(SiteSpider, settings)
    with pytest.raises(ValueError, match=r"^SIMHASH_MAX_DISTANCE must be an integer between "):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    assert not (tmp_path / "simhash").exists()  # no index created with the other settings
    # The same crawler with a valid distance creates the index there: the folder's absence
    # above is the bad setting's doing.
    good = get_crawler(SiteSpider, {**settings, "SIMHASH_MAX_DISTANCE": 3})
    await good.crawl_async(start_url=site.url("/robots.txt"))
    assert (tmp_path / "simhash" / "site").is_dir()


@deferred_f_from_coro_f
async def test_simhash_enabled_false_turns_both_off(site, tmp_path):
    result = await crawl({**BOTH, "SIMHASH_ENABLED": False}, tmp_path, site)
    assert len(result.kept) == 11
    assert result.simhash == {}


@deferred_f_from_coro_f
async def test_components_turned_off_do_not_read_their_other_settings(site, tmp_path):
    """SIMHASH_ENABLED = False turns them off whatever the other SIMHASH_* settings hold: a
    project whose index is on the REDIS_URL server, crawled without it (REDIS_URL unset), or
    with a value the crawl would refuse. Only SIMHASH_ENABLED itself must be a boolean."""
    settings = {
        **BOTH,
        "SIMHASH_ENABLED": "False",
        "SIMHASH_REDIS_URL": "REDIS_URL",
        "SIMHASH_RESET": True,
        "SIMHASH_MAX_DISTANCE": 70,
    }
    result = await crawl(settings, tmp_path, site)
    assert len(result.kept) == 11
    assert result.simhash == {}
    assert not (tmp_path / "simhash").exists()
    crawler = get_crawler(SiteSpider, {**settings, "SIMHASH_ENABLED": "nope"})
    with pytest.raises(ValueError, match=r"^SIMHASH_ENABLED must be a boolean "):
        await crawler.crawl_async(start_url=site.url("/index.html"))


def _titles(pages: list[str]) -> list[str]:
    import re

    return [
        re.search(r"<title>(.*?)</title>", (SITE / p.lstrip("/")).read_text()).group(1)
        for p in pages
    ]


class PageItem(scrapy.Item):
    url = scrapy.Field()
    html = scrapy.Field()


@dataclass
class PageData:
    url: str
    html: str


@attrs.define
class PageAttrs:
    url: str
    html: str


@pytest.mark.parametrize(
    "item_class", [PageItem, PageData, PageAttrs], ids=["scrapy.Item", "dataclass", "attrs"]
)
@deferred_f_from_coro_f
async def test_pipeline_reads_items_through_itemadapter(site, tmp_path, item_class):
    class TypedSpider(SiteSpider):
        def parse_page(self, response):
            yield item_class(url=response.url, html=response.text)

    settings = {**PIPELINE, "SIMHASH_DIR": str(tmp_path)}
    crawler = get_crawler(TypedSpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert (stats["item_scraped_count"], stats["item_dropped_count"]) == (5, 6)
    assert {k: v for k, v in stats.items() if k.startswith("simhash/")} == SITE_STATS


@deferred_f_from_coro_f
async def test_an_index_built_with_another_distance_stops_the_crawl(site, tmp_path):
    SimhashIndex(tmp_path / "simhash" / "site", max_distance=3).close()
    crawler = get_crawler(
        SiteSpider,
        {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_MAX_DISTANCE": 4},
    )
    with pytest.raises(ValueError, match=r"max_distance.*SIMHASH_RESET=True"):
        await crawler.crawl_async(start_url=site.url("/index.html"))
    result = await crawl(
        {**MIDDLEWARE, "SIMHASH_MAX_DISTANCE": 4, "SIMHASH_RESET": True}, tmp_path, site
    )
    assert len(result.kept) == 5


class ResponseRecorder:
    """Downloader middleware seeing responses before the simhash middleware does."""

    seen: ClassVar[list] = []

    def process_response(self, request, response):
        self.seen.append((response.url, weakref.ref(response)))
        return response


@deferred_f_from_coro_f
async def test_dropped_responses_do_not_keep_their_bodies(site, tmp_path):
    # Scrapy keeps a response dropped with IgnoreRequest in a reference cycle until the cyclic
    # GC runs; the middleware empties it, so that bodies do not pile up until then.
    settings = {
        "DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 543, ResponseRecorder: 900},
        "SIMHASH_WORKERS": 0,
    }
    ResponseRecorder.seen.clear()
    gc.collect()
    gc.disable()
    try:
        result = await crawl(settings, tmp_path, site)
        alive = {url: ref() for url, ref in ResponseRecorder.seen if ref() is not None}
    finally:
        gc.enable()
    dropped = {site.url(p) for p in COPIES}
    assert result.simhash["simhash/duplicate"] == len(dropped)
    kept_alive = [url for url in alive if url in dropped]
    assert kept_alive  # still alive (in cycles, the GC being off): the test can see them
    assert all(alive[url].body == b"" for url in kept_alive)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [({}, (False, True)), ({"SIMHASH_FAST": True, "SIMHASH_FSYNC": False}, (True, False))],
    ids=["defaults", "fast-no-fsync"],
)
@deferred_f_from_coro_f
async def test_fast_extraction_and_fsync_reach_the_extraction_and_lmdb(
    site, tmp_path, settings, expected
):
    """By default a page is extracted in full and each commit is flushed (LMDB's sync flag);
    SIMHASH_FAST and SIMHASH_FSYNC = False change both."""
    flags = []

    class FlagSpider(SiteSpider):
        def parse_page(self, response):
            service = self.crawler._simhash_service
            flags.append((service.work.options.fast, service.index._tx.storage.env.flags()["sync"]))
            yield from super().parse_page(response)

    result = await crawl({**MIDDLEWARE, **settings}, tmp_path, site, spider=FlagSpider)
    assert set(flags) == {expected}
    assert paths(site, result.kept) == ARTICLES
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}


# A blog whose home page shows its three posts whole, as many blog themes do.
_POSTS = {
    "/blog/library.html": (
        "The old grain store opens as a library",
        [
            "The grain store by the river opened its doors as the town library this spring, "
            "and more than two thousand readers came through them in the first week alone.",
            "Older residents remember queues of tractors outside in every harvest season; now "
            "the queue is of children holding their new cards and arguing about comic books.",
            "The architect kept the timber beams and the brick walls, and cut a row of "
            "skylights into the roof so that the reading room needs no lamps until evening.",
            "Volunteers read stories to the youngest visitors each Saturday, and the librarian "
            "hopes to add calligraphy and drawing classes when the summer holidays begin.",
        ],
    ),
    "/blog/market.html": (
        "Plans for the covered market",
        [
            "The council has approved plans to roof over the square behind the town hall, "
            "giving the Thursday market a dry home for the first time in its long history.",
            "Stallholders asked for wider aisles, running water and a loading bay, and the "
            "engineers promised all three without touching the plane trees along the edge.",
            "Work starts after the autumn fair and should end before Easter, while traders "
            "move to the school playground on market days until the new roof is finished.",
            "The baker who has sold bread there for thirty years said that winter mornings "
            "under a roof will be a luxury she had stopped believing she would ever see.",
        ],
    ),
    "/blog/ferry.html": (
        "A new winter ferry timetable",
        [
            "From December the island ferry will sail twice an hour in the mornings, after "
            "commuters complained that the single early crossing was always full by seven.",
            "The operator is adding a second boat borrowed from the northern route, which "
            "runs half empty in winter when the summer visitors have gone back to the city.",
            "Evening crossings stay as they are, though the last boat will wait ten minutes "
            "for the train from the capital whenever that train is running late.",
            "Island shopkeepers welcomed the change and hope the earlier boats will bring "
            "mainland customers across for breakfast at the harbour cafes on weekends.",
        ],
    ),
}


def _blog_post(path: str, title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f'<div class="post"><h3 class="post-title"><a href="{path}">{title}</a></h3>'
        f'<div class="post-body">{body}</div>'
        f'<div class="post-footer">Posted by Ann at 09:12</div></div>'
    )


def _blog_page(title: str, posts: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        "<header><h1><a href='/blog/'>Small town notes</a></h1></header>"
        f"<main class='blog-posts'>{posts}</main>"
        "<aside><h2>Labels</h2><ul><li><a href='/blog/'>town</a></li></ul></aside>"
        "<footer>Powered by a blog host.</footer></body></html>"
    ).encode()


class BlogSpider(Spider):
    """Crawls the blog from its home page, as a user's spider would: one item a page."""

    name = "blog"
    custom_settings: ClassVar[dict] = {"CONCURRENT_REQUESTS": 1}

    def __init__(self, start_url, **kwargs):
        super().__init__(**kwargs)
        self.start_url = start_url

    async def start(self):
        yield Request(self.start_url)

    def parse(self, response):
        yield {"url": response.url, "html": response.text}
        for i, href in enumerate(response.css("h3.post-title a::attr(href)").getall()):
            yield response.follow(href, priority=-i)


@pytest.fixture
def blog(routes):
    posts = "".join(_blog_post(path, *post) for path, post in _POSTS.items())
    routes["/blog/"] = (200, "text/html", _blog_page("Small town notes", posts))
    for path, (title, paragraphs) in _POSTS.items():
        routes[path] = (200, "text/html", _blog_page(title, _blog_post(path, title, paragraphs)))
    return routes


@pytest.mark.parametrize("components", [MIDDLEWARE, PIPELINE, BOTH], ids=["mw", "pipe", "both"])
@deferred_f_from_coro_f
async def test_listings_drop_none_of_their_posts(site, tmp_path, blog, components):
    """A home page showing whole posts extracts to its first post: checked and stored, it
    drops that post's own page when that comes later (the spider never parses it). It is
    found to be a listing and let through unchecked and unstored, and every post is kept;
    with SIMHASH_SKIP_LISTINGS off, SIMHASH_SKIP_URLS lets it through by its URL."""
    start = "/blog/"
    result = await crawl(components, tmp_path / "default", site, start, spider=BlogSpider)
    assert sorted(paths(site, result.kept)) == ["/blog/", *sorted(_POSTS)]
    assert result.simhash["simhash/skipped/listing"] == 1
    assert result.simhash["simhash/unique"] == 3
    assert "simhash/duplicate" not in result.simhash

    checked = {**components, "SIMHASH_SKIP_LISTINGS": False}
    result = await crawl(checked, tmp_path / "checked", site, start, spider=BlogSpider)
    listing = extract_text(blog["/blog/"][2]) or ""
    firsts = [paragraphs[0] for _, paragraphs in _POSTS.values()]
    assert [first in listing for first in firsts] == [True, False, False]
    assert result.simhash["simhash/duplicate"] == 1
    assert sorted(paths(site, result.kept)) == ["/blog/", "/blog/ferry.html", "/blog/market.html"]

    by_url = {**checked, "SIMHASH_SKIP_URLS": [r"/blog/$"]}
    result = await crawl(by_url, tmp_path / "by_url", site, start, spider=BlogSpider)
    assert sorted(paths(site, result.kept)) == ["/blog/", *sorted(_POSTS)]
    assert result.simhash["simhash/skipped/url"] == 1
    assert result.simhash["simhash/unique"] == 3
    assert "simhash/duplicate" not in result.simhash


@deferred_f_from_coro_f
async def test_worker_processes_find_listings_as_the_crawl_process_does(site, tmp_path, blog):
    """SIMHASH_SKIP_LISTINGS reaches the worker processes, where pages are extracted."""
    settings = {**MIDDLEWARE, "SIMHASH_WORKERS": 2}
    result = await crawl(settings, tmp_path / "default", site, "/blog/", spider=BlogSpider)
    assert sorted(paths(site, result.kept)) == ["/blog/", *sorted(_POSTS)]
    assert result.simhash["simhash/skipped/listing"] == 1
    checked = {**settings, "SIMHASH_SKIP_LISTINGS": False}
    result = await crawl(checked, tmp_path / "checked", site, "/blog/", spider=BlogSpider)
    assert "simhash/skipped/listing" not in result.simhash
    assert result.simhash["simhash/duplicate"] == 1
