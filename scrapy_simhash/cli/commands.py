"""The subcommands of ``scrapy-simhash``: each takes the parsed arguments and an
:class:`Output` and returns the exit code."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import logging
import math
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import lmdb

from ..index import Drop, Group, Match, SimhashIndex
from ..index.records import signed
from ..text.decode import looks_binary
from ..text.extract import extract_page, extract_text
from ..text.fingerprint import Fingerprinter
from ..text.signature import PageSignature, page_signature
from . import redis_target
from .check import verify_in_child
from .destination import new_directory
from .open_index import check_path, lmdb_reason, open_index
from .output import (
    CliError,
    CliUsage,
    Output,
    Progress,
    Terminated,
    format_fp,
    iso_time,
    parse_fp,
    repeated_sentences,
)
from .redis_target import RedisTarget

logger = logging.getLogger(__name__)

#: Stored fingerprints probed by ``info`` to measure the candidates scanned per probe.
PROBE_SAMPLE = 200

MATCH_COLUMNS = [("distance", 8), ("fingerprint", 16), ("seen", 20), ("url", 0)]
ENTRY_COLUMNS = [("fingerprint", 16), ("seen", 20), ("url", 0)]
COPY_COLUMNS = [("distance", 8), ("fingerprint", 16), ("dropped", 20), ("url", 0)]


def entry_row(match: Match) -> dict[str, Any]:
    """A stored entry as output: URL (the index key), fingerprint, first seen, its record."""
    record = {k: v for k, v in match.record.items() if k != "seen"}
    if record.get("url") == match.key:
        del record["url"]
    row: dict[str, Any] = {
        "url": match.key,
        "fingerprint": format_fp(match.fingerprint),
        "seen": iso_time(match.record.get("seen")),
    }
    if record:
        row["record"] = record
    return row


def match_row(match: Match) -> dict[str, Any]:
    return {"distance": match.distance, "rule": match.rule, **entry_row(match)}


def drop_row(drop: Drop) -> dict[str, Any]:
    """A drop record as output: URL, fingerprint, when, the kept URL and the distance."""
    record = {k: v for k, v in drop.record.items() if not (k == "url" and v == drop.key)}
    row: dict[str, Any] = {
        "url": drop.key,
        "fingerprint": format_fp(drop.fingerprint),
        "dropped": iso_time(drop.seen),
        "duplicate_of": drop.kept,
        "distance": drop.distance,
        "rule": drop.rule,
    }
    if record:
        row["record"] = record
    return row


def _distance(index: SimhashIndex, k: int | None) -> int:
    if k is None:
        return index.max_distance
    if not 0 <= k <= index.max_distance:
        raise CliError(
            f"-k must be between 0 and {index.max_distance} (the k this index was built with),"
            f" got {k}"
        )
    return k


# -- info ----------------------------------------------------------------------------------


def _seen_range(index: SimhashIndex, total: int) -> tuple[Match | None, Match | None]:
    """The oldest and newest entries (one streamed scan of the record headers)."""
    progress = Progress("info: scanning", total)
    try:
        return index.seen_range(progress.step)
    finally:
        progress.close()


def cmd_info(args: argparse.Namespace, out: Output) -> int:
    if isinstance(args.index, RedisTarget):
        return redis_target.cmd_info(args, out, _when)
    with open_index(args.index) as index:
        # Documents are stored in hash order, so the first ones are a fair sample.
        sample = [m.fingerprint for m in itertools.islice(index.items(), PROBE_SAMPLE)]
        index.query_many(sample)
        stats = index.stats(seen=False)  # the scan below finds the entries, not just times
        oldest, newest = _seen_range(index, stats["entries"])
    used = stats["map_used"] / stats["map_size"] if stats["map_size"] else 0.0
    info = {
        "path": os.path.abspath(args.index),
        "entries": stats["entries"],
        "fingerprints": stats["fingerprints"],
        "k": stats["max_distance"],
        "layout": stats["layout"],
        "layout_name": index.layout.name,
        "tables": stats["tables"],
        "blocks": stats["blocks"],
        "sub_blocks": stats["sub_blocks"],
        "prefix_bits": stats["prefix_bits"],
        "recent_tables": stats["recent_tables"],
        "recent_fingerprints": stats["recent_fingerprints"],
        "recent_limit": stats["recent_limit"],
        "merging": stats["merging"],
        "merged_tables": stats["merged_tables"],
        "fingerprint_version": stats["fingerprint_version"],
        "numbers": stats["numbers"],
        "format_version": stats["format_version"],
        "bytes_on_disk": stats["bytes_on_disk"],
        "file_size": stats["file_size"],
        "map_size": stats["map_size"],
        "map_used": stats["map_used"],
        "map_used_fraction": used,
        "candidates_per_probe": stats["candidates_per_probe"],
        "candidates_per_probe_sample": len(sample),
        "expected_candidates_per_probe": stats["expected_candidates_per_probe"],
        "oldest": entry_row(oldest) if oldest else None,
        "newest": entry_row(newest) if newest else None,
        "drop_records": stats["drops"],
        "repeated_sentences": stats["repeated_sentences"],
    }
    prefix = sorted(set(stats["prefix_bits"]))
    lines = [
        ("path", info["path"]),
        ("entries", info["entries"]),
        ("fingerprints", f"{info['fingerprints']:,} distinct"),
        ("k", info["k"]),
        ("layout", f"{index.layout.name}: {info['layout']}"),
        ("tables", info["tables"]),
        (
            "prefix bits",
            "-".join(map(str, (prefix[0], prefix[-1]))) if len(prefix) > 1 else prefix[0],
        ),
        *([("recent tables", _recent(info))] if info["recent_tables"] else []),
        ("fingerprint version", info["fingerprint_version"]),
        ("numbers", "features" if info.get("numbers", True) else "left out (SIMHASH_NUMBERS)"),
        ("format version", info["format_version"]),
        ("bytes on disk", f"{_size(info['bytes_on_disk'])} (data.mdb {_size(info['file_size'])})"),
        ("map used", f"{_size(info['map_used'])} of {_size(info['map_size'])} ({_percent(used)})"),
        ("candidates/probe", _candidates(info)),
        ("oldest", _when(oldest)),
        ("newest", _when(newest)),
        ("drop records", f"{info['drop_records']:,} pages dropped as near duplicates"),
        ("repeated sentences", repeated_sentences(info["repeated_sentences"])),
    ]
    out.write_object(info, lines)
    return 0


def _recent(info: dict[str, Any]) -> str:
    """The recent tables' line of ``info``: what they hold, and a merge in progress."""
    text = (
        f"{info['recent_tables']}, holding {info['recent_fingerprints']:,} fingerprints"
        f" (merged into the main tables from {info['recent_limit']:,})"
    )
    if info["merging"]:
        text += (
            f"; merging {info['merging']:,}, {info['merged_tables']} of {info['tables']}"
            " tables done"
        )
    return text


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{count:,} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _percent(fraction: float) -> str:
    return f"{fraction:.2%}" if fraction >= 0.0001 or not fraction else "<0.01%"


def _candidates(info: dict[str, Any]) -> str:
    expected = f"{info['expected_candidates_per_probe']:.3g} expected for random fingerprints"
    if info["candidates_per_probe"] is None:
        return expected
    measured = info["candidates_per_probe"]
    return f"{measured:.3g} measured on {info['candidates_per_probe_sample']} entries, {expected}"


def _when(match: Match | None) -> str | None:
    return f"{iso_time(match.record['seen'])}  {match.key}" if match else None


# -- lookup, explain -----------------------------------------------------------------------


def _check_url(url: str, name: str) -> None:
    """A URL given as an index key (``name`` is its argument): a usage error unless it is a
    non-empty string UTF-8 can hold (a lone surrogate stands for bytes of another encoding)."""
    if not url:
        raise CliUsage(f"{name} must not be empty")
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raise CliUsage(f"{name} {url!r} is not valid UTF-8") from None


def _not_stored(args: argparse.Namespace) -> CliError:
    return CliError(
        f"no entry or drop record for {args.url} in {args.index} (a drop is recorded only"
        " with SIMHASH_DROP_RECORDS, the oldest evicted: try lookup --html with its page)"
    )


def _query_signature(
    args: argparse.Namespace, index: SimhashIndex
) -> tuple[int | PageSignature, int]:
    """The fingerprint looked up, or the page signature when there is one (a page, or a
    URL stored with one); and, of an ``--html`` page that shows several posts whole (a
    listing, which a crawl skips), its number of posts (else 0)."""
    if args.url is not None:
        found = index.get(args.url) or index.dropped(args.url)
        if found is None:
            raise _not_stored(args)
        if isinstance(found, Match):
            return index.signature(args.url) or found.fingerprint, 0
        return found.fingerprint, 0
    if args.html is not None or args.text is not None:
        path = args.html if args.html is not None else args.text
        numbers = getattr(index, "numbers", True)  # as the index's pages were signed
        html = args.html is not None
        signature, _, reason, posts = _sign_file(path, html, numbers=numbers, listings=html)
        if signature is None:
            raise CliError(f"{path}: {reason}, no fingerprint")
        return signature, posts
    return parse_fp(args.fingerprint), 0


def cmd_lookup(args: argparse.Namespace, out: Output) -> int:
    given = [args.fingerprint, args.url, args.html, args.text]
    if sum(x is not None for x in given) != 1:
        raise CliUsage("give one of FINGERPRINT, --url, --html or --text")
    if args.url is not None:
        _check_url(args.url, "--url")
    with open_index(args.index) as index:
        signature, posts = _query_signature(args, index)
        fingerprint = signed(signature)[0]
        k = _distance(index, args.k)
        matches = index.query(fingerprint, k)
        # The page the crawl's rule would drop it against, when the sentence rule finds it:
        # of a URL dropped by that rule (its record keeps no sentences), the page it was
        # dropped against, as its drop record says.
        decided = index.decide(signature, args.url)
        if args.url is not None and decided is None and index.get(args.url) is None:
            decided = _dropped_by_sentences(index, args.url)
        if decided is not None and decided.rule == "hamming":
            decided = None  # within k: among the matches already
        if decided is not None and all(m.key != decided.key for m in matches):
            matches.append(decided)
    count = out.write_rows(MATCH_COLUMNS, (match_row(m) for m in matches))
    if decided is not None:
        out.note(f"{decided.key} shares its long sentences: a near duplicate by the sentence rule")
    if not count:
        out.note(f"no stored page within {k} bits of {format_fp(fingerprint)}")
    if posts:
        out.note(_listing_note(args.html, posts))
    return 0


def _listing_note(path: str, posts: int) -> str:
    return (
        f"{path} shows {posts} posts whole: a listing, which a crawl lets through unchecked "
        "and unstored (SIMHASH_SKIP_LISTINGS); its text is one of its posts"
    )


def _dropped_by_sentences(index: SimhashIndex, url: str) -> Match | None:
    """The stored page a URL was dropped against by the sentence rule, at the distance its
    drop record gives (None for a drop by distance, or against a page no longer stored)."""
    drop = index.dropped(url)
    if drop is None or drop.rule == "hamming" or drop.kept is None:
        return None
    kept = index.get(drop.kept)
    if kept is None:
        return None
    return dataclasses.replace(kept, distance=drop.distance, rule=drop.rule)


def cmd_explain(args: argparse.Namespace, out: Output) -> int:
    _check_url(args.url, "URL")
    with open_index(args.index) as index:
        k = _distance(index, args.k)  # (checked for a dropped page too)
        entry = index.get(args.url)
        if entry is None:
            drop = index.dropped(args.url)
            if drop is None:
                raise _not_stored(args)
            _explain_drop(drop, out)
            return 0
        near = [m for m in index.query(entry.fingerprint, k) if m.key != entry.key]
        copies = index.drops_of(entry.key)
    obj = {
        **entry_row(entry),
        "k": k,
        "matches": [match_row(m) for m in near],
        "dropped_copies": [drop_row(d) for d in copies],
    }
    lines = [("url", entry.key), ("fingerprint", obj["fingerprint"]), ("seen", obj["seen"])]
    if out.fmt != "table":
        out.write_object(obj, lines)
        return 0
    lines.append(("within k", f"{len(near)} other stored page(s) within {k} bits"))
    dry = sum(d.dry_run for d in copies)
    said = f"{len(copies)} page(s) dropped as its near duplicates"
    if dry:
        said += f" ({dry} of them recorded in a dry run, kept)"
    lines.append(("dropped copies", said))
    out.write_object(obj, lines)
    if near:
        out.stream.write("\n")
        out.write_rows(MATCH_COLUMNS, obj["matches"])
    if copies:
        out.stream.write("\n")
        rows = [
            {**row, "url": f"{row['url']} (dry run, kept)"} if d.dry_run else row
            for d, row in zip(copies, obj["dropped_copies"], strict=True)
        ]
        out.write_rows(COPY_COLUMNS, rows)
    return 0


def _explain_drop(drop: Drop, out: Output) -> None:
    """``explain`` for a URL that was dropped: when, of which page, at what distance."""
    row = drop_row(drop)
    kept = "a page no longer stored" if drop.kept is None else drop.kept
    action = "recorded in a dry run (kept)" if drop.dry_run else "dropped"
    lines = [
        ("url", drop.key),
        (
            action,
            f"{row['dropped']}: duplicate of {kept} at distance {drop.distance}"
            + ("" if drop.rule == "hamming" else ", by the sentence rule"),
        ),
        ("fingerprint", row["fingerprint"]),
    ]
    if drop.record.get("title"):
        lines.append(("title", drop.record["title"]))
    out.write_object(row, lines)


# -- dump, clusters ------------------------------------------------------------------------


def cmd_dump(args: argparse.Namespace, out: Output) -> int:
    with open_index(args.index) as index:
        rows = (entry_row(m) for m in index.items())
        out.write_rows(ENTRY_COLUMNS, Progress("dump", len(index), streaming=True).track(rows))
    return 0


def _cluster_rows(clusters: list[Group], table: bool) -> Iterator[dict[str, Any]]:
    for number, group in enumerate(clusters, 1):
        size = len(group)
        if not table:
            dropped = [drop_row(d) for d in group.dropped]
            yield {"cluster": number, "size": size, "urls": group.kept, "dropped": dropped}
            continue
        copies: dict[str | None, list[Drop]] = {}
        for drop in group.dropped:
            copies.setdefault(drop.kept, []).append(drop)
        for key in group.kept:
            yield {"cluster": number, "size": size, "page": "kept", "url": key}
            for drop in copies.get(key, ()):
                # A copy recorded in a dry run was kept: not said as dropped.
                action = "dry run" if drop.dry_run else "dropped"
                page = f"{action} {drop.distance}"
                yield {"cluster": number, "size": size, "page": page, "url": drop.key}


def cmd_clusters(args: argparse.Namespace, out: Output) -> int:
    progress = Progress("clusters")
    with open_index(args.index) as index:
        k = _distance(index, args.k)
        progress.message(f"pairing {len(index):,} entries within {k} bits")
        started = time.perf_counter()
        clusters = index.groups(k)
        progress.close()
    logger.debug("clusters: %d in %.2f s", len(clusters), time.perf_counter() - started)
    columns = [("cluster", 7), ("size", 6), ("page", 10), ("url", 0)]
    out.write_rows(columns, _cluster_rows(clusters, out.fmt == "table"))
    if not clusters:
        out.note(f"no near-duplicates within {k} bits and no drop records")
    return 0


# -- fingerprint ---------------------------------------------------------------------------


def _sign_file(
    path: str, html: bool, numbers: bool = True, listings: bool = False
) -> tuple[PageSignature | None, int, str | None, int]:
    """(page signature or None, content words, why there is none, posts), numbers features
    unless ``numbers`` is False; with ``listings``, posts is the number of posts an HTML page
    shows whole when it is a listing (else 0), and the page is signed all the same, by the
    text extraction gives it."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not html and looks_binary(data):
        return None, 0, "not text (binary bytes)", 0
    posts = 0
    if not html:
        text: str | None = data.decode("utf-8", errors="replace")
    elif listings:
        page = extract_page(data, listings=True)
        posts = page.posts
        # a listing is not extracted by the look: extracted now, as the crawl would without it
        text = extract_text(data) if page.is_listing else page.text
    else:
        text = extract_text(data)
    if text is None:
        return None, 0, "no main text", posts
    fingerprinter = Fingerprinter(numbers=numbers)
    words = len(fingerprinter.content_words(text))
    signature = page_signature(text, fingerprinter)
    if signature is None:
        needed = fingerprinter.min_words
        return None, words, f"too short ({words} content words, {needed} needed)", posts
    return signature, words, None, posts


def _fingerprint_rows(
    paths: Iterable[str], html: bool, listings: list[tuple[str, int]]
) -> Iterator[dict[str, Any]]:
    """A row for each file; ``listings`` gets each HTML page that shows several posts whole
    (a listing, which a crawl skips) and its number of posts."""
    for path in paths:
        signature, words, reason, posts = _sign_file(path, html, listings=html)
        if posts:
            listings.append((path, posts))
        yield {
            "file": path,
            "fingerprint": None if signature is None else format_fp(signature.fingerprint),
            "words": words,
            "reason": reason,
            "posts": posts,
        }


def cmd_fingerprint(args: argparse.Namespace, out: Output) -> int:
    for path in args.files:  # fail before any output
        if not os.path.exists(path):
            raise CliError(f"no such file: {path}")
        if os.path.isdir(path):
            raise CliError(f"{path} is a directory")
        if not os.access(path, os.R_OK):
            raise CliError(f"cannot read {path}: permission denied")
    columns = [("fingerprint", 16), ("words", 7), ("file", 0)]
    listings: list[tuple[str, int]] = []
    out.write_rows(columns, _fingerprint_rows(args.files, args.html, listings))
    for path, posts in listings:
        out.note(_listing_note(path, posts))
    return 0


# -- remove, verify, compact ---------------------------------------------------------------


def _to_remove(
    index: SimhashIndex, args: argparse.Namespace
) -> tuple[list[str], list[str], list[str]]:
    """What ``remove`` takes out of ``index``: the keys of the entries (the URLs given that
    it holds, or those last seen before ``--older-than`` days ago), the drop records (those
    of the URLs given, or of pages dropped before then, and those of the copies dropped
    against an entry removed), and the URLs given that it holds neither way."""
    missing: list[str] = []
    if args.url is not None:
        stored = {url: url in index for url in args.url}
        keys = [url for url, found in stored.items() if found]
        drops = [u for u, found in stored.items() if not found and index.dropped(u)]
        missing = [u for u, found in stored.items() if not found and u not in drops]
    else:
        cutoff = time.time() - args.older_than * 86400
        entries = Progress("remove: scanning", len(index)).track(index.items())
        keys = [m.key for m in entries if m.record["seen"] < cutoff]
        drops = [d.key for d in index.drops() if d.seen < cutoff]
    copies = (d.key for key in keys for d in index.drops_of(key))
    return keys, list(dict.fromkeys([*drops, *copies])), missing


def cmd_remove(args: argparse.Namespace, out: Output) -> int:
    if (args.url is None) == (args.older_than is None):
        raise CliUsage("give --url or --older-than (one of them)")
    if args.older_than is not None and not (
        math.isfinite(args.older_than) and args.older_than >= 0
    ):
        raise CliUsage(f"--older-than must be a number of days >= 0, got {args.older_than}")
    for url in args.url or ():
        _check_url(url, "--url")
    with open_index(args.index, write=not args.dry_run) as index:
        keys, drops, missing = _to_remove(index, args)
        if not args.dry_run:
            try:
                with index.batch():
                    for key in Progress("remove", len(keys)).track(keys):
                        index.remove(key)  # with the drop records against it
                    for key in drops:
                        index.forget_drop(key)
            except (KeyboardInterrupt, Terminated) as exc:
                raise type(exc)(
                    "what was removed before it stays removed; the same command again "
                    "removes the rest"
                ) from None
        # What is left, or in a dry run what would be (every key and drop found is there).
        left = len(index) - (len(keys) if args.dry_run else 0)
        drops_left = index.drop_count() - (len(drops) if args.dry_run else 0)
    verb = "would remove" if args.dry_run else "removed"
    obj = {
        "removed": keys,
        "count": len(keys),
        "left": left,
        "dry_run": args.dry_run,
        "drop_records_removed": drops,
        "drop_records_left": drops_left,
    }
    lines = [(verb, f"{len(keys):,} entries, {left:,} left")]
    if drops or drops_left:
        lines.append(("drop records", f"{len(drops):,} {verb}, {drops_left:,} left"))
    out.write_object(obj, lines)
    if missing:
        raise CliError(f"no entry for {', '.join(missing)} in {args.index}")
    return 0


def cmd_verify(args: argparse.Namespace, out: Output) -> int:
    if not isinstance(args.index, RedisTarget):
        check_path(args.index)
    progress = Progress("verify")
    progress.message("checking every entry and table")
    # The open and the scan run in a child process: damage that crashes LMDB is reported.
    try:
        if isinstance(args.index, RedisTarget):
            result = redis_target.verify(args.index)
        else:
            result = verify_in_child(args.index)
    finally:
        progress.close()
    problems = result["problems"]
    entries, tables = result["entries"], result["tables"]
    drops = result.get("drop_records")
    obj = {
        "ok": not problems,
        "entries": entries,
        "tables": tables,
        "drop_records": drops,
        "problems": problems,
    }
    lines: list[tuple[str, Any]] = [("problem", p) for p in problems]
    if not problems:
        lines = [("ok", f"{entries:,} entries, {tables} tables and {drops:,} drop records agree")]
    out.write_object(obj, lines)
    if problems:
        raise CliError(f"{args.index} is damaged: {len(problems)} problem(s) found")
    return 0


def cmd_compact(args: argparse.Namespace, out: Output) -> int:
    if isinstance(args.dest, RedisTarget) and not isinstance(args.index, RedisTarget):
        # The LMDB index copied to Redis opened as every command opens one: a folder that is
        # no index, or a damaged one, said in one line (LMDB's errors while copying too).
        with open_index(args.index):
            return redis_target.cmd_compact(args, out)
    if isinstance(args.index, RedisTarget):
        return redis_target.cmd_compact(args, out)
    dest = args.dest
    source = os.path.realpath(args.index)
    if os.path.commonpath([source, os.path.realpath(dest)]) == source:
        raise CliError(f"{dest} is inside the index {args.index}: compact into another folder")
    # DEST checked new or empty first, as the copy's place
    with new_directory(dest) as staging, open_index(args.index) as index:
        before = index.stats()["file_size"]
        try:
            index.compact(staging)
        except (lmdb.CorruptedError, lmdb.PageNotFoundError):
            raise  # the index read is damaged
        except lmdb.Error as exc:  # the copy cannot be written: a full disk, a quota
            raise CliError(f"cannot write the copy to {dest}: {lmdb_reason(exc)}") from exc
    after = os.path.getsize(os.path.join(dest, "data.mdb"))
    obj = {"source": args.index, "dest": dest, "bytes_before": before, "bytes_after": after}
    out.write_object(
        obj, [("compacted", f"{args.index} ({_size(before)}) -> {dest} ({_size(after)})")]
    )
    return 0
