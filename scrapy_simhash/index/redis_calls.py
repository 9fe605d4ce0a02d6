"""Calls of an index's Lua script (``redis_script.lua``) on a Redis server: the script's
arguments, one script or pipelines of them, and their answers, for a
:class:`.redis_index.RedisIndex`.

A call's arguments are a head (:func:`head`: the mode, the index's token, k, the bucket
split, the tables' inverse permutations, the drop records' bound, the rules' names and, for
the modes that decide, the rule's parameters, :data:`RULE_FIELDS`), then one item or up to
:data:`BATCH` items (:func:`item_args`, :func:`store_args`), decided one after the other in
the same run. A script is called by EVALSHA and loaded again on NOSCRIPT. A ``check`` or an
``insert`` carries the record header the client read, and the script refuses (answers -1)
a document another process changed meanwhile: :func:`check_or_insert` and
:func:`pipelined` read it again and retry. Errors the script raises for an index reset,
replaced or lost since it was opened, or damaged, are :class:`.meta.IndexMismatchError` and
:class:`.records.DamagedIndexError`.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator, Sequence
from dataclasses import fields
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..text.rule import RULES, Rule
from .documents import Match
from .meta import IndexMismatchError
from .records import DamagedIndexError, SignedItem, decode_doc, doc_id, sealed
from .redis_client import redis_errors
from .sentences import site_of

if TYPE_CHECKING:
    from .redis_index import RedisIndex

#: Documents sent per pipeline by :meth:`.RedisIndex.insert_many`, and fields read a command
#: when an index's hashes and drop records are read in full.
CHUNK = 1000
#: How many times a check is made again after another process changed the same document.
AGAIN = 20
#: The first-seen time in a document record's header, after the fingerprint.
_SEEN = struct.Struct(">d")
#: Items a script takes at most (``check_and_insert_many``, ``insert_many``, ``query_many``):
#: a script's fixed cost (its arguments, its set-up) is paid once for them all.
BATCH = 64
#: The script's modes that apply the rule (the others are sent without its parameters).
_DECIDING = frozenset({"check", "decide"})
#: The place (0-based) of what mode ``drop`` records among an item's arguments.
DROPPING = 7

SCRIPT = resources.files(__package__).joinpath("redis_script.lua").read_text()
#: The rule's parameters the script reads (by name): every field of :class:`Rule`.
RULE_FIELDS = (
    "shared",
    "shared_share",
    "near",
    "length",
    "hamming_length",
    "contained",
    "contained_length",
    "contained_runs",
    "sentences_veto",
    "veto_distance",
    "veto_runs",
    "veto_length",
    "shingles_distance",
    "runs_near",
    "runs_same",
    "numbers_min",
    "numbers_own",
    "numbers_own_both",
    "numbers_dense",
    "numbers_share",
    "numbers_held",
    "numbers_ratio",
    "numbers_length",
    "numbers_density",
    "guard",
    "block_shared",
    "block_distance",
    "block_runs",
    "block_far_runs",
    "apart_distance",
    "apart_runs",
    "apart_length",
)


def rule_args(rule: Rule) -> list[str]:
    """The rule's parameters as the script's name, value arguments (floats by ``repr``, which
    reads back as the same double)."""
    if set(RULE_FIELDS) != {f.name for f in fields(rule)}:
        raise ValueError(f"the Redis script knows the rule fields {RULE_FIELDS}, not {rule}")
    return [part for name in RULE_FIELDS for part in (name, repr(getattr(rule, name)))]


def _moved(exc: BaseException) -> bool:
    """Whether a node refused a command because another master serves its slot."""
    from redis.exceptions import MovedError

    return isinstance(exc, MovedError)


def distinct_runs(items: Sequence[SignedItem]) -> Iterator[list[SignedItem]]:
    """``items`` cut, in their order, into runs that repeat no key: each run as long as it
    can be (a run ends before the first key it holds already)."""
    run: list[SignedItem] = []
    keys: set[str] = set()
    for item in items:
        if item[1] in keys:
            yield run
            run, keys = [], set()
        run.append(item)
        keys.add(item[1])
    if run:
        yield run


# -- one script ----------------------------------------------------------------------------


def call(index: RedisIndex, args: list[Any], client: Any = None) -> Any:
    """The script run with ``args`` on the index's keys (sent on ``client``, a pipeline, if
    given)."""
    try:
        return index._script(keys=index._keys, args=args, client=client)
    except redis_errors() as exc:
        changed(index, exc)
        raise


def changed(index: RedisIndex, exc: BaseException) -> None:
    """Raise what a script's error means for the index, if it is one of the script's own:
    :class:`IndexMismatchError` (the index reset, replaced or lost) or
    :class:`DamagedIndexError`."""
    if "SIMHASHCHANGED" in str(exc):
        raise IndexMismatchError(f"index {index.path}: {exc}") from None
    if "SIMHASHDAMAGED" in str(exc):
        raise DamagedIndexError(f"index damaged: {exc}") from None


def head(index: RedisIndex, mode: str, k: int) -> list[Any]:
    """The script's arguments before its items: mode, the index's token, ``k``, the
    bucket split, the tables' inverse permutations, the drop records' bound, the rules'
    names and the rule's parameters."""
    split = index._split
    if index._rule_args[0] is not index.rule:
        index._rule_args = (index.rule, rule_args(index.rule))
    # only the modes that decide read the rule: the others go without its arguments (a
    # script's argument costs the client and the server alike)
    rule = index._rule_args[1] if mode in _DECIDING else []
    return [
        mode,
        index._token,
        k,
        split.width,
        (split.bits + 7) // 8,
        split.bits,
        index._moves,
        index.drop_records,
        " ".join(RULES),
        len(rule) // 2,
        *rule,
    ]


def item_args(
    index: RedisIndex,
    fingerprint: int | None,
    held: bytes = b"",
    record: bytes = b"",
    docid: bytes = b"",
    signature: bytes = b"",
    seen: float = 0.0,
    dropping: bytes = b"",
    site: bytes = b"",
) -> list[Any]:
    """An item's arguments (the script's ``ITEM``, 9): ``docid``, ``held`` (the record
    header the client read), ``record``, the fingerprint, the tables' part packed in one
    string (the query's field, value and prefix range in every table, and the field and
    value of the ``held`` fingerprint), the page's sealed ``signature``, the time ``seen``
    of a drop, what mode ``drop`` records (``dropping``) and the page's ``site``
    (:func:`.sentences.site_of`)."""
    split = index._split
    w, fb, bits = split.width, (split.bits + 7) // 8, split.bits
    vmask = (1 << (64 - bits)) - 1
    fshift = 64 - bits
    parts: list[bytes] = []
    old = int.from_bytes(held[:8], "big") if held else None
    nothing = bytes(fb + w + 8)
    for forward, (low, head) in zip(index._forward, index._ranges, strict=True):
        if fingerprint is None:
            parts.append(nothing)
        else:
            permuted = forward(fingerprint)
            value = permuted & vmask
            start = (value >> low) << low
            parts += [
                (permuted >> fshift).to_bytes(fb, "big"),
                value.to_bytes(w, "big"),
                (start >> head).to_bytes(4, "big"),
                ((start | ((1 << low) - 1)) >> head).to_bytes(4, "big"),
            ]
        if old is None:
            parts.append(nothing[: fb + w])
        else:
            permuted = forward(old)
            parts += [
                (permuted >> fshift).to_bytes(fb, "big"),
                (permuted & vmask).to_bytes(w, "big"),
            ]
    fp = b"" if fingerprint is None else fingerprint.to_bytes(8, "big")
    parts_blob = b"".join(parts)
    return [docid, held, record, fp, parts_blob, signature, _SEEN.pack(seen), dropping, site]


def store_args(index: RedisIndex, item: SignedItem, now: float, held: bytes) -> list[Any]:
    """The arguments of an item to store (``check``, ``insert``, ``drop``): its record, first
    seen ``now`` unless it says when or replaces a document whose header ``held`` says when,
    and its sealed signature and site when it has a signature."""
    fingerprint, key, entry, signature = item
    if 0 < len(held) < 16:  # the stored record is shorter than a header: cut by damage
        raise DamagedIndexError(f"index damaged: a document record of {len(held)} bytes")
    seen = now if entry.seen is None else entry.seen
    if held and entry.seen is None:
        seen = _SEEN.unpack_from(held, 8)[0]  # a replaced key keeps its first-seen time
    docid = doc_id(key)
    record = entry.data(fingerprint, seen)
    packed = b"" if signature is None else sealed(signature.pack(), docid)
    dropped = now if entry.seen is None else entry.seen  # a drop's time, as on LMDB
    # the site serves the sentence rule only: a bare fingerprint's script never reads it
    site = b"" if signature is None else site_of(key)
    return item_args(index, fingerprint, held, record, docid, packed, dropped, site=site)


def send(
    index: RedisIndex, mode: str, k: int, items: Sequence[list[Any]], client: Any = None
) -> Any:
    """One script of ``mode`` for ``items`` (sent on ``client``, a pipeline, if given)."""
    args = head(index, mode, k)
    for item in items:
        args += item
    return call(index, args, client)


def one(index: RedisIndex, mode: str, k: int, item: list[Any]) -> Any:
    """The answer of one item's script."""
    return answers(send(index, mode, k, [item]))[0]


# -- answers -------------------------------------------------------------------------------


def answers(reply: Sequence[Any]) -> list[Any]:
    """The items' answers of a script's reply; DamagedIndexError when the script met a
    damaged page signature (the items answered before it were applied)."""
    if len(reply) > 1:
        raise DamagedIndexError(f"index damaged: {bytes(reply[1]).decode()}")
    return list(reply[0])


def match_of(answer: Sequence[Any]) -> Match | None:
    """The match of a ``check`` or ``decide`` answer: ``[1, record, distance, rule]``, or
    None for ``[0, ...]``."""
    if int(answer[0]) != 1:
        return None
    fingerprint, key, record = decode_doc(bytes(answer[1]))
    return Match(fingerprint, key, int(answer[2]), record, bytes(answer[3]).decode())


def probed(index: RedisIndex, fingerprint: int, flat: Sequence[Any]) -> dict[int, int]:
    """{fingerprint: distance} of a probe's answer (table, permuted value, distance)."""
    found = {}
    shift = 64 - index._split.bits
    for i in range(0, len(flat), 3):
        table = int(flat[i])
        high = (index._forward[table](fingerprint) >> shift) << shift if shift < 64 else 0
        permuted = high | int.from_bytes(flat[i + 1], "big")
        found[index._inverse[table](permuted)] = int(flat[i + 2])
    return found


def found_documents(flat: Sequence[Any]) -> list[Match]:
    """The matches of a ``query`` answer (record, distance, ...), nearest first, then by
    key."""
    matches = []
    for i in range(0, len(flat), 2):
        fingerprint, key, record = decode_doc(bytes(flat[i]))
        matches.append(Match(fingerprint, key, int(flat[i + 1]), record))
    matches.sort(key=lambda m: (m.distance, m.key))
    return matches


# -- pipelines -----------------------------------------------------------------------------


def pipeline(index: RedisIndex) -> Any:
    """A pipeline (not a transaction) to the server holding the index: on a cluster, the
    node serving the index's slot (redis-py's cluster pipelines refuse scripts)."""
    client = index.client
    if index.cluster:
        client = client.get_node_from_key(index._meta).redis_connection
    return client.pipeline(transaction=False)


def pipelined_scripts(index: RedisIndex, mode: str, k: int, items: list[list[Any]]) -> list[Any]:
    """The replies of scripts of ``mode`` for ``items``, :data:`BATCH` items a script, in
    one pipeline. On a cluster whose slot moved to another master since the client last
    routed a command there (MOVED: the pipeline goes to a node, not through the cluster
    client, which would learn of it), the client reads the slots again and the pipeline
    is sent once more, to the new owner (a node refuses a script of a slot it does not
    serve before the script runs; an item stored by a script run before a move mid-pipeline is
    refused as changed the second time, and decided again alone)."""
    for again in (False, True):
        pipe = pipeline(index)
        for start in range(0, len(items), BATCH):
            send(index, mode, k, items[start : start + BATCH], pipe)
        try:
            return list(pipe.execute())
        except redis_errors() as exc:
            if index.cluster and not again and _moved(exc):
                index.client.nodes_manager.initialize()
                continue
            changed(index, exc)
            raise
    raise AssertionError("unreachable")


# -- checks and inserts, again while another process changes a document -------------------


def check_or_insert(index: RedisIndex, mode: str, item: SignedItem) -> Match | None:
    """``check`` or ``insert`` one document, again while another process changes it."""
    index._writable()
    held = b""
    for _ in range(AGAIN):
        answer = one(index, mode, index.max_distance, store_args(index, item, time.time(), held))
        if int(answer[0]) == -1:  # the document changed since its header was read
            held = bytes(answer[1])
            continue
        return match_of(answer)
    raise RuntimeError(f"index {index.path}: {item[1]!r} kept changing under {mode}")


def pipelined(index: RedisIndex, mode: str, checked: list[SignedItem]) -> list[Match | None]:
    """Scripts of ``mode`` for ``checked`` items, decided in their order: a run of
    distinct keys at a time (:func:`distinct_runs`), each in one pipeline.

    A key's script carries the record header the client read, and refuses a document
    changed since. A key repeated in one pipeline would carry a header read before its
    first occurrence was stored: refused, and decided again only after every other item,
    out of order (a near duplicate after it would be admitted first). So the second
    occurrence waits for the next run, whose headers are read after this one is
    decided. Every page signature is packed first: one that cannot be stored fails the
    call before any run is sent (as on LMDB, whose transaction writes nothing then)."""
    for item in checked:
        if item[3] is not None:
            item[3].pack()
    out: list[Match | None] = []
    for run in distinct_runs(checked):
        out += _pipelined_run(index, mode, run)
    return out


def _pipelined_run(index: RedisIndex, mode: str, checked: list[SignedItem]) -> list[Match | None]:
    """Scripts of ``mode`` for ``checked`` items of distinct keys, :data:`BATCH` items a
    script, in one pipeline, the documents' current headers read first (one round trip).
    An item refused because another process changed its document meanwhile is decided
    again alone."""
    docids = [doc_id(item[1]) for item in checked]
    held = [b"" if d is None else bytes(d[:16]) for d in index.client.hmget(index._docs, docids)]
    now = time.time()
    items = [store_args(index, item, now, h) for item, h in zip(checked, held, strict=True)]
    replies = pipelined_scripts(index, mode, index.max_distance, items)
    answered = [answer for reply in replies for answer in answers(reply)]
    out: list[Match | None] = []
    for item, answer in zip(checked, answered, strict=True):
        if int(answer[0]) == -1:  # another process changed the document meanwhile
            out.append(check_or_insert(index, mode, item))
        else:
            out.append(match_of(answer))
    return out
