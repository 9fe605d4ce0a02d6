"""``news``: crawls the small news site bundled in ``site/`` (default, offline; served on
http://127.0.0.1:8617/, or on a free port with ``-a port=0`` or when 8617 is taken), or a real
site given with ``-a start_url=https://...``, and yields one item per page that reaches it.

The bundled site holds five articles in one template, their syndicated copies in another
layout, print versions, an archived copy with ads, comments and a correction, a link with
tracking parameters and a partner paper's copy in its own layout: scrapy-simhash keeps the five
articles and drops the seven copies before the spider sees them. With
``-s SIMHASH_ENABLED=False`` all twelve pages are items.
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import HtmlResponse

SITE = Path(__file__).resolve().parents[2] / "site"
#: The bundled site's own articles; every other page it links to is a copy of one of them.
ARTICLES = "/news/"
#: The bundled site's port: fixed, so that its URLs (the index's keys) are the same in every
#: crawl, and the README's commands that name one run as printed.
SITE_PORT = 8617


def _is_article(url: str) -> bool:
    parts = urlsplit(url)
    return parts.path.startswith(ARTICLES) and not parts.query


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class NewsSpider(scrapy.Spider):
    name = "news"

    def __init__(
        self, start_url: str | None = None, port: int | str = SITE_PORT, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.start_url = start_url
        self.port = int(port)
        # Set here: the offsite middleware reads it when the spider opens, before start().
        self.allowed_domains = [urlsplit(start_url).hostname if start_url else "127.0.0.1"]
        self._server: ThreadingHTTPServer | None = None
        self._later: list[scrapy.Request] = []

    @classmethod
    def from_crawler(cls, crawler, *args: Any, **kwargs: Any):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._crawl_the_rest, signal=signals.spider_idle)
        return spider

    async def start(self):
        url = self.start_url or self._serve_bundled_site()
        yield scrapy.Request(url, self.parse, meta={"dont_simhash": True})

    def _serve_bundled_site(self) -> str:
        """Serve ``site/`` on 127.0.0.1 for the duration of the crawl."""
        handler = partial(_QuietHandler, directory=str(SITE))
        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        except OSError as exc:
            self.logger.warning(
                "Port %s: %s; serving the bundled site on a free port", self.port, exc
            )
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        host, port = self._server.server_address[:2]
        self.logger.info("Serving the bundled site %s on http://%s:%s/", SITE, host, port)
        return f"http://{host}:{port}/index.html"

    def parse(self, response):
        """The start page: follow its links. On the bundled site (whose start page is its
        table of contents, not an item), the articles first, and the pages that copy them once
        every article is decided: which of two copies is kept is the one decided first, and a
        crawl that fetches pages in parallel (with retries) decides them in no fixed order."""
        if self.start_url:
            yield from self.parse_page(response)
        for request in response.follow_all(css="a", callback=self.parse_page):
            if self.start_url is None and not _is_article(request.url):
                self._later.append(request)
            else:
                yield request

    def _crawl_the_rest(self) -> None:
        """``spider_idle``: every article is decided; now the copies."""
        if not self._later:
            return
        for request in self._later:
            self.crawler.engine.crawl(request)
        self._later = []
        raise DontCloseSpider

    def parse_page(self, response):
        if not isinstance(response, HtmlResponse):
            return
        # Near duplicates never get here: the middleware dropped them. A page it checked
        # carries its fingerprint; one it skipped (too little text, dont_simhash) or a crawl
        # with SIMHASH_ENABLED=False has none.
        simhash = response.meta.get("simhash")
        yield {
            "url": response.url,
            "title": response.css("title::text").get("").strip(),
            "fingerprint": None if simhash is None else f"{simhash['fingerprint']:016x}",
        }
        if self.start_url:  # a real site: keep crawling it
            yield from response.follow_all(css="a", callback=self.parse_page)

    def closed(self, reason: str) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
