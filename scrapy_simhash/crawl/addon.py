"""``Addon``: turns on both components with one line, ``ADDONS = {"scrapy_simhash.Addon": 300}``."""

from __future__ import annotations

from scrapy.settings import BaseSettings

from .middleware import SimhashMiddleware
from .pipeline import SimhashPipeline

#: After decompression (590), redirects (600) and retries (550) in process_response order.
MIDDLEWARE_PRIORITY = 543
#: Early, so that later pipelines (storage, exports) never see a dropped item.
PIPELINE_PRIORITY = 200


class Addon:
    """Adds :class:`SimhashMiddleware` and :class:`SimhashPipeline`, unless already listed (then
    the user's priorities stay)."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", SimhashMiddleware, MIDDLEWARE_PRIORITY
        )
        settings.setdefault_in_component_priority_dict(
            "ITEM_PIPELINES", SimhashPipeline, PIPELINE_PRIORITY
        )
