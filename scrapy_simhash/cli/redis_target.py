"""``scrapy-simhash`` on an index on a Redis server: INDEX is a ``redis://``, ``rediss://``
or ``unix://`` URL and ``--key`` names the index (``SIMHASH_REDIS_KEY`` with the spider's
name, e.g. ``news:simhash``).

Every command works on such an index: lookup, explain, dump, clusters and remove through
:func:`.open_index.open_index` (which opens a :class:`RedisTarget` as a
:class:`~scrapy_simhash.index.redis_index.RedisIndex`), and info, verify and compact here
(a server has no disk use or map to show, and ``compact`` copies the index into an LMDB
directory). ``compact LMDB_DIR URL --key KEY`` copies an LMDB index into a new Redis index.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..index import DamagedIndexError, IndexMismatchError, SimhashIndex
from ..index.redis_client import redact, redis_errors
from ..index.redis_index import RedisIndex
from .destination import new_directory
from .output import CliError, Output, repeated_sentences

SCHEMES = ("redis://", "rediss://", "unix://")


class RedisTarget(str):
    """An INDEX argument naming an index on a Redis server: the string is the URL without
    its password (for messages); ``url`` is the URL given, ``key`` the index's key, and
    ``cluster`` and ``options`` how to connect (a project's ``SIMHASH_REDIS_CLUSTER`` and
    ``SIMHASH_REDIS_PARAMS``, as its crawl connects; None: detected, redis-py's defaults)."""

    url: str
    key: str
    cluster: bool | None
    options: dict[str, Any] | None

    def __new__(
        cls,
        url: str,
        key: str,
        cluster: bool | None = None,
        options: dict[str, Any] | None = None,
    ) -> RedisTarget:
        target = super().__new__(cls, redact(url))
        target.url = url
        target.key = key
        target.cluster = cluster
        target.options = options
        return target


def is_redis(value: str) -> bool:
    return value.lower().startswith(SCHEMES)


def resolve(args: argparse.Namespace) -> None:
    """Turn the INDEX (and compact's DEST) arguments that are Redis URLs into
    :class:`RedisTarget`\\ s named by ``--key``."""
    key = getattr(args, "key", None)
    dest = getattr(args, "dest", None)
    if dest is not None and is_redis(dest):
        if is_redis(args.index):
            raise CliError("compact copies a Redis index into a directory, or an LMDB index "
                           "into Redis: INDEX and DEST cannot both be Redis URLs")  # fmt: skip
        args.dest = target(dest, key)
        return
    args.index = target(args.index, key)


def target(value: str, key: str | None) -> str:
    """The INDEX argument: a :class:`RedisTarget` for a Redis URL (``--key`` required), else
    the path as given (``--key`` refused)."""
    if not is_redis(value):
        if key is not None:
            raise CliError("--key names an index on a Redis server: INDEX must be a Redis URL")
        return value
    if not key:
        raise CliError(f"INDEX {redact(value)} is a Redis server: give the index's --key")
    return RedisTarget(value, key)


def damaged(index: RedisTarget, exc: DamagedIndexError) -> CliError:
    """The one line for damage met while reading ``index``, worded as for an LMDB index
    (:func:`.open_index.reword`): where, what, and the command that lists every problem."""
    command = f"scrapy-simhash verify {index} --key {index.key}"
    return CliError(f"{index} key {index.key}: {exc}; '{command}' checks it whole")


@contextmanager
def open_redis(index: RedisTarget, *, write: bool = False) -> Iterator[RedisIndex]:
    """The Redis index named by ``index`` (read-only unless ``write``); it must exist."""
    try:
        opened = RedisIndex(
            index.url,
            index.key,
            readonly=not write,
            create=False,
            cluster=index.cluster,
            options=index.options,
        )
        if write:
            try:
                opened.check_eviction()  # a ValueError, said as the open's
            except BaseException:
                opened.close()
                raise
    except (IndexMismatchError, DamagedIndexError) as exc:
        raise CliError(str(exc)) from exc
    except ValueError as exc:
        missing = "no index" in str(exc)
        raise CliError(f"no index {index.key!r} at {index}" if missing else str(exc)) from exc
    except redis_errors() as exc:
        raise CliError(f"cannot use the Redis server at {index}: {exc}") from exc
    try:
        yield opened
    except redis_errors() as exc:
        raise CliError(f"the Redis server at {index} failed: {exc}") from exc
    except DamagedIndexError as exc:  # a record that does not decode, met by a command
        raise damaged(index, exc) from exc
    finally:
        opened.close()


def cmd_info(args: argparse.Namespace, out: Output, when: Any) -> int:
    """``info`` of a Redis index: counts, layout, versions, server memory, age."""
    with open_redis(args.index) as index:
        stats = index.stats(seen=False)
        oldest, newest = index.seen_range()
        memory = index.memory()
    shown = ("cluster", "entries", "fingerprints", "layout", "tables", "prefix_bits",
             "field_bits", "fingerprint_version", "numbers", "format_version",
             "maxmemory_policy")  # fmt: skip
    info: dict[str, Any] = {"url": str(args.index), "key": index.key, "k": index.max_distance}
    info.update({name: stats[name] for name in shown}, layout_name=index.layout.name)
    info.update(memory, drop_records=stats["drops"])
    info["repeated_sentences"] = stats["repeated_sentences"]
    info["oldest_seen"] = oldest.record["seen"] if oldest else None
    info["newest_seen"] = newest.record["seen"] if newest else None
    per = memory["tables_memory"] / stats["fingerprints"] if stats["fingerprints"] else 0
    lines = [
        ("index", f"{info['url']} key {info['key']}{' (cluster)' if info['cluster'] else ''}"),
        ("entries", info["entries"]),
        ("fingerprints", f"{info['fingerprints']:,} distinct"),
        ("k", info["k"]),
        ("layout", f"{index.layout.name}: {info['layout']}"),
        ("bucket fields", f"{info['field_bits']} bits"),
        ("fingerprint version", info["fingerprint_version"]),
        ("numbers", "features" if info["numbers"] else "left out (SIMHASH_NUMBERS)"),
        ("format version", f"{info['format_version']} (Redis)"),
        (
            "server memory",
            f"tables {memory['tables_memory']:,} B ({per:.1f} B/fingerprint), "
            f"records {memory['docs_memory'] + memory['links_memory']:,} B, "
            f"signatures {memory['signatures_memory']:,} B, "
            f"drop records {memory['drops_memory']:,} B",
        ),
        ("drop records", f"{info['drop_records']:,} pages dropped as near duplicates"),
        ("repeated sentences", repeated_sentences(info["repeated_sentences"])),
        ("maxmemory-policy", info["maxmemory_policy"]),
        ("oldest", when(oldest)),
        ("newest", when(newest)),
    ]
    out.write_object(info, lines)
    return 0


def verify(index: RedisTarget) -> dict[str, Any]:
    """``verify``'s findings on a Redis index: problems, entries, tables, drop records."""
    with open_redis(index) as opened:
        try:
            problems = opened.verify()
        except DamagedIndexError as exc:  # what verify's rules do not read past: a problem
            problems = [str(exc)]
        return {
            "problems": problems,
            "entries": len(opened),
            "tables": opened.layout.tables,
            "drop_records": opened.drop_count(),
        }


def cmd_compact(args: argparse.Namespace, out: Output) -> int:
    """A Redis index into a new LMDB directory, or (DEST a Redis URL) an LMDB index into a new
    Redis index under ``--key``."""
    source, dest = args.index, args.dest
    if isinstance(source, RedisTarget):
        with new_directory(dest) as staging, open_redis(source) as index:
            copied = index.compact(staging)
        shown = f"{source} key {source.key}"
    else:
        assert isinstance(dest, RedisTarget)
        try:
            with SimhashIndex(source, readonly=True, create=False) as lmdb_index:
                redis_index = RedisIndex(
                    dest.url,
                    dest.key,
                    layout=lmdb_index.layout,
                    numbers=lmdb_index.numbers,
                    cluster=dest.cluster,
                    options=dest.options,
                )
                try:
                    if len(redis_index):
                        raise CliError(f"{dest} key {dest.key} holds an index already")
                    try:
                        redis_index.check_eviction()
                        copied = redis_index.load(lmdb_index)
                    except BaseException:
                        # an interrupted or failed load leaves no index of fewer entries
                        with contextlib.suppress(Exception):
                            redis_index.drop()
                        raise
                finally:
                    redis_index.close()
        except (OSError, ValueError) as exc:
            raise CliError(str(exc)) from exc
        except redis_errors() as exc:
            raise CliError(f"cannot use the Redis server at {dest}: {exc}") from exc
        shown, dest = source, f"{dest} key {dest.key}"
    # the Redis end's URL (without its password) and key, as in the line
    obj = {"source": shown, "dest": str(dest), "entries": copied}
    out.write_object(obj, [("copied", f"{copied:,} entries: {shown} -> {dest}")])
    return 0
