"""The ``SIMHASH_*`` settings, read and checked once into a frozen :class:`SimhashConfig`.

A bad value raises :class:`ValueError` naming the setting, the value and what is allowed, so
a crawl with a typo stops at start with one clear line instead of crawling without dedup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scrapy.settings import BaseSettings

from ._layout import MAX_SUPPORTED_DISTANCE

#: Largest accepted ``SIMHASH_MAX_DISTANCE``: the largest the permuted-table index supports
#: (its number of tables grows quickly with the distance).
MAX_DISTANCE_LIMIT = MAX_SUPPORTED_DISTANCE

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _int(settings: BaseSettings, name: str, default: int, low: int, high: int | None) -> int:
    value: Any = settings.get(name, default)
    if value is None:
        value = default
    allowed = f"an integer >= {low}" if high is None else f"an integer between {low} and {high}"
    problem = ValueError(f"{name} must be {allowed}, got {value!r}")
    if isinstance(value, bool):
        raise problem
    if isinstance(value, str):
        try:
            value = int(value.strip().replace("_", ""))
        except ValueError:
            raise problem from None
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < low or (high is not None and value > high):
        raise problem
    return value


def _bool(settings: BaseSettings, name: str, default: bool) -> bool:
    value: Any = settings.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"{name} must be a boolean (True/False, 1/0), got {value!r}")


def _str(settings: BaseSettings, name: str, default: str) -> str:
    value: Any = settings.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value.strip()


@dataclass(frozen=True)
class SimhashConfig:
    """Every ``SIMHASH_*`` setting, typed. Build it with :meth:`from_settings`."""

    enabled: bool = True
    dir: str = "simhash"
    max_distance: int = 3
    expected_size: int = 1_000_000
    min_text_length: int = 20
    max_body_size: int = 10 * 1024 * 1024
    html_field: str = "html"
    text_field: str = "text"
    url_field: str = "url"
    reset: bool = False
    dry_run: bool = False

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SimhashConfig:
        """Read the ``SIMHASH_*`` settings; raise :class:`ValueError` naming a bad one."""
        d = cls()
        return cls(
            enabled=_bool(settings, "SIMHASH_ENABLED", d.enabled),
            dir=_str(settings, "SIMHASH_DIR", d.dir),
            max_distance=_int(
                settings, "SIMHASH_MAX_DISTANCE", d.max_distance, 0, MAX_DISTANCE_LIMIT
            ),
            expected_size=_int(settings, "SIMHASH_EXPECTED_SIZE", d.expected_size, 1, None),
            min_text_length=_int(settings, "SIMHASH_MIN_TEXT_LENGTH", d.min_text_length, 1, None),
            max_body_size=_int(settings, "SIMHASH_MAX_BODY_SIZE", d.max_body_size, 0, None),
            html_field=_str(settings, "SIMHASH_HTML_FIELD", d.html_field),
            text_field=_str(settings, "SIMHASH_TEXT_FIELD", d.text_field),
            url_field=_str(settings, "SIMHASH_URL_FIELD", d.url_field),
            reset=_bool(settings, "SIMHASH_RESET", d.reset),
            dry_run=_bool(settings, "SIMHASH_DRY_RUN", d.dry_run),
        )
