"""Talking to a Redis or Valkey server: the client for a URL (one server or a Redis Cluster),
what a failed call raises, an index's key prefix checked, and a URL fit for logs (its
password hidden). redis-py is imported only when a server is used (the ``redis`` extra)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: A password given in the URL's query (``unix:///run/redis.sock?password=...``, as redis-py
#: reads it).
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def redact(url: str) -> str:
    """``url`` with its password, in the user information or the query, replaced by ``***``
    (for logs and ``info``)."""
    return _QUERY_PASSWORD.sub(r"\1***", _userinfo_redacted(url))


def _userinfo_redacted(url: str) -> str:
    try:
        parts = urlsplit(url)
        password, port = parts.password, parts.port
    except ValueError:  # not read as a URL (a host "[::1" unclosed, a port out of range)
        password = port = None
    if password is None:
        # A password holding '/', '?' or '#' (not percent-encoded) ends what urlsplit takes
        # for the user information and host early: the user information then runs to the
        # last '@' (hidden, with anything else that may hold a password, when it has a ':').
        scheme, sep, rest = url.partition("://")
        userinfo, at, host = rest.rpartition("@")
        if sep and at and ":" in userinfo:
            return f"{scheme}://{userinfo.partition(':')[0]}:***@{host}"
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if port is not None:
        host = f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _unreadable(url: str, exc: ValueError) -> str:
    """What is wrong with a URL redis-py cannot read, its password hidden: redis-py's message
    may quote a piece of the URL, of its password, and is said only where there is none."""
    shown = redact(url)
    scheme = url.partition("://")[0].lower()
    if scheme not in ("redis", "rediss", "unix"):
        return f"{shown} is not a Redis URL: it starts with redis://, rediss:// or unix://"
    if shown == url:
        return f"redis-py cannot read {url}: {exc}"
    userinfo = url.partition("://")[2].rpartition("@")[0]
    if any(c in userinfo for c in "/?#"):
        why = "a password holding '/', '?' or '#' must be percent-encoded in the URL: %2F, %3F, %23"
    else:
        why = "its host or port cannot be read"
    return f"redis-py cannot read {shown} ({why})"


class RedisUrlError(ValueError):
    """A URL that names no Redis server redis-py can connect to."""


class EvictingServerError(ValueError):
    """A server whose ``maxmemory-policy`` may evict the index's keys."""


#: The path of a ``redis://`` URL: nothing, or the database's number.
_DB_PATH = re.compile(r"(/\d*)?/?")


def check_prefix(prefix: str) -> str:
    """``prefix`` as an index's key prefix: a non-empty str without braces (it is wrapped in
    a hash tag)."""
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"the index's key must be a non-empty str, got {prefix!r}")
    if "{" in prefix or "}" in prefix:
        raise ValueError(f"the index's key must not hold braces (it is a hash tag): {prefix!r}")
    return prefix


def redis_errors() -> tuple[type[BaseException], ...]:
    """What a failed call to the server raises: redis-py's errors, and a cluster's when none
    of its nodes answers (``RedisClusterException``, which is not a ``RedisError``)."""
    import redis
    from redis.exceptions import RedisClusterException

    return (redis.RedisError, RedisClusterException)


def connect(url: str, cluster: bool | None = None, **options: Any) -> Any:
    """A redis-py client for ``url`` (``redis://``, ``rediss://``, ``unix://``): a
    ``RedisCluster`` when ``cluster`` is True, or when None and the server says it is in
    cluster mode."""
    import redis
    from redis.cluster import RedisCluster
    from redis.connection import parse_url

    try:
        parse_url(url)  # as from_url reads it
    except ValueError as exc:
        raise RedisUrlError(_unreadable(url, exc)) from None
    scheme = url.partition("://")[0].lower()
    path = urlsplit(url).path if scheme in ("redis", "rediss") else ""
    if not _DB_PATH.fullmatch(path):  # redis-py would read database 0
        raise RedisUrlError(f"{redact(url)}: its path must be the database's number, not {path!r}")
    if cluster is None:
        with redis.Redis.from_url(url, **options) as probe:
            cluster = bool(probe.info("cluster").get("cluster_enabled"))
    if cluster:
        return RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)
