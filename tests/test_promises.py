"""README promises that a crawl must keep, each by a crawl that fails when it breaks: the
field settings, the text length and body size limits, the commit timer, the dry run's meta,
redirected and gzip-encoded pages, ``dont_simhash`` items, the add-on's priorities, the
INFO line that names the index, and an article whose HTML source wraps its lines."""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar
from urllib.parse import urljoin

import pytest
from scrapy import Request, signals
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

import scrapy_simhash.crawl.service as service_module
from scrapy_simhash import page_signature
from scrapy_simhash.crawl.addon import Addon
from scrapy_simhash.crawl.middleware import SimhashMiddleware
from scrapy_simhash.crawl.pages import PageWork
from scrapy_simhash.crawl.pipeline import SimhashPipeline
from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.text.extract import extract_text
from scrapy_simhash.text.fingerprint import hamming

from .test_scrapy_crawl import (
    ARTICLES,
    BOTH,
    COPIES,
    MIDDLEWARE,
    PIPELINE,
    SITE,
    SITE_STATS,
    SiteSpider,
    crawl,
    paths,
)
from .test_signature import _configuration_page


class RenamedFieldsSpider(SiteSpider):
    """Items whose fields have other names than the settings' defaults."""

    def parse_page(self, response):
        for item in super().parse_page(response):
            yield {"link": item["url"], "body": item["html"]}


class LoaderListsSpider(SiteSpider):
    """Items as an ItemLoader without ``TakeFirst`` gives them: each field a list (the URL and
    HTML of one value), beside an empty HTML field of another name."""

    def parse_page(self, response):
        for item in super().parse_page(response):
            yield {"url": [item["url"]], "html": [item["html"]], "body": ""}


class ParagraphsSpider(SiteSpider):
    """Items carrying their page's text as a list of paragraphs, and an empty HTML field."""

    def parse_page(self, response):
        text = extract_text(response.body)
        yield {"url": response.url, "html": "", "text": text.split("\n")}


class TextOnlySpider(SiteSpider):
    """Items that carry only their page's extracted text, under the name ``text_name``."""

    text_name = "text"

    def parse_page(self, response):
        yield {self.text_name: extract_text(response.body)}


class ContentOnlySpider(TextOnlySpider):
    text_name = "content"


@deferred_f_from_coro_f
async def test_url_and_html_fields_are_read_from_the_names_set(site, tmp_path):
    settings = {**PIPELINE, "SIMHASH_URL_FIELD": "link", "SIMHASH_HTML_FIELD": "body"}
    result = await crawl(
        settings, tmp_path, site, spider=RenamedFieldsSpider, fields=("url", "html")
    )
    assert [item["link"].removeprefix(site.url("")) for item in result.kept] == ARTICLES
    assert result.simhash == SITE_STATS


@deferred_f_from_coro_f
async def test_list_fields_are_read_as_an_item_loader_gives_them(site, tmp_path):
    """A URL or HTML in a one-value list is that value; a text given as a list of paragraphs
    is their text; an empty HTML beside a text leaves the text to be read (each of these
    passed unchecked as simhash/skipped/no_field)."""
    fields = ("url", "html")
    lists = await crawl(PIPELINE, tmp_path / "a", site, spider=LoaderListsSpider, fields=fields)
    assert [item["url"][0].removeprefix(site.url("")) for item in lists.kept] == ARTICLES
    assert lists.simhash == SITE_STATS
    # an empty HTML field of the name set: decided as an item without it
    settings = {**PIPELINE, "SIMHASH_HTML_FIELD": "body"}
    empty = await crawl(settings, tmp_path / "b", site, spider=LoaderListsSpider, fields=fields)
    assert empty.simhash["simhash/skipped/no_text"] == len(ARTICLES) + len(COPIES)
    paragraphs = await crawl(PIPELINE, tmp_path / "c", site, spider=ParagraphsSpider)
    assert paragraphs.simhash == SITE_STATS  # each copy's text is its article's


@deferred_f_from_coro_f
async def test_the_text_field_is_read_from_the_name_set(site, tmp_path):
    """Items with only a text, named as the setting says, are decided as items with the
    default name are (identical texts are taken for one page; the archived copy, whose text
    differs, is a near duplicate)."""
    default = await crawl(PIPELINE, tmp_path / "a", site, spider=TextOnlySpider)
    settings = {**PIPELINE, "SIMHASH_TEXT_FIELD": "content"}
    renamed = await crawl(settings, tmp_path / "b", site, spider=ContentOnlySpider)
    assert renamed.simhash == default.simhash
    assert len(renamed.kept) == len(default.kept) and len(renamed.dropped) == 1
    assert renamed.simhash["simhash/unique"] == len(ARTICLES)


def _short_page(words: int) -> bytes:
    text = " ".join(f"harbour{i} ferries sail" for i in range(words // 3))
    return (
        f"<html><head><title>Short</title></head><body><article><h1>Ferry notice</h1>"
        f"<p>{text}.</p></article></body></html>"
    ).encode()


@deferred_f_from_coro_f
async def test_min_text_length_is_the_number_of_words_set(site, tmp_path, routes):
    """A page of 12 content words is too short by default (20) and checked at 10."""
    routes["/short.html"] = (200, "text/html; charset=utf-8", _short_page(12))
    routes["/short-index.html"] = (
        200,
        "text/html",
        b"<html><body><ul><li><a href='/short.html'>s</a></li></ul></body></html>",
    )
    default = await crawl(MIDDLEWARE, tmp_path / "a", site, start="/short-index.html")
    assert default.simhash == {
        "simhash/skipped/dont_simhash": 1,  # the start page
        "simhash/skipped/too_short": 1,
        "simhash/index/size": 0,
    }
    settings = {**MIDDLEWARE, "SIMHASH_MIN_TEXT_LENGTH": 10}
    lower = await crawl(settings, tmp_path / "b", site, start="/short-index.html")
    assert lower.simhash == {
        "simhash/skipped/dont_simhash": 1,
        "simhash/checked": 1,
        "simhash/unique": 1,
        "simhash/index/size": 1,
    }


_TOWNS = ["Aldham", "Brisco", "Calder", "Dunmore", "Elstow", "Fenwick", "Garston", "Holbeck",
          "Ilford", "Jarrow", "Kelso", "Lydney", "Marske", "Nairn", "Otley", "Penryn"]  # fmt: skip


def _script_rendered_page(name: str, price: str) -> bytes:
    """A shop's product page whose product a script renders: the HTML served holds only the
    layout, its menus and footer laid out in tables, and the product's data in JSON."""
    rows = "".join(
        "<tr>" + "".join(f"<td><a href='/{t}'>{t}</a></td>" for t in towns) + "</tr>"
        for towns in (_TOWNS[:8], _TOWNS[8:])
    )
    footer = "Copyright 2012-2021 Gazette Network | About us | Contact | Advertising | Terms"
    return (
        f"<html><head><title>{name}</title></head><body><table class='nav'>{rows}</table>"
        "<table><tr><td><a href='/news'>Regional news</a></td><td><a href='/shop'>Shop</a>"
        "</td></tr></table><div id='app'></div><script type='application/json'>"
        f'{{"name": "{name}", "price": "{price}"}}</script>'
        f"<table class='footer'><tr><td>{footer}</td></tr></table></body></html>"
    ).encode()


@deferred_f_from_coro_f
async def test_pages_whose_text_is_only_the_layouts_are_passed_through(site, tmp_path, routes):
    """Two product pages whose served HTML is the layout alone (a script renders the
    product): trafilatura returns the same menu and footer rows for both, which say nothing
    of either page. Neither is fingerprinted (too short: no content words of its own), so
    neither is dropped as the other's copy."""
    links = ""
    for n, price in ((12, "499.00"), (14, "699.00")):
        routes[f"/shop/aspen-{n}.html"] = (
            200,
            "text/html; charset=utf-8",
            _script_rendered_page(f"Norvik Aspen {n}", price),
        )
        links += f"<li><a href='/shop/aspen-{n}.html'>{n}</a></li>"
    routes["/shop/index.html"] = (
        200,
        "text/html",
        f"<html><body><ul>{links}</ul></body></html>".encode(),
    )
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/shop/index.html")
    assert result.simhash == {
        "simhash/skipped/dont_simhash": 1,  # the start page
        "simhash/skipped/too_short": 2,
        "simhash/index/size": 0,
    }
    assert len(result.kept) == 2 and not result.dropped


@deferred_f_from_coro_f
async def test_max_body_size_limits_and_zero_means_no_limit(site, tmp_path):
    small = await crawl({**MIDDLEWARE, "SIMHASH_MAX_BODY_SIZE": 1000}, tmp_path / "a", site)
    assert small.simhash == {
        "simhash/skipped/dont_simhash": 1,  # the start page
        "simhash/skipped/too_large": 11,
        "simhash/index/size": 0,
    }
    unlimited = await crawl({**MIDDLEWARE, "SIMHASH_MAX_BODY_SIZE": 0}, tmp_path / "b", site)
    assert unlimited.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}


@deferred_f_from_coro_f
async def test_a_body_of_exactly_the_max_body_size_is_checked(site, routes, tmp_path):
    """ "Larger responses are not extracted": one of exactly SIMHASH_MAX_BODY_SIZE bytes is."""
    body = _harbour_page(_HARBOUR)
    routes["/ferry.html"] = (200, "text/html; charset=utf-8", body)
    routes["/ferry-index.html"] = (
        200,
        "text/html",
        b"<html><body><ul><li><a href='/ferry.html'>ferry</a></li></ul></body></html>",
    )
    for limit, stat in (
        (len(body), "simhash/unique"),
        (len(body) - 1, "simhash/skipped/too_large"),
    ):
        settings = {**MIDDLEWARE, "SIMHASH_MAX_BODY_SIZE": limit}
        result = await crawl(settings, tmp_path / str(limit), site, start="/ferry-index.html")
        assert result.simhash.get(stat) == 1, (limit, result.simhash)


@deferred_f_from_coro_f
async def test_the_dry_run_tells_the_spider_what_it_would_have_dropped(site, tmp_path):
    """The README's four keys: the page's fingerprint (the one ``page_signature`` gives its
    extracted text), and for a near-duplicate the page it duplicates, the distance and the
    rule (all of the site's copies are found by Hamming distance)."""
    seen, bodies = {}, {}

    class MetaSpider(SiteSpider):
        def parse_page(self, response):
            page = response.url.removeprefix(site.url(""))
            seen[page], bodies[page] = response.meta["simhash"], response.body
            yield from super().parse_page(response)

    settings = {**MIDDLEWARE, "SIMHASH_DRY_RUN": True}
    await crawl(settings, tmp_path, site, spider=MetaSpider)
    for page in [*ARTICLES, *COPIES]:
        fingerprint = page_signature(extract_text(bodies[page])).fingerprint
        original, distance = COPIES.get(page, (None, None))
        assert seen[page] == {
            "fingerprint": fingerprint,
            "duplicate_of": None if original is None else site.url(original),
            "distance": distance,
            "rule": None if original is None else "hamming",
        }


def _index_committed(path: Path) -> int:
    """Entries another process sees in the index: only committed ones."""
    code = (
        "import sys; from scrapy_simhash import SimhashIndex\n"
        "with SimhashIndex(sys.argv[1], readonly=True) as ix: print(len(ix))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=60)
    return int(done.stdout)


@deferred_f_from_coro_f
async def test_decisions_are_committed_after_the_commit_interval(site, tmp_path):
    """With commits of 1000 pages, the timer alone commits: while the crawl still runs (the
    spider's callback holds it open), another process comes to see the first article's
    entry. Without the timer it never does before the close, and the wait runs out."""
    committed = []
    index_path = tmp_path / "simhash" / "site"

    class WatchingSpider(SiteSpider):
        async def start(self):
            yield Request(site.url(ARTICLES[0]), self.parse_page)

        async def parse_page(self, response):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                await asyncio.sleep(0.2)  # the reactor runs: the timer can fire
                seen = _index_committed(index_path)
                if seen:
                    committed.append(seen)
                    break
            for item in super().parse_page(response):
                yield item

    settings = {**MIDDLEWARE, "SIMHASH_COMMIT_EVERY": 1000, "SIMHASH_COMMIT_INTERVAL": 0.2}
    result = await crawl(settings, tmp_path, site, spider=WatchingSpider)
    assert committed == [1]
    assert len(result.kept) == 1


@deferred_f_from_coro_f
async def test_decisions_are_committed_every_commit_every_pages(site, tmp_path):
    """With commits of 2 pages and an hour's timer, as each of the first three articles leaves
    the simhash middleware: the first is not committed yet, the second commits both, the
    third, alone in its batch, is not committed yet. (Seen from a downloader middleware right
    after the simhash middleware: the spider's callbacks may run behind the downloader.)"""
    committed = []
    index_path = tmp_path / "simhash" / "site"
    watched = [site.url(path) for path in ARTICLES[:3]]

    class WatchingMiddleware:
        def process_response(self, request, response):
            if response.url in watched:
                committed.append(_index_committed(index_path))
            return response

    settings = {
        "DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 543, WatchingMiddleware: 500},
        "SIMHASH_COMMIT_EVERY": 2,
        "SIMHASH_COMMIT_INTERVAL": 3600,
    }
    result = await crawl(settings, tmp_path, site)
    assert committed == [0, 2, 2]
    assert result.simhash["simhash/index/size"] == len(ARTICLES)  # all committed at the close


@deferred_f_from_coro_f
async def test_a_redirect_to_a_page_decided_before_is_not_checked_again(site, tmp_path, routes):
    """The middleware runs after the redirect middleware: a redirect to an article decided
    earlier in the crawl gets that page's decision back, and is not checked (and stored)
    a second time."""
    target = ARTICLES[0]
    routes["/go/first"] = (302, "text/html", b"", {"Location": site.url(target)})
    reached = []

    class RedirectSpider(SiteSpider):
        async def start(self):
            for path in (target, "/go/first"):  # both lead to the article
                yield Request(site.url(path), self.parse_page, dont_filter=True)

        def parse_page(self, response):
            reached.append((response.url, response.meta.get("simhash")))
            yield from super().parse_page(response)

    result = await crawl(MIDDLEWARE, tmp_path, site, spider=RedirectSpider)
    assert [url for url, _ in reached] == [site.url(target), site.url(target)]
    assert reached[0][1] is not None and reached[1][1] == reached[0][1]  # the same decision
    assert result.simhash == {"simhash/checked": 1, "simhash/unique": 1, "simhash/index/size": 1}


@deferred_f_from_coro_f
async def test_a_redirect_to_a_page_dropped_before_is_dropped_again(site, tmp_path, routes):
    """The decision recalled after a redirect is a drop too: the spider never sees the copy."""
    original, copy = ARTICLES[0], "/wire/bike-lanes.html"
    assert COPIES[copy][0] == original
    routes["/go/copy"] = (302, "text/html", b"", {"Location": site.url(copy)})
    reached = []

    class RedirectSpider(SiteSpider):
        async def start(self):
            for path in (original, copy, "/go/copy"):
                yield Request(site.url(path), self.parse_page, dont_filter=True)

        def parse_page(self, response):
            reached.append(response.url)
            yield from super().parse_page(response)

    result = await crawl(MIDDLEWARE, tmp_path, site, spider=RedirectSpider)
    assert reached == [site.url(original)]
    assert result.simhash["simhash/checked"] == 2
    assert result.simhash["simhash/duplicate"] == 1


@deferred_f_from_coro_f
async def test_only_2xx_responses_are_checked(site, tmp_path, routes):
    """A page served with status 300 (Multiple Choices: no redirect) is counted as skipped
    for its status, however HTML it is."""
    page = (SITE / ARTICLES[0].lstrip("/")).read_bytes()
    routes["/choices.html"] = (300, "text/html; charset=utf-8", page)
    routes["/choices-index.html"] = (
        200,
        "text/html",
        b"<html><body><ul><li><a href='/choices.html'>c</a></li></ul></body></html>",
    )
    settings = {**MIDDLEWARE, "HTTPERROR_ALLOW_ALL": True}
    result = await crawl(settings, tmp_path, site, start="/choices-index.html")
    assert result.simhash == {
        "simhash/skipped/dont_simhash": 1,
        "simhash/skipped/status": 1,
        "simhash/index/size": 0,
    }


@deferred_f_from_coro_f
async def test_a_gzip_encoded_copy_is_decided_after_decompression(site, tmp_path, routes):
    page = (SITE / ARTICLES[0].lstrip("/")).read_bytes()
    html = "text/html; charset=utf-8"
    routes["/gz/copy.html"] = (200, html, gzip.compress(page), {"Content-Encoding": "gzip"})
    routes["/gz-index.html"] = (
        200,
        "text/html",
        f"<html><body><ul><li><a href='{ARTICLES[0]}'>a</a></li>"
        "<li><a href='/gz/copy.html'>copy</a></li></ul></body></html>".encode(),
    )
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/gz-index.html")
    assert paths(site, result.kept) == [ARTICLES[0]]
    assert result.simhash == {
        "simhash/skipped/dont_simhash": 1,
        "simhash/checked": 2,
        "simhash/unique": 1,
        "simhash/duplicate": 1,
        "simhash/duplicate/distance/0": 1,
        "simhash/duplicate/by/hamming": 1,
        "simhash/index/size": 1,
    }


@deferred_f_from_coro_f
async def test_items_of_a_dont_simhash_page_pass_the_pipeline_unchecked(site, tmp_path):
    class UncheckedSpider(SiteSpider):
        async def start(self):
            for path in (ARTICLES[0], "/wire/bike-lanes.html"):
                yield Request(site.url(path), self.parse_page, meta={"dont_simhash": True})

    result = await crawl(BOTH, tmp_path, site, spider=UncheckedSpider)
    assert sorted(paths(site, result.kept)) == sorted([ARTICLES[0], "/wire/bike-lanes.html"])
    assert result.simhash == {"simhash/skipped/dont_simhash": 2, "simhash/index/size": 0}


def test_the_addon_keeps_priorities_the_user_set():
    settings = Settings(
        {
            "DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 600},
            "ITEM_PIPELINES": {"scrapy_simhash.SimhashPipeline": 50},
        }
    )
    Addon().update_settings(settings)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {SimhashMiddleware: 600}
    assert settings.getdict("ITEM_PIPELINES") == {"scrapy_simhash.SimhashPipeline": 50}
    fresh = Settings()
    Addon().update_settings(fresh)
    assert fresh.getdict("DOWNLOADER_MIDDLEWARES") == {SimhashMiddleware: 543}
    assert fresh.getdict("ITEM_PIPELINES") == {SimhashPipeline: 200}


class LateItemsSpider(SiteSpider):
    """Requests the site's articles in order and yields all their items only once the last
    article is parsed: the items reach the pipeline after every page was decided."""

    def __init__(self, start_url, **kwargs):
        super().__init__(start_url, **kwargs)
        self.pending: list = []

    async def start(self):
        for i, path in enumerate(ARTICLES):
            yield Request(urljoin(self.start_url, path), self.parse_page, priority=-i)

    def parse_page(self, response):
        self.pending.extend(super().parse_page(response))
        if len(self.pending) == len(ARTICLES):
            yield from self.pending


@deferred_f_from_coro_f
async def test_items_of_pages_older_than_the_decision_memory_are_found_in_the_index(
    site, tmp_path, monkeypatch
):
    """With room for one decision, the items of five articles, all yielded after the last
    article was decided, are linked to their pages by the entries this crawl stored: each is
    kept, none is fingerprinted again (or found to duplicate its own page)."""
    monkeypatch.setattr(service_module, "DECISION_MEMORY", 1)
    result = await crawl(BOTH, tmp_path, site, spider=LateItemsSpider, fields=("url", "html"))
    assert paths(site, result.kept) == ARTICLES
    assert result.simhash == {"simhash/checked": 5, "simhash/unique": 5, "simhash/index/size": 5}


@deferred_f_from_coro_f
async def test_a_second_crawl_drops_the_items_the_first_stored(site, tmp_path):
    """README, "Across crawls": a page whose URL an earlier crawl stored is a duplicate of
    itself; the pipeline alone finds the earlier entry under the item's URL, and does not take
    it for a page of this crawl."""
    first = await crawl(PIPELINE, tmp_path, site, fields=("url", "html"))
    assert paths(site, first.kept) == ARTICLES
    second = await crawl(PIPELINE, tmp_path, site, fields=("url", "html"))
    assert second.kept == []
    assert second.simhash == {
        "simhash/checked": 11,
        "simhash/duplicate": 11,
        "simhash/duplicate/distance/0": 11,
        "simhash/duplicate/by/hamming": 11,
        "simhash/index/size": 5,
    }


@deferred_f_from_coro_f
async def test_near_duplicate_names_the_kept_page_and_the_distance(site, tmp_path):
    """The pipeline's ``NearDuplicate`` (a ``DropItem``) tells which stored page an item's
    page duplicates and at what distance, as its attributes and its message."""
    result = await crawl(PIPELINE, tmp_path, site, fields=("url", "html"))
    assert len(result.dropped) == len(COPIES)
    for item, exc in result.dropped:
        original, distance = COPIES[item["url"].removeprefix(site.url(""))]
        assert (exc.duplicate_of, exc.distance) == (site.url(original), distance)
        assert str(exc) == f"Near-duplicate of {site.url(original)} (distance {distance})"


@deferred_f_from_coro_f
async def test_a_charset_given_only_by_the_http_header_is_the_one_extracted(site, routes, tmp_path):
    """README: "bytes are decoded by the given encoding, else the page's declared charset":
    the middleware passes the charset of the Content-Type header to extraction. Bytes that
    are valid UTF-8, declared windows-1252 by the header alone (no meta charset), are read as
    windows-1252, as the server says, not as what detection would guess."""
    from scrapy_simhash import page_signature

    paragraph = (
        "Les élèves du lycée Molière ont présenté à la mairie un projet de jardin partagé "
        "où chaque classe cultivera des légumes, des fleurs et des herbes aromatiques "
        "pendant toute l'année scolaire, avec l'aide des bénévoles du quartier."
    )
    title = "Le jardin partagé du lycée Molière"
    html = (
        f"<html><head><title>{title}</title></head>"
        f"<body><article><p>{paragraph}</p><p>{paragraph}</p></article></body></html>"
    )
    body = html.encode("utf-8")
    routes["/charset/page.html"] = (200, "text/html; charset=windows-1252", body)
    routes["/charset/index.html"] = (
        200,
        "text/html",
        b"<html><body><ul><li><a href='/charset/page.html'>p</a></li></ul></body></html>",
    )
    result = await crawl(
        MIDDLEWARE, tmp_path, site, start="/charset/index.html", fields=("url", "simhash")
    )
    [item] = result.kept
    declared = page_signature(extract_text(body, encoding="windows-1252"))
    detected = page_signature(extract_text(body))
    assert declared.fingerprint != detected.fingerprint  # the test can tell them apart
    assert item["simhash"]["fingerprint"] == declared.fingerprint
    # the title the index keeps is read by the same charset
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as index:
        stored = index.get(site.url("/charset/page.html")).record["title"]
    assert stored == title.encode("utf-8").decode("windows-1252") != title


_PIER = (
    "The harbour commission voted on Tuesday to rebuild the old stone pier that has stood at "
    "the mouth of the river since the eighteen-sixties, after a winter of storms left two of "
    "its arches cracked and closed to the public.",
    "Engineers told the commission that the pier could be saved if work began before the "
    "autumn tides, and that the cost would be shared between the town, the county and a fund "
    "raised by the fishing cooperative over the last three years.",
    "Several residents spoke against the plan at the meeting, saying that the money would be "
    "better spent on the flood walls along the lower town, where water reached the doors of "
    "the bakery and the library twice in January.",
    "The chair of the commission said both projects would go ahead, and that the flood walls "
    "would be designed this summer so that the two contracts could be let together and the "
    "work finished before the following winter.",
)


def _source_wrapped(paragraph: str) -> str:
    """A paragraph as an old page's source holds it: broken where its editor pleased (every
    4 to 12 words), each continued line indented to the markup's depth."""
    words, lines, steps = paragraph.split(), [], [11, 5, 9, 4, 12, 6]
    while words:
        lines.append(" ".join(words[: steps[len(lines) % len(steps)]]))
        words = words[steps[(len(lines) - 1) % len(steps)] :]
    return ("\n" + " " * 32).join(lines)


@deferred_f_from_coro_f
async def test_an_article_whose_source_wraps_its_lines_is_a_copy_of_it_in_paragraphs(
    site, routes, tmp_path
):
    """README (version 14): a paragraph broken in its HTML source is read as one line. One
    article in a layout of paragraphs, then in an old layout whose source wraps and indents
    each paragraph's lines between line breaks (extraction keeps those breaks and indents):
    the second page is dropped as a copy of the first. Read line by line, without joining,
    the two pages would be kept apart: this crawl tells the two readings apart."""
    from scrapy_simhash import Fingerprinter

    paragraphs = "".join(f"<p>{p}</p>" for p in _PIER)
    plain = (
        "<html><head><title>Pier to be rebuilt</title></head><body><header><nav>"
        "<a href='/'>Home</a> <a href='/news'>News</a></nav></header><article>"
        f"<h1>Pier to be rebuilt</h1>{paragraphs}</article><footer>Harbour Gazette</footer>"
        "</body></html>"
    ).encode()
    lines = "".join(f"{_source_wrapped(p)}<br><br>\n" for p in _PIER)
    old = (
        "<html><head><title>Pier to be rebuilt</title></head><body>"
        "<div class='nav'><a href='/'>Home</a> <a href='/news'>News</a></div>"
        f"<div class='story'>\n{lines}</div></body></html>"
    ).encode()
    routes["/wrapped/plain.html"] = (200, "text/html; charset=utf-8", plain)
    routes["/wrapped/old.html"] = (200, "text/html; charset=utf-8", old)
    routes["/wrapped/index.html"] = (
        200,
        "text/html",
        b"<html><body><ul><li><a href='/wrapped/plain.html'>a</a></li>"
        b"<li><a href='/wrapped/old.html'>b</a></li></ul></body></html>",
    )
    texts = [extract_text(plain), extract_text(old)]
    assert "\n" + " " * 32 in texts[1] and "\n " not in texts[0]  # the source's breaks kept
    by_line = Fingerprinter(unwrap=False)
    assert not page_signature(texts[1], by_line).is_near_duplicate(
        page_signature(texts[0], by_line)
    )

    result = await crawl(MIDDLEWARE, tmp_path, site, start="/wrapped/index.html")
    assert paths(site, result.kept) == ["/wrapped/plain.html"]
    assert result.simhash["simhash/unique"] == 1
    assert result.simhash["simhash/duplicate"] == 1


_POLICY = (
    "Every order placed before two in the afternoon leaves our warehouse on the same working "
    "day, packed in recycled cardboard and sent by tracked courier to any address in the country.",
    "If you change your mind you may return any unworn item within thirty days of delivery for "
    "a full refund, provided that it comes back in its original packaging with all its labels.",
    "Refunds are paid to the card used for the purchase within five working days of the return "
    "reaching us, and we will write to you by email as soon as the money has been sent.",
    "Items that were made to measure, engraved or altered at your request cannot be returned "
    "unless they arrive damaged or faulty, in which case we will replace them free of charge.",
    "Our customer service team answers letters, calls and messages from Monday to Saturday "
    "between nine in the morning and six in the evening, except on public holidays.",
)
_GOODS = ["kettle", "teapot", "lantern", "blanket", "satchel", "umbrella", "stool", "clock"]
_VOCABULARY = (
    "oak walnut copper linen wool brass enamel ceramic glazed woven hand stitched "
    "polished sturdy light narrow deep round square tall small warm quiet bright pale "
    "green amber kitchen garden hallway cabin balcony workshop shelf window winter summer "
    "morning evening travel picnic reading cooking storing pouring carrying resting "
    "heating maker family village valley river coast forest hills orchard meadow harbour"
)
_WORDS = _VOCABULARY.split()


def _product_page(name: str, seed: int) -> bytes:
    """A shop's product page: a description of its own and the shop's returns policy (five
    long sentences, the same on every product page)."""
    import random

    rng = random.Random(seed)
    description = " ".join(f"This {name} is {' '.join(rng.sample(_WORDS, 9))}." for _ in range(6))
    policy = "".join(f"<p>{sentence}</p>" for sentence in _POLICY)
    return (
        f"<html><head><title>The {name} - Example shop</title></head><body>"
        f"<nav><a href='/'>Shop</a> | <a href='/new'>New</a></nav>"
        f"<article><h1>The {name}</h1><p>{description}</p>"
        f"<h2>Delivery and returns</h2>{policy}</article>"
        f"<footer>Example shop</footer></body></html>"
    ).encode()


@deferred_f_from_coro_f
async def test_a_shops_returns_policy_drops_at_most_two_of_its_products(site, tmp_path, routes):
    """Product pages of one shop that share five long sentences (its returns policy) and
    nothing else: the sentence rule drops the second and third products as copies of the
    first; then the shop's pages dropped through those sentences make them fail the guard,
    and every other product is kept (before index format 6, all but the first were
    dropped)."""
    links = []
    for i, name in enumerate(_GOODS):
        routes[f"/shop/{name}.html"] = (200, "text/html; charset=utf-8", _product_page(name, i))
        links.append(f"<li><a href='/shop/{name}.html'>{name}</a></li>")
    routes["/shop-index.html"] = (
        200,
        "text/html",
        f"<html><body><ul>{''.join(links)}</ul></body></html>".encode(),
    )
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/shop-index.html")
    assert len(result.kept) == len(_GOODS) - 2
    assert result.simhash["simhash/duplicate"] == 2
    assert result.simhash["simhash/duplicate/by/sentences"] == 2


#: A product's configurations (price, memory GB, storage GB): each pair holds numbers of its
#: own that the numbers veto reads, two of them (the first with the third and the fifth) a
#: number of its own on one side and two on the other.
_CONFIGURATIONS = (
    ("$1,299", 16, 512),
    ("$1,699", 32, 1024),
    ("$1,399", 16, 2048),
    ("$1,099", 8, 256),
    ("$1,599", 32, 512),
)


@deferred_f_from_coro_f
async def test_a_products_configurations_are_kept_and_its_copies_dropped(site, tmp_path, routes):
    """A shop's product in five configurations, each its own page (the same description and
    spec table, another price and a spec or two): a crawl keeps every one, and drops the
    first one's page under a tracking parameter and again with fewer left in stock. Two of
    the configurations differ from the first in numbers of their own that fall one on one
    side and two on the other, which the numbers veto took for one page when it asked two on
    each side."""
    links = []
    for i, (price, memory, storage) in enumerate(_CONFIGURATIONS):
        page = _configuration_page(price, memory, storage).encode()
        routes[f"/aurora/{i}.html"] = (200, "text/html; charset=utf-8", page)
        links.append(f"/aurora/{i}.html")
    routes["/aurora/0-restocked.html"] = (
        200,
        "text/html; charset=utf-8",
        _configuration_page(*_CONFIGURATIONS[0], stock=4).encode(),
    )
    links += ["/aurora/0.html?utm_source=newsletter", "/aurora/0-restocked.html"]
    items = "".join(f"<li><a href='{link}'>{link}</a></li>" for link in links)
    routes["/aurora.html"] = (
        200,
        "text/html",
        f"<html><body><ul>{items}</ul></body></html>".encode(),
    )
    first = page_signature(extract_text(routes["/aurora/0.html"][2]) or "")
    close = [page_signature(extract_text(routes[f"/aurora/{i}.html"][2]) or "") for i in (2, 4)]
    assert first is not None and all(other is not None for other in close)
    for other in close:  # one number of its own on one side, two on the other
        own = sorted(
            (
                (first.numbers & ~other.numbers).bit_count(),
                (other.numbers & ~first.numbers).bit_count(),
            )
        )
        assert own == [1, 2]
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/aurora.html")
    assert paths(site, result.kept) == [f"/aurora/{i}.html" for i in range(len(_CONFIGURATIONS))]
    assert result.simhash["simhash/unique"] == len(_CONFIGURATIONS)
    assert result.simhash["simhash/duplicate"] == 2


class UrlLessSpider(SiteSpider):
    """Items whose URL field holds ``url_value`` (empty, or not a string): items without a
    URL, as the README says."""

    url_value: object = ""

    def parse_page(self, response):
        for item in super().parse_page(response):
            yield {"url": self.url_value, "html": item["html"]}


@pytest.mark.parametrize("url_value", ["", 42], ids=["empty", "not-a-string"])
@deferred_f_from_coro_f
async def test_items_whose_url_is_empty_or_not_a_string_are_stored_by_their_html(
    site, tmp_path, caplog, url_value
):
    """They are keyed ``item:<hash>`` and decided as items with URLs are, but for the page
    with tracking parameters: its HTML is the article's, so it is taken for the same page and
    gets its decision (kept). A dropped one is logged as an item without URL."""
    from scrapy_simhash import SimhashIndex

    UrlLessSpider.url_value = url_value
    caplog.set_level("DEBUG", logger="scrapy_simhash")
    result = await crawl(PIPELINE, tmp_path, site, spider=UrlLessSpider, fields=("url", "html"))
    assert len(result.kept) == len(ARTICLES) + 1 and len(result.dropped) == len(COPIES) - 1
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as index:
        keys = [match.key for match in index.items()]
    assert len(keys) == len(ARTICLES) and all(key.startswith("item:") for key in keys)
    drops = [r.getMessage() for r in caplog.records if "near-duplicate item" in r.getMessage()]
    assert len(drops) == len(COPIES) - 1
    assert all("near-duplicate item <item without URL>: duplicate of item:" in m for m in drops)


class ErrbackSpider(SiteSpider):
    """Records the message of each request ignored as a near-duplicate, as an errback sees
    it."""

    ignored: ClassVar[dict[str, str]] = {}

    def parse_index(self, response):
        for request in super().parse_index(response):
            yield request.replace(errback=self.ignored_page)

    def ignored_page(self, failure):
        self.ignored[failure.request.url] = str(failure.value)


@deferred_f_from_coro_f
async def test_an_ignored_page_tells_its_errback_the_page_it_duplicates(site, tmp_path):
    ErrbackSpider.ignored.clear()
    result = await crawl(MIDDLEWARE, tmp_path, site, spider=ErrbackSpider)
    assert len(result.kept) == len(ARTICLES)
    assert {
        url.removeprefix(site.url("")): message for url, message in ErrbackSpider.ignored.items()
    } == {
        copy: f"Near-duplicate of {site.url(kept)} (distance {distance})"
        for copy, (kept, distance) in COPIES.items()
    }


class _PlainResponses:
    """A downloader middleware (after the simhash middleware's place, so run before it on the
    way back) that hands on every page as a plain ``Response``, not an ``HtmlResponse``, as a
    download handler or middleware may."""

    def process_response(self, request, response):
        from scrapy.http import Response

        if type(response) is Response or request.meta.get("dont_simhash"):  # the start page
            return response
        return Response(response.url, status=response.status, headers=response.headers,
                        body=response.body, request=request)  # fmt: skip


@deferred_f_from_coro_f
async def test_a_plain_response_whose_content_type_says_html_is_checked(site, tmp_path):
    """The middleware checks a response by its Content-Type when Scrapy did not make it an
    ``HtmlResponse``: the same decisions as for the site's HTML responses."""
    settings = {"DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 543, _PlainResponses: 600}}
    result = await crawl(settings, tmp_path, site)
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}


class _WatchedText:
    """A downloader middleware (run just before the simhash middleware on the way back, after
    Scrapy's, such as the meta refresh middleware, which decodes every page) that hands on
    each page as an ``HtmlResponse`` whose decoded text records that it was read."""

    read: ClassVar[list[str]] = []

    def process_response(self, request, response):
        from scrapy.http import HtmlResponse

        if request.meta.get("dont_simhash") or not isinstance(response, HtmlResponse):
            return response

        class Watched(HtmlResponse):
            @property
            def text(self):
                _WatchedText.read.append(self.url)
                return super().text

        return response.replace(cls=Watched)


class QuietSpider(SiteSpider):
    """Reads nothing of the pages it follows."""

    def parse_page(self, response):
        return []


@deferred_f_from_coro_f
async def test_a_page_too_large_to_check_is_never_decoded(site, tmp_path):
    """A body over SIMHASH_MAX_BODY_SIZE is skipped without decoding it (the decoded text of
    a page that is checked and passed on is what links a spider's item to its page; a page
    dropped yields no item, and is not decoded either, unless in a dry run)."""
    settings = {"DOWNLOADER_MIDDLEWARES": {SimhashMiddleware: 543, _WatchedText: 560}}
    _WatchedText.read.clear()
    checked = await crawl(settings, tmp_path / "a", site, spider=QuietSpider)
    stats = checked.simhash
    assert stats["simhash/checked"] == 11 and stats["simhash/duplicate"] == 6
    assert len(set(_WatchedText.read)) == 11 - 6
    _WatchedText.read.clear()  # in a dry run the duplicates go on to the spider: all decoded
    dry = await crawl(
        {**settings, "SIMHASH_DRY_RUN": True}, tmp_path / "c", site, spider=QuietSpider
    )
    assert dry.simhash["simhash/duplicate"] == 6 and len(set(_WatchedText.read)) == 11
    _WatchedText.read.clear()
    large = await crawl(
        {**settings, "SIMHASH_MAX_BODY_SIZE": 1000}, tmp_path / "b", site, spider=QuietSpider
    )
    assert large.simhash["simhash/skipped/too_large"] == 11
    assert _WatchedText.read == []


@deferred_f_from_coro_f
async def test_the_expected_size_sizes_a_new_index_and_not_an_existing_one(site, tmp_path):
    """``SIMHASH_EXPECTED_SIZE`` sizes the tables of a new index: at 50 million pages and
    k=3, prefixes near log2(5e7) = 25.6 bits, which is 2 leading blocks of 5 (13+13 or 13+12
    bits), in C(5, 2) = 10 tables, where the default million takes 4 tables of 16-bit
    prefixes. An existing index keeps its tables whatever the setting says."""
    big = {**MIDDLEWARE, "SIMHASH_EXPECTED_SIZE": 50_000_000}
    first = await crawl(big, tmp_path, site)
    assert first.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
    path = str(tmp_path / "simhash" / "site")
    with SimhashIndex(path, readonly=True) as index:
        assert index.layout.tables == 10
        assert set(index.layout.prefix_bits) == {25, 26}
    second = await crawl({**MIDDLEWARE, "SIMHASH_EXPECTED_SIZE": 1_000}, tmp_path, site)
    assert second.kept == []  # every page found in the index built by the first crawl
    with SimhashIndex(path, readonly=True) as index:
        assert index.layout.tables == 10
    default = await crawl(MIDDLEWARE, tmp_path / "default", site)
    assert default.simhash == first.simhash
    with SimhashIndex(str(tmp_path / "default" / "simhash" / "site"), readonly=True) as index:
        assert index.layout.tables == 4
        assert set(index.layout.prefix_bits) == {16}


@pytest.mark.parametrize(
    ("settings", "how"),
    [
        ({}, "pages processed in the crawl process"),
        (
            {"SIMHASH_WORKERS": 1, "SIMHASH_DRY_RUN": True},
            "1 worker process (dry run: near-duplicates are counted, not dropped)",
        ),
        ({"SIMHASH_WORKERS": 2}, "2 worker processes"),
    ],
    ids=["inline", "1-worker-dry-run", "2-workers"],
)
@deferred_f_from_coro_f
async def test_the_index_is_named_in_one_info_line_when_it_opens(
    site, tmp_path, caplog, settings, how
):
    """The README's "Logging" line: path, entries, k and the table layout (at the default
    million pages and k=3, 4 tables of 16-bit prefixes), then where pages are processed,
    logged for the spider. The second crawl opens the first's index of 5 articles (a dry run
    stores the pages it keeps, as a crawl does)."""
    caplog.set_level("INFO", logger="scrapy_simhash")
    path = tmp_path / "simhash" / "site"
    layout = "4 tables for k=3: blocks 16+16+16+16, 1 leading; prefix 16 bits"
    for entries in (0, 5):
        caplog.clear()
        result = await crawl({**MIDDLEWARE, **settings}, tmp_path, site)
        opened = [r for r in caplog.records if r.getMessage().startswith("Simhash index")]
        assert [(r.name, r.levelname, r.getMessage()) for r in opened] == [
            (
                "scrapy_simhash.crawl.service",
                "INFO",
                f"Simhash index {path}: {entries} entries, max distance 3, {layout}; {how}",
            )
        ]
        assert isinstance(opened[0].spider, SiteSpider)  # extra={"spider": ...}
        assert result.simhash["simhash/index/size"] == len(ARTICLES)


@deferred_f_from_coro_f
async def test_a_page_whose_fingerprinting_raises_is_counted_and_the_crawl_goes_on(
    site, tmp_path, monkeypatch, caplog
):
    """A bug in extraction or fingerprinting (planted here: the page work raises on one
    article) does not stop the crawl: the page passes undecided, counted in
    ``simhash/skipped/error``, its traceback logged with its URL; the other pages are decided
    as before."""
    broken = site.url("/news/coral-survey.html")  # an article without copies on the site
    work = PageWork.html

    def html(self, body, url, encoding=None):
        if url == broken:
            raise RuntimeError("a planted bug")
        return work(self, body, url, encoding)

    monkeypatch.setattr(PageWork, "html", html)
    settings = {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    crawler = get_crawler(SiteSpider, settings)
    kept = []
    crawler.signals.connect(lambda item: kept.append(item), signals.item_scraped, weak=False)
    await crawler.crawl_async(start_url=site.url("/index.html"), fields=("url", "simhash"))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert {k: v for k, v in stats.items() if k.startswith("simhash/")} == {
        "simhash/checked": 10,
        "simhash/unique": 4,
        "simhash/duplicate": 6,
        "simhash/duplicate/distance/0": 6,
        "simhash/duplicate/by/hamming": 6,
        "simhash/skipped/error": 1,
        "simhash/skipped/dont_simhash": 1,
        "simhash/index/size": 4,
    }
    assert [item["url"] for item in kept] == [site.url(path) for path in ARTICLES]
    assert [item["simhash"] for item in kept if item["url"] == broken] == [None]
    [failure] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert failure.getMessage() == f"Simhash failed on {broken}"
    assert "RuntimeError: a planted bug" in caplog.text


@deferred_f_from_coro_f
async def test_an_item_text_whose_fingerprinting_raises_is_named_as_such(
    site, tmp_path, monkeypatch, caplog
):
    """An item that carries only its text has no URL: a bug planted in its fingerprinting is
    logged as being about "an item's text", counted, and the crawl goes on."""
    work = PageWork.text
    failed: list[str] = []

    def text(self, value):
        if not failed:
            failed.append(value)
            raise RuntimeError("a planted bug")
        return work(self, value)

    monkeypatch.setattr(PageWork, "text", text)
    settings = {**PIPELINE, "SIMHASH_DIR": str(tmp_path / "simhash"), "SIMHASH_WORKERS": 0}
    crawler = get_crawler(TextOnlySpider, settings)
    await crawler.crawl_async(start_url=site.url("/index.html"))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert stats["simhash/skipped/error"] == 1 and len(failed) == 1
    [failure] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert failure.getMessage() == "Simhash failed on an item's text"
    assert "RuntimeError: a planted bug" in caplog.text


_HARBOUR = (
    "The harbour authority approved the new ferry timetable on Monday after three months of "
    "talks with the island councils. Boats will leave every forty minutes in summer and every "
    "hour in winter, and the last crossing moves to half past eleven at night. Fares stay as "
    "they are until the spring review, when the authority will publish the costs of the two "
    "new vessels ordered from the northern yard. Residents asked for more space for bicycles "
    "and a quieter waiting room; both are promised for the second season. The councils said "
    "the plan keeps the islands connected while the old pier is rebuilt over the next two "
    "years, and that the timetable will be checked again after the first busy August."
)


def _harbour_page(text: str) -> bytes:
    return (
        "<html><head><title>Ferry timetable</title></head><body><article>"
        f"<h1>New ferry timetable approved</h1><p>{text}</p></article></body></html>"
    ).encode()


@deferred_f_from_coro_f
async def test_a_page_changed_by_exactly_k_bits_is_a_duplicate_of_itself(site, routes, tmp_path):
    """README, "Across crawls": a page stored by an earlier crawl is a duplicate of itself
    unless it changed by more than k bits. Here it changed by exactly k (k set to the
    distance of its two versions): a duplicate of itself, at that distance, with the new
    version's fingerprint in the meta of a dry run."""
    url = site.url("/ferry.html")
    routes["/ferry-index.html"] = (
        200,
        "text/html",
        b"<html><body><ul><li><a href='/ferry.html'>ferry</a></li></ul></body></html>",
    )
    old = _harbour_page(_HARBOUR)
    new = _harbour_page(_HARBOUR.replace("every forty minutes", "every half hour"))
    fingerprints = []
    for n, body in enumerate((old, new)):  # each version's fingerprint, as a crawl takes it
        routes["/ferry.html"] = (200, "text/html; charset=utf-8", body)
        seen = await crawl(
            {**MIDDLEWARE, "SIMHASH_DRY_RUN": True},
            tmp_path / f"alone{n}",
            site,
            start="/ferry-index.html",
            fields=("url", "simhash"),
        )
        fingerprints.append(seen.kept[0]["simhash"]["fingerprint"])
    k = hamming(*fingerprints)
    assert 1 <= k <= 8, k  # the two versions are near duplicates at a distance k may take
    settings = {**MIDDLEWARE, "SIMHASH_MAX_DISTANCE": k}
    routes["/ferry.html"] = (200, "text/html; charset=utf-8", old)
    await crawl(settings, tmp_path, site, start="/ferry-index.html")
    routes["/ferry.html"] = (200, "text/html; charset=utf-8", new)
    again = await crawl(
        {**settings, "SIMHASH_DRY_RUN": True},
        tmp_path,
        site,
        start="/ferry-index.html",
        fields=("url", "simhash"),
    )
    [item] = again.kept
    meta = item["simhash"]
    decided = (meta["fingerprint"], meta["duplicate_of"], meta["distance"])
    assert decided == (fingerprints[1], url, k)
    assert again.simhash["simhash/duplicate"] == 1


class InOrderSpider(SiteSpider):
    """Requests the site's articles numbered in ``order`` (``dont_filter``), each only once
    the one before reached the spider, and notes ``simhash/checked`` as each arrives: nothing
    else is decided in between."""

    order: tuple[int, ...] = (0,)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.checked: list[tuple[str, int]] = []

    def _request(self, i: int) -> Request:
        url = urljoin(self.start_url, ARTICLES[self.order[i]])
        return Request(url, self.parse_page, dont_filter=True, cb_kwargs={"i": i})

    async def start(self):
        yield self._request(0)

    def parse_page(self, response, i=0):
        self.checked.append((response.url, self.crawler.stats.get_value("simhash/checked")))
        yield from super().parse_page(response)
        if i + 1 < len(self.order):
            yield self._request(i + 1)


class AgainSpider(InOrderSpider):
    """Requests the site's first article, its second, then the first again."""

    order = (0, 1, 0)


class ReturnSpider(InOrderSpider):
    """Requests three articles, the second and third again, then the first again."""

    order = (0, 1, 2, 1, 2, 0)


@deferred_f_from_coro_f
async def test_a_page_fetched_again_beyond_the_decision_memory_is_kept_again(
    site, tmp_path, monkeypatch
):
    """A page this crawl stored, fetched again (``dont_filter``) once the decision memory
    has forgotten it, is found in the index as this crawl's own entry: kept again, not a
    duplicate of itself as a page of an earlier crawl would be."""
    monkeypatch.setattr(service_module, "DECISION_MEMORY", 1)
    first, second = (site.url(path) for path in ARTICLES[:2])
    result = await crawl(MIDDLEWARE, tmp_path, site, spider=AgainSpider)
    assert [item["url"] for item in result.kept] == [first, second, first]
    assert "simhash/duplicate" not in result.simhash


@deferred_f_from_coro_f
async def test_the_decision_memory_keeps_the_latest_pages_up_to_its_size(
    site, tmp_path, monkeypatch
):
    """The decision memory holds the last ``DECISION_MEMORY`` decisions. The middleware
    remembers a page under three keys (its URL, and the memo keys of its body and of its
    text), so 6 hold two pages: after three articles, the second and third are recalled (not
    checked again), and the first, forgotten, is checked again (and kept, as this crawl's
    own entry)."""
    monkeypatch.setattr(service_module, "DECISION_MEMORY", 6)
    spiders = []

    class Spider(ReturnSpider):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            spiders.append(self)

    result = await crawl(MIDDLEWARE, tmp_path, site, spider=Spider)
    urls = [site.url(ARTICLES[n]) for n in ReturnSpider.order]
    assert spiders[0].checked == list(zip(urls, [1, 2, 3, 3, 3, 4], strict=True))
    assert [item["url"] for item in result.kept] == urls
    assert "simhash/duplicate" not in result.simhash


_LIBRARY = (
    "The town library will open its doors two evenings a week from March, when the night "
    "school moves into the reading rooms on the first floor. Classes in languages, "
    "bookkeeping and first aid start at seven and finish by half past nine, and the lending "
    "desk stays open for the students until the last class ends. The council pays for the "
    "heating and the extra staff from the fund left by the old mill, and the teachers come "
    "from the college across the river. Places are free for residents, and the first term "
    "is already half full, the librarian said on Friday."
)


@deferred_f_from_coro_f
async def test_items_without_url_are_linked_by_their_whole_html(site, routes, tmp_path):
    """Items without URL are linked to a page by their HTML: the same HTML is the same page,
    and HTML of the same length is not. Here an exact copy of an article, in a page whose
    HTML differs by a comment, is dropped; a third, different article whose HTML has that
    copy's length is decided on its own, and kept."""
    original = _harbour_page(_HARBOUR)
    copy = original.replace(b"</body>", b"<!-- syndicated --></body>")
    other = _harbour_page(_LIBRARY)
    other = other.replace(b"</body>", b"<!--" + b" " * (len(copy) - len(other) - 7) + b"--></body>")
    assert len(other) == len(copy) and other != copy
    pages = {"/h1.html": original, "/h2.html": copy, "/lib.html": other}
    for path, body in pages.items():
        routes[path] = (200, "text/html; charset=utf-8", body)
    links = "".join(f"<li><a href='{path}'>{path}</a></li>" for path in pages)
    routes["/h-index.html"] = (200, "text/html", f"<ul>{links}</ul>".encode())
    result = await crawl(PIPELINE, tmp_path, site, start="/h-index.html", fields=("html",))
    assert [item["html"].encode() for item in result.kept] == [original, other]
    assert [item["html"].encode() for item, _ in result.dropped] == [copy]


def test_the_key_of_an_item_without_url_is_a_stable_hash_of_its_html():
    """Such keys are stored: the same HTML gives the same key in every crawl, process and
    version (golden values, BLAKE2b of 16 bytes), as bytes or decoded, and HTML holding a
    lone surrogate (text decoded with ``surrogateescape``) is keyed too."""
    assert service_module.digest(b"<p>a page</p>") == "b5a4687575320443f7bb94a8ef3bc197"
    assert service_module.digest("<p>a page</p>") == "b5a4687575320443f7bb94a8ef3bc197"
    assert service_module.digest("<p>\udce9</p>") == "c7d58dba93c4009484948d54e2553196"


class SurrogateEscapeSpider(SiteSpider):
    """Decodes each page as UTF-8 with ``surrogateescape``, so a byte of another encoding is
    a lone surrogate in the item's HTML: here in the page's only ``<title>`` (an SVG's, after
    its article)."""

    def parse_page(self, response):
        yield {"url": response.url, "html": response.body.decode("utf-8", "surrogateescape")}


@pytest.mark.parametrize("workers", [0, 1], ids=["inline", "1-worker"])
@deferred_f_from_coro_f
async def test_an_item_whose_title_holds_a_lone_surrogate_is_checked_and_kept(
    site, routes, tmp_path, workers
):
    """Its title, which the index keeps with the page, has the surrogate replaced (U+FFFD):
    the check raised a TypeError (the record is not UTF-8), and the item was lost."""
    page = _harbour_page(_HARBOUR).replace(b"<title>Ferry timetable</title>", b"")
    page = page.replace(b"</body>", b"<svg><title>Caf\xe9 map</title></svg></body>")
    routes["/cp1252.html"] = (200, "text/html", page)
    routes["/s-index.html"] = (200, "text/html", b"<ul><li><a href='/cp1252.html'>a</a></ul>")
    settings = {**PIPELINE, "SIMHASH_WORKERS": workers}
    result = await crawl(
        settings, tmp_path, site, start="/s-index.html", spider=SurrogateEscapeSpider
    )
    assert [item["url"] for item in result.kept] == [site.url("/cp1252.html")]
    assert result.simhash == {"simhash/checked": 1, "simhash/unique": 1, "simhash/index/size": 1}
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as index:
        assert index.get(site.url("/cp1252.html")).record["title"] == "Caf\ufffd map"


class HeadThenGetSpider(SiteSpider):
    """A HEAD of the first article (as a link checker does), then its GET, then the rest."""

    async def start(self):
        yield Request(self.start_url.replace("/index.html", ARTICLES[0]), method="HEAD",
                      callback=self.after_head, priority=100)  # fmt: skip

    def after_head(self, response):
        yield Request(response.url, callback=self.parse_page)
        yield Request(self.start_url, self.parse_index, meta={"dont_simhash": True})


@deferred_f_from_coro_f
async def test_a_head_request_leaves_its_pages_get_to_be_checked(site, tmp_path):
    """A HEAD response (no body) is counted as no text; its page's GET is checked and stored,
    as in a crawl without the HEAD. The HEAD's "no text" was remembered for the URL, and the
    GET passed unchecked, unstored and uncounted."""
    result = await crawl(MIDDLEWARE, tmp_path, site, spider=HeadThenGetSpider)
    stats = result.simhash
    assert stats["simhash/skipped/no_text"] == 1
    assert {k: stats[k] for k in SITE_STATS} == SITE_STATS
    with SimhashIndex(str(tmp_path / "simhash" / "site"), readonly=True) as index:
        assert site.url(ARTICLES[0]) in index


class CanonicalUrlSpider(SiteSpider):
    """Items that name their page by a canonical URL (another than the response's), with the
    page's HTML."""

    def parse_page(self, response):
        yield {"url": response.url + "?canonical", "html": response.text}


@deferred_f_from_coro_f
async def test_an_item_naming_its_page_by_another_url_is_not_its_own_duplicate(site, tmp_path):
    """With both components, an item whose URL is not the response's (its canonical URL) and
    whose HTML is the page's: the page the middleware let through is its page. Every such item
    was dropped as a near duplicate of its own page (and the page counted twice)."""
    result = await crawl(BOTH, tmp_path, site, spider=CanonicalUrlSpider)
    assert [item["url"] for item in result.kept] == [site.url(p) + "?canonical" for p in ARTICLES]
    assert result.dropped == []
    assert result.simhash == {**SITE_STATS, "simhash/skipped/dont_simhash": 1}
