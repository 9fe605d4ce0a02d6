"""``SimhashPipeline``: drops items whose page is a near duplicate of a stored page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from .service import Decision, DedupService, digest, memo_key

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: Level of Scrapy's own drop message for :class:`NearDuplicate`: below DEBUG, so it is never
#: shown. That message prints the whole item (megabytes for an item carrying its page's HTML);
#: the pipeline logs one short DEBUG line instead.
DROP_LOG_LEVEL = 5


class NearDuplicate(DropItem):
    """An item dropped because its page is within ``SIMHASH_MAX_DISTANCE`` bits of the stored
    page ``duplicate_of``. Counted by Scrapy as ``item_dropped_reasons_count/NearDuplicate``."""

    def __init__(self, duplicate_of: str, distance: int) -> None:
        super().__init__(f"Near-duplicate of {duplicate_of} (distance {distance})")
        self.duplicate_of = duplicate_of
        self.distance = distance
        self.log_level: Any = DROP_LOG_LEVEL


class SimhashPipeline:
    """Item pipeline (``ITEM_PIPELINES``): raises :class:`NearDuplicate` for an item whose page
    is a near duplicate of a page already stored.

    The page of an item is found, in this order: by the item's URL field (``SIMHASH_URL_FIELD``)
    among the pages :class:`~scrapy_simhash.SimhashMiddleware` (or an earlier item) decided in
    this crawl; else by fingerprinting the HTML in ``SIMHASH_HTML_FIELD``; else the text in
    ``SIMHASH_TEXT_FIELD``. Every item of a page gets the page's decision: all are kept, or all
    dropped; a page is extracted and checked once, whatever its number of items.
    """

    def __init__(self, service: DedupService) -> None:
        self.service = service

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashPipeline:
        return cls(DedupService.from_crawler(crawler))

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = _field(adapter, self.service.config.url_field, joined=False)
        if not isinstance(url, str) or not url:
            url = None  # an item without URL (an empty or non-string field is none)
        elif not _is_unicode(url):  # a lone surrogate: no index can hold it as a key
            self.service.skip("bad_url")
            return item
        decision, recalled = await self._decide(adapter, url)
        if decision.is_duplicate:
            assert decision.duplicate_of is not None and decision.distance is not None
            dry_run = self.service.config.dry_run
            # A dry run keeps the items: the line said of their page is said once, by
            # whichever component checked it (the middleware, or this for the page's first item).
            if not (dry_run and recalled):
                self.service.log_drop(url or "<item without URL>", decision, "item")
            if not dry_run:
                raise NearDuplicate(decision.duplicate_of, decision.distance)
        return item

    async def _decide(self, adapter: ItemAdapter, url: str | None) -> tuple[Decision, bool]:
        """The decision on the item's page, and whether it was recalled (the page was checked
        before: by the middleware, or for an earlier item of the page)."""
        service = self.service
        config = service.config
        if url is not None:
            decision = await service.recall_page(url)
            if decision is not None:
                return decision, True
            if service.skips_url(url):  # the page's other items recall it
                decision = service.skip("url")
                service.remember([url], decision)
                return decision, False
        html = _field(adapter, config.html_field)
        text = _field(adapter, config.text_field)
        if isinstance(html, str | bytes) and (html or not isinstance(text, str)):
            body = html  # an empty HTML beside a text: the text
        elif isinstance(text, str):
            body = text
        else:
            return service.skip("no_field"), False
        # An item is linked to its page by its HTML (or text) where the page was let through by
        # the middleware, or where it has no URL: identical HTML is taken for the same page.
        # Otherwise its URL alone links it (an exact copy of a page at another URL is a
        # duplicate).
        memo = memo_key(body)
        decision = service.recall(memo)
        if decision is not None:
            # the very HTML of a page the middleware let through (or of an earlier item): its
            # item, whatever URL it names (a canonical one, another page's URL field), is not
            # a duplicate of its own page
            if url is not None:
                service.remember([url], decision)
            return decision, True
        if url is None:
            key = f"item:{digest(body)}"
        else:
            memo = key = url
        if body is html:
            decision = await service.decide_html(key, html, url)
        else:
            decision = await service.decide_text(key, text)
        service.remember([memo], decision)
        return decision, False


def _is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode (holds no lone surrogate), as UTF-8 can store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _field(adapter: ItemAdapter, name: str, joined: bool = True) -> Any:
    """The item's field ``name``. A list or tuple, as an ItemLoader without ``TakeFirst``
    gives, is read as its one value, or (when ``joined``, for a text or HTML) as its strings
    joined by newlines."""
    try:
        value = adapter.get(name)
    except (KeyError, AttributeError):
        return None
    if isinstance(value, list | tuple):
        if len(value) == 1:
            return value[0]
        if joined and value and all(isinstance(part, str) for part in value):
            return "\n".join(value)
    return value
