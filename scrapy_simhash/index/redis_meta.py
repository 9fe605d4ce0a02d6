"""An index on a Redis server's parameters: chosen at creation, stored in ``{KEY}:meta``,
checked at every open (as :mod:`.meta` has them for LMDB).

``meta`` holds the format and fingerprint versions, whether numbers are features of the
fingerprints (``numbers``: ``1`` or ``0``), k, the layout (JSON), the bucket split
(``field_bits``, :func:`choose_field_bits`), ``created`` (a token new at every creation) and
the count of distinct fingerprints. A meta written with other values than the ones asked
for or understood by this code is refused with :class:`.meta.IndexMismatchError`, naming
both; a meta lost while other keys of the index remain, with
:class:`.records.DamagedIndexError`. The functions here read and write the keys of a
:class:`.redis_index.RedisIndex`.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..text.fingerprint import FINGERPRINT_VERSION
from .layout import MAX_TABLES, Layout, choose_layout
from .meta import DEFAULT_MAX_DISTANCE, IndexMismatchError
from .records import DamagedIndexError

if TYPE_CHECKING:
    from .redis_index import RedisIndex

logger = logging.getLogger(__name__)

#: Version of the Redis key layout written by this package; other versions are refused.
#: 3: drop records.
#: 4: the pages of each site dropped through each sentence (``reps``), for the guard.
REDIS_FORMAT_VERSION = 4
#: A bucket holds at most about this many fingerprints at the expected size (a check copies
#: its buckets in the server: at 10^6 and buckets of 1024, 4 tables cost 200 us of server CPU
#: a check-and-insert).
BUCKET_MAX = 128
#: The smallest expected size buckets are sized for (a few hundred KB of fields at most).
SMALLEST_SIZE = 1 << 20
#: Bytes a hash field costs besides its value, in the estimate of :func:`choose_field_bits`.
_FIELD_COST = 96
#: Writes a new index's meta from field, value arguments unless it exists. KEYS: meta, then
#: the index's other keys. The answer: 1 when written, 0 when another process created the
#: index first, -1 when its meta is missing but other keys of it are there.
_CREATE_META = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', unpack(KEYS, 2)) > 0 then return -1 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""


def choose_field_bits(layout: Layout, expected_size: int) -> int:
    """Bits of a permuted fingerprint that name its bucket: no more than the narrowest
    table prefix (then a query reads one bucket per table) nor 24, buckets of at most
    :data:`BUCKET_MAX` fingerprints at ``expected_size`` (at least :data:`SMALLEST_SIZE`, so
    that an index growing past a small estimate keeps small buckets) where the prefixes
    allow, and among those the least memory (values of ``8 - bits // 8`` bytes, plus a
    field's cost)."""
    limit = min(24, *layout.prefix_bits)
    expected_size = max(expected_size, SMALLEST_SIZE)
    best: tuple[float, int] | None = None
    for bits in range(limit + 1):
        if expected_size / 2**bits > BUCKET_MAX and bits < limit:
            continue
        cost = (8 - bits // 8) * expected_size + min(2**bits, expected_size) * _FIELD_COST
        if best is None or cost < best[0]:
            best = (cost, bits)
    assert best is not None
    return best[1]


@dataclass(frozen=True)
class Split:
    """How a table's permuted fingerprint splits into a bucket field and a value."""

    bits: int  # field bits

    @property
    def width(self) -> int:  # bytes of a value
        return 8 - self.bits // 8


def read_meta(index: RedisIndex) -> dict[str, str]:
    """The index's meta as it is on the server (empty when there is none)."""
    raw = index.client.hgetall(index._meta)
    try:
        return {bytes(k).decode(): bytes(v).decode() for k, v in raw.items()}
    except UnicodeDecodeError:
        raise IndexMismatchError(f"index {index.path}: bad meta (not UTF-8)") from None


def other_keys(index: RedisIndex) -> list[str]:
    """Every key the index may hold besides its meta."""
    tables = [f"{{{index.key}}}:t{i:02d}" for i in range(MAX_TABLES)]
    return [index._docs, index._fps, index._sigs, index._sents, index._drops, index._dseq,
            index._dkept, index._reps, *tables]  # fmt: skip


def leftovers(index: RedisIndex) -> int:
    """How many keys of the index there are besides its meta."""
    return int(index.client.exists(*other_keys(index)))


def meta_lost(index: RedisIndex) -> DamagedIndexError:
    """An index whose meta is gone (a ``DEL``, an eviction) but not its other keys: its
    parameters (k, the tables' layout, the bucket split) are lost with it, and a new meta
    would read its tables wrong."""
    return DamagedIndexError(
        f"index {index.path} has lost its meta key {index._meta} (its parameters) but still "
        f"holds {leftovers(index)} of its other keys: it cannot be read. Empty it "
        f"(SIMHASH_RESET naming {index.key!r}; RedisIndex(reset=True)) or delete its keys"
    )


def create_meta(
    index: RedisIndex,
    max_distance: int | None,
    expected_size: int,
    layout: Layout | None,
    numbers: bool,
) -> dict[str, str]:
    """Write a new index's meta (k, by default :data:`.meta.DEFAULT_MAX_DISTANCE`, the
    layout, chosen for ``expected_size`` unless given, and its bucket split) unless another
    process wrote one first; the meta."""
    k = DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
    layout = choose_layout(k, expected_size) if layout is None else layout
    field_bits = choose_field_bits(layout, expected_size)
    meta = {
        "format_version": str(REDIS_FORMAT_VERSION),
        "fingerprint_version": str(FINGERPRINT_VERSION),
        "numbers": "1" if numbers else "0",
        "max_distance": str(layout.max_distance),
        "layout": layout.to_json(),
        "field_bits": str(field_bits),
        "created": f"{time.time()!r}-{secrets.token_hex(8)}",
        "fingerprints": "0",
    }
    # Whole, in one script: of processes creating the index at once, one writes its meta,
    # and no process reads a meta half written.
    fields = [part for item in meta.items() for part in item]
    keys = [index._meta, *other_keys(index)]
    created = index.client.register_script(_CREATE_META)(keys=keys, args=fields)
    if created == -1:
        raise meta_lost(index)
    if created:
        logger.debug("created index %s: %s, %d field bits", index.path, layout, field_bits)
        return meta
    return read_meta(index)  # another process's, whole


def fingerprint_count(index: RedisIndex, count: bytes) -> int:
    """The count of fingerprints ``meta`` holds (``count``, as read); DamagedIndexError when it
    is none."""
    if not bytes(count).isdigit():
        raise DamagedIndexError(
            f"index damaged: {index.key!r}'s count of fingerprints is {bytes(count)!r}"
        )
    return int(count)


def check_meta(
    path: str,
    stored: dict[str, str],
    max_distance: int | None,
    layout: Layout | None,
    numbers: bool | None = None,
) -> Layout:
    """The layout of the index at ``path`` whose meta is ``stored``, once the meta is found
    well formed, of this code's format and fingerprints, and of the k, layout and
    ``numbers`` asked for (None: any); else :class:`IndexMismatchError`."""

    def differ(what: str, on_server: object, wanted: object) -> IndexMismatchError:
        return IndexMismatchError(f"index {path} was built with {what}={on_server}, not {wanted}")

    try:
        fmt = int(stored.get("format_version", "0"))
        if fmt != REDIS_FORMAT_VERSION:
            raise differ("format_version", fmt, f"{REDIS_FORMAT_VERSION} (this code's format)")
        fpv = int(stored.get("fingerprint_version", "0"))
        if fpv != FINGERPRINT_VERSION:
            raise differ(
                "fingerprint_version", fpv, f"{FINGERPRINT_VERSION} (this code's fingerprints)"
            )
        on_server = Layout.from_json(stored["layout"])
        bits = int(stored["field_bits"])
        if not stored.get("created"):
            raise KeyError("created")
    except (KeyError, ValueError) as exc:
        if isinstance(exc, IndexMismatchError):
            raise
        raise IndexMismatchError(f"index {path}: bad meta ({exc})") from None
    flag = stored.get("numbers", "1")
    if flag not in ("0", "1"):
        raise IndexMismatchError(f"index {path}: bad meta (numbers={flag!r})")
    with_numbers = flag == "1"
    if numbers is not None and numbers != with_numbers:
        raise differ("numbers", with_numbers, numbers)
    if max_distance is not None and max_distance != on_server.max_distance:
        raise differ("max_distance", on_server.max_distance, max_distance)
    if layout is not None and layout != on_server:
        raise differ("layout", f"'{on_server}'", f"'{layout}'")
    if not 0 <= bits <= min(24, *on_server.prefix_bits):
        raise IndexMismatchError(f"index {path}: bad meta (field_bits={bits})")
    return on_server
