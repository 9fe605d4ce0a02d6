"""The ``SIMHASH_*`` settings, read and checked once into a frozen :class:`SimhashConfig`.

A bad value raises :class:`ValueError` naming the setting, the value and what is allowed, so
a crawl with a typo stops at start with one clear line instead of crawling without dedup.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from scrapy.settings import BaseSettings

from ..index.layout import MAX_SUPPORTED_DISTANCE
from .workers import MAX_TIMEOUT

#: Largest accepted ``SIMHASH_MAX_DISTANCE``: the largest the permuted-table index supports
#: (its number of tables grows quickly with the distance).
MAX_DISTANCE_LIMIT = MAX_SUPPORTED_DISTANCE

#: Most worker processes started by default, whatever the number of CPUs.
MAX_DEFAULT_WORKERS = 4
#: Most worker processes accepted.
MAX_WORKERS = 64

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


def _float(
    settings: BaseSettings,
    name: str,
    default: float,
    low: float,
    strict: bool,
    high: float = math.inf,
) -> float:
    value: Any = settings.get(name, default)
    if value is None:
        return default
    allowed = f"a number {'>' if strict else '>='} {low:g}"
    if high != math.inf:
        allowed += f" and <= {high:g}"
    problem = ValueError(f"{name} must be {allowed}, got {value!r}")
    if isinstance(value, bool):
        raise problem
    try:
        number = float(value)  # a string may have spaces around it: float() ignores them
    except (TypeError, ValueError):
        raise problem from None
    if not math.isfinite(number) or number < low or (strict and number == low) or number > high:
        raise problem
    return number


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


def _choice(settings: BaseSettings, name: str, default: str, allowed: tuple[str, ...]) -> str:
    value: Any = settings.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value.strip().lower()


def _patterns(settings: BaseSettings, name: str) -> tuple[re.Pattern[str], ...]:
    """A list of regular expressions: a list or tuple of strings, or a string (a JSON list,
    as ``-s`` gives one on the command line, or one expression)."""
    value: Any = settings.get(name)
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as exc:
                # not JSON: one expression that opens with a character class ("[a-z]+/print/")
                try:
                    re.compile(value)
                except re.error:
                    raise ValueError(
                        f"{name} must be a JSON list of strings or one regular expression, "
                        f"got {value!r}: {exc}"
                    ) from None
                value = [value]
        else:
            value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(p, str) and p for p in value):
        raise ValueError(f"{name} must be a list of regular expressions, got {value!r}")
    compiled = []
    for pattern in value:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"{name}: {pattern!r} is no regular expression ({exc})") from None
    return tuple(compiled)


#: redis-py options of the index's connection unless ``SIMHASH_REDIS_PARAMS`` says otherwise:
#: a call never waits forever on a dead server.
REDIS_PARAMS = {"socket_timeout": 30, "socket_connect_timeout": 10, "health_check_interval": 30}
#: The options of seconds, checked here (a timeout redis-py refuses leaves its socket open),
#: with the least each may be.
_REDIS_SECONDS = {"socket_timeout": 0, "socket_connect_timeout": 0, "health_check_interval": 0}

#: What a crawl does when the index cannot be written (``SIMHASH_ON_INDEX_ERROR``).
ON_INDEX_ERROR = ("stop", "skip")


def default_workers() -> int:
    """One worker process per CPU available to the crawl, at most 4; none (work inline) on a
    single CPU, where workers would only add memory and copying."""
    if os.name != "posix":  # workers talk over socket pairs passed to the child
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    return 0 if cpus < 2 else min(cpus, MAX_DEFAULT_WORKERS)


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
    workers: int = field(default_factory=lambda: default_workers())
    timeout: float = 30.0
    commit_every: int = 1000
    commit_interval: float = 1.0
    fsync: bool = True
    fast: bool = False
    numbers: bool = True
    skip_listings: bool = True
    on_index_error: str = "stop"
    drop_records: bool = True
    drop_records_max: int = 100_000
    #: URLs let through unchecked and unstored (``SIMHASH_SKIP_URLS``): ``re.search`` matches.
    skip_urls: tuple[re.Pattern[str], ...] = ()
    #: The Redis index (``SIMHASH_REDIS_*``, see :func:`redis_settings`); None: LMDB.
    redis_url: str | None = None
    redis_key: str = "%(spider)s:simhash"
    redis_cluster: bool | None = None
    redis_params: dict[str, Any] = field(default_factory=lambda: dict(REDIS_PARAMS))
    #: ``SIMHASH_RESET`` on a Redis index: the index's key, not a flag.
    reset_key: str | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SimhashConfig:
        """Read the ``SIMHASH_*`` settings; raise :class:`ValueError` naming a bad one."""
        d = cls()
        redis = redis_settings(settings)
        reset_key = None
        if redis["redis_url"] is not None:
            reset_key = _reset_key(settings)
        return cls(
            **redis,
            reset_key=reset_key,
            enabled=simhash_enabled(settings),
            dir=simhash_dir(settings),
            max_distance=_int(
                settings, "SIMHASH_MAX_DISTANCE", d.max_distance, 0, MAX_DISTANCE_LIMIT
            ),
            expected_size=_int(settings, "SIMHASH_EXPECTED_SIZE", d.expected_size, 1, None),
            min_text_length=_int(settings, "SIMHASH_MIN_TEXT_LENGTH", d.min_text_length, 1, None),
            max_body_size=_int(settings, "SIMHASH_MAX_BODY_SIZE", d.max_body_size, 0, None),
            html_field=_str(settings, "SIMHASH_HTML_FIELD", d.html_field),
            text_field=_str(settings, "SIMHASH_TEXT_FIELD", d.text_field),
            url_field=_str(settings, "SIMHASH_URL_FIELD", d.url_field),
            reset=False if redis["redis_url"] else _bool(settings, "SIMHASH_RESET", d.reset),
            dry_run=_bool(settings, "SIMHASH_DRY_RUN", d.dry_run),
            workers=_int(settings, "SIMHASH_WORKERS", d.workers, 0, MAX_WORKERS),
            timeout=_float(
                settings, "SIMHASH_TIMEOUT", d.timeout, 0, strict=True, high=MAX_TIMEOUT
            ),
            commit_every=_int(settings, "SIMHASH_COMMIT_EVERY", d.commit_every, 1, None),
            commit_interval=_float(
                settings, "SIMHASH_COMMIT_INTERVAL", d.commit_interval, 0, strict=False
            ),
            fsync=_bool(settings, "SIMHASH_FSYNC", d.fsync),
            fast=_bool(settings, "SIMHASH_FAST", d.fast),
            numbers=_bool(settings, "SIMHASH_NUMBERS", d.numbers),
            skip_listings=_bool(settings, "SIMHASH_SKIP_LISTINGS", d.skip_listings),
            on_index_error=_choice(
                settings, "SIMHASH_ON_INDEX_ERROR", d.on_index_error, ON_INDEX_ERROR
            ),
            drop_records=_bool(settings, "SIMHASH_DROP_RECORDS", d.drop_records),
            drop_records_max=_int(
                settings, "SIMHASH_DROP_RECORDS_MAX", d.drop_records_max, 1, None
            ),
            skip_urls=_patterns(settings, "SIMHASH_SKIP_URLS"),
        )


def simhash_enabled(settings: BaseSettings) -> bool:
    """``SIMHASH_ENABLED`` alone: components turned off read none of the other settings, which
    a crawl without the plugin must not fail on (an index on a server it has no access to)."""
    return _bool(settings, "SIMHASH_ENABLED", SimhashConfig.enabled)


def simhash_dir(settings: BaseSettings) -> str:
    """``SIMHASH_DIR`` alone: ``scrapy simhash`` needs only it to find a spider's index, and
    must not fail on another setting that only a crawl uses. A path object is taken, as
    HTTPCACHE_DIR takes one (a settings module's ``BASE_DIR / "simhash"``)."""
    value: Any = settings.get("SIMHASH_DIR")
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        path = os.fspath(value)
    else:
        path = _str(settings, "SIMHASH_DIR", SimhashConfig.dir)
    if "\0" in path:  # no file system takes it: said here, not as a bare "embedded null byte"
        raise ValueError(f"SIMHASH_DIR must be a folder's path, got one with a NUL: {path!r}")
    return path


#: URL schemes of ``SIMHASH_REDIS_URL`` (redis-py's, as scrapy-redis's ``REDIS_URL``).
REDIS_SCHEMES = ("redis", "rediss", "unix")
#: The ``SIMHASH_REDIS_URL`` value that means "the same server as ``REDIS_URL``".
SAME_AS_REDIS_URL = "REDIS_URL"


def redis_settings(settings: BaseSettings) -> dict[str, Any]:
    """The ``SIMHASH_REDIS_*`` settings: URL (None keeps the LMDB index), key, cluster flag
    and connection parameters."""
    return {
        "redis_url": _redis_url(settings),
        "redis_key": _redis_key(settings),
        "redis_cluster": _redis_cluster(settings),
        "redis_params": {**REDIS_PARAMS, **_redis_params(settings)},
    }


def _redis_url(settings: BaseSettings) -> str | None:
    """``SIMHASH_REDIS_URL`` (or ``REDIS_URL``, which it may name), checked; None when unset
    or blank."""
    url: Any = settings.get("SIMHASH_REDIS_URL")
    if url is not None and not isinstance(url, str):
        raise ValueError(
            f"SIMHASH_REDIS_URL must be a redis://, rediss:// or unix:// URL, got {url!r}"
        )
    named = "SIMHASH_REDIS_URL"  # the setting that holds the URL, named in its errors
    if url is not None and url.strip() == SAME_AS_REDIS_URL:
        url = settings.get("REDIS_URL")
        if not url or not isinstance(url, str):
            raise ValueError(
                "SIMHASH_REDIS_URL is 'REDIS_URL', but the REDIS_URL setting is not set"
            )
        named = "REDIS_URL (which SIMHASH_REDIS_URL names)"
    if url is None or not url.strip():
        return None
    url = url.strip()
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in REDIS_SCHEMES:
        # the URL is not shown whole: it may hold a password
        shown = f"a {scheme}:// URL" if scheme else "a value without a scheme"
        raise ValueError(f"{named} must be a redis://, rediss:// or unix:// URL, got {shown}")
    return url


def _redis_key(settings: BaseSettings) -> str:
    """``SIMHASH_REDIS_KEY``: a key with at most ``%(spider)s`` in it, and no braces."""
    key = _str(settings, "SIMHASH_REDIS_KEY", SimhashConfig.redis_key)
    try:
        formatted = key % {"spider": "spider"}
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"SIMHASH_REDIS_KEY must be a key with at most %(spider)s in it, got {key!r} ({exc})"
        ) from None
    if "{" in formatted or "}" in formatted:
        raise ValueError(
            f"SIMHASH_REDIS_KEY must not hold braces (it is wrapped in a hash tag), got {key!r}"
        )
    return key


def _redis_cluster(settings: BaseSettings) -> bool | None:
    """``SIMHASH_REDIS_CLUSTER``: None for ``"auto"`` (the server says), else a flag."""
    cluster: Any = settings.get("SIMHASH_REDIS_CLUSTER", "auto")
    if cluster is None or (isinstance(cluster, str) and cluster.strip().lower() == "auto"):
        return None
    return _bool(settings, "SIMHASH_REDIS_CLUSTER", False)


def _redis_params(settings: BaseSettings) -> dict[str, Any]:
    """``SIMHASH_REDIS_PARAMS``: a dict of redis-py connection options (JSON from the
    command line), its timeouts checked. Its values are never shown in an error: they may
    hold a password."""
    given: Any = settings.get("SIMHASH_REDIS_PARAMS") or {}
    params = given
    if isinstance(params, BaseSettings):
        params = params.copy_to_dict()
    elif isinstance(params, str):  # from the command line: JSON, as Scrapy's getdict reads it
        with contextlib.suppress(ValueError):  # not JSON: refused below
            params = json.loads(params)
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        if isinstance(params, dict):
            shown = f"a dict with the keys {', '.join(map(repr, params))}"
        elif isinstance(given, str):
            shown = "a str that is no JSON object"
        else:
            shown = f"a {type(given).__name__}"
        raise ValueError(
            f"SIMHASH_REDIS_PARAMS must be a dict of redis-py connection options, got {shown}"
        )
    for name, least in _REDIS_SECONDS.items():
        seconds = params.get(name)
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not seconds >= least
            or not math.isfinite(seconds)
        ):
            raise ValueError(
                f"SIMHASH_REDIS_PARAMS: {name} must be a number of seconds >= {least} (or None), "
                f"got {seconds!r}"
            )
    return params


def _reset_key(settings: BaseSettings) -> str | None:
    """``SIMHASH_RESET`` with a Redis index: other crawls may share it, so a flag is not
    enough; the value must name the index's key (checked when the spider is known)."""
    value: Any = settings.get("SIMHASH_RESET", False)
    if (
        value is None
        or value is False
        or (type(value) is int and value == 0)  # as the LMDB index's flag reads it
        or (isinstance(value, str) and value.strip().lower() in _FALSE)
    ):
        return None
    if isinstance(value, str) and value.strip() and value.strip().lower() not in _TRUE:
        return value.strip()
    raise ValueError(
        "SIMHASH_RESET on a Redis index (which other crawls may share) must name the index's "
        "key, e.g. SIMHASH_RESET = 'myspider:simhash' (SIMHASH_REDIS_KEY with the spider's "
        f"name), not {value!r}"
    )
