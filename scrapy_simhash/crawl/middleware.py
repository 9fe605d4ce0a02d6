"""``SimhashMiddleware``: drops near-duplicate HTML responses before the spider parses them."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request, Response, TextResponse
from w3lib.encoding import http_content_type_encoding

from .service import Decision, DedupService, memo_key

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: ``Request.meta`` key: true to let the response through unchecked and unstored.
DONT_SIMHASH = "dont_simhash"
#: ``Response.meta`` key where the fingerprint and the decision are put for the spider.
META_KEY = "simhash"


class SimhashMiddleware:
    """Downloader middleware (``DOWNLOADER_MIDDLEWARES``, about 543): extracts the main text of
    each 2xx HTML response, fingerprints it, and checks it against the index.

    A near duplicate of a stored page is dropped with ``IgnoreRequest`` (so its links are not
    followed either) and logged in one DEBUG line; a new page is stored and passed on with
    ``response.meta["simhash"] = {"fingerprint": int, "duplicate_of": None, "distance": None}``.
    Responses that are not HTML, not 2xx, marked ``meta["dont_simhash"]``, at a URL that
    ``SIMHASH_SKIP_URLS`` matches, too large, without text or too short to fingerprint pass
    through untouched, counted under ``simhash/skipped/<reason>``.
    """

    def __init__(self, service: DedupService) -> None:
        self.service = service

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashMiddleware:
        return cls(DedupService.from_crawler(crawler))

    async def process_response(self, request: Request, response: Response) -> Response:
        decision = await self._decide(request, response)
        if decision is None:
            return response
        if decision.is_duplicate:
            self.service.log_drop(response.url, decision, "page")
            if not self.service.config.dry_run:
                _free_body(response)
                raise IgnoreRequest(
                    f"Near-duplicate of {decision.duplicate_of} (distance {decision.distance})"
                )
        if decision.fingerprint is not None:
            request.meta[META_KEY] = decision.as_meta()  # becomes response.meta
        return response

    async def _decide(self, request: Request, response: Response) -> Decision | None:
        service = self.service
        if request.meta.get(DONT_SIMHASH):
            service.remember([response.url], service.skip("dont_simhash"))
            return None
        if service.skips_url(response.url):
            service.remember([response.url], service.skip("url"))
            return None
        if not isinstance(response, HtmlResponse) and b"html" not in _content_type(response):
            service.skip("not_html")
            return None
        if not 200 <= response.status < 300:
            service.skip("status")
            return None
        if request.method == "HEAD":
            # no body: counted, not remembered (the page's GET is checked as ever; it found
            # the HEAD's "no text" remembered for its URL, and passed unchecked and uncounted)
            service.skip("no_text")
            return None
        previous = service.recall(response.url)
        if previous is not None:  # already decided in this crawl (e.g. after a redirect)
            return previous if previous.skipped is None else None
        encoding = http_content_type_encoding(_content_type(response).decode("latin-1"))
        decision = await service.decide_html(response.url, response.body, response.url, encoding)
        service.remember([response.url], decision)
        if not decision.is_duplicate or service.config.dry_run:
            # The spider gets this page: an item without URL is linked to it by its HTML. (A
            # dropped page yields no item; hashing its body and its decoded text, about 0.3 ms
            # for a page of 100 KB, would be spent for nothing.)
            contents = [memo_key(response.body)]
            if isinstance(response, HtmlResponse) and decision.skipped != "too_large":
                contents.append(memo_key(response.text))
            service.link_content(contents, decision)
        return decision if decision.skipped is None else None


def _free_body(response: Response) -> None:
    """Empty a response that is dropped, and the text and selector cached on it.

    Scrapy keeps a response dropped by ``IgnoreRequest`` in a reference cycle (the exception's
    traceback holds the frames that hold the response), which only Python's cyclic garbage
    collector frees, and it runs seldom in a big process: the bodies of dropped pages would pile
    up between collections (hundreds of MB in a crawl that drops most of its pages). Nothing
    reads a response after its request was ignored. Uses Scrapy's private ``_set_body``; where
    that is missing, the response is left as it is.
    """
    try:
        response._set_body(b"")
        if isinstance(response, TextResponse):
            response._cached_ubody = None
            response._cached_selector = None
    except AttributeError:  # pragma: no cover - another Scrapy version
        pass


def _content_type(response: Response) -> bytes:
    return (response.headers.get(b"Content-Type") or b"").lower()
