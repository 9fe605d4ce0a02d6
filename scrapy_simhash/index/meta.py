"""An index's parameters: chosen at creation, stored in ``meta``, checked at every open.

``meta`` holds the format version, the fingerprint version, whether numbers are features of
the fingerprints (``numbers``: ``1`` or ``0``), k, the layout of the main tables, their bucket
key width and the recent tables' layout (empty when there are none). An index
written with other values than the ones asked for or understood by this code is refused with
:class:`IndexMismatchError`, naming both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..text.fingerprint import FINGERPRINT_VERSION
from .layout import MAX_SUPPORTED_DISTANCE, MAX_TABLES, Layout, choose_layout
from .records import Buckets, choose_key_bytes
from .storage import Space, Txn
from .tables import COUNT, RECENT, RECENT_SIZE

#: Version of the stored format written by this package; other versions are refused.
#: 2: tables of sorted buckets (1 had a DUPSORT entry per fingerprint and table).
#: 3: recent tables beside the main ones.
#: 4: drop records (``drops``, ``dseq``, ``dkept``); a CRC-32 ending every record and bucket.
#: 5: page signatures (``sigs``) and the documents holding each sentence (``sents``) for the
#: sentence rule; a drop record names the rule that found it.
#: 6: the pages of each site dropped through each sentence (``repeats``), for the guard.
FORMAT_VERSION = 6
#: k of a new index when none is given.
DEFAULT_MAX_DISTANCE = 3


class IndexMismatchError(ValueError):
    """The index on disk was built with other parameters (k, layout, fingerprint or format
    version) than the ones asked for or understood by this code."""


@dataclass(frozen=True)
class Params:
    """What an index was built with."""

    layout: Layout
    codec: Buckets  # the main tables' bucket encoding
    recent_layout: Layout | None
    numbers: bool = True  # numbers are features of the fingerprints it holds

    @property
    def max_distance(self) -> int:
        return self.layout.max_distance


def new_params(
    max_distance: int | None, expected_size: int, layout: Layout | None, numbers: bool = True
) -> Params:
    """The parameters of a new index: k (default 3), the layout chosen for ``expected_size``
    unless given, the bucket key width, and recent tables where the layout has more tables
    than a small index needs."""
    k = DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
    if layout is None:
        layout = choose_layout(k, expected_size)
    key_bytes = choose_key_bytes(expected_size, min(layout.prefix_bits))
    recent = choose_layout(k, RECENT_SIZE)
    recent_layout = recent if recent.tables < layout.tables else None
    return Params(layout, Buckets(key_bytes), recent_layout, numbers)


def write_params(txn: Txn, meta: Space, params: Params) -> None:
    """Store a new index's parameters and zero counts."""
    recent_json = "" if params.recent_layout is None else params.recent_layout.to_json()
    txn.put(meta, b"format_version", str(FORMAT_VERSION).encode())
    txn.put(meta, b"fingerprint_version", str(FINGERPRINT_VERSION).encode())
    txn.put(meta, b"numbers", b"1" if params.numbers else b"0")
    txn.put(meta, b"max_distance", str(params.max_distance).encode())
    txn.put(meta, b"layout", params.layout.to_json().encode())
    txn.put(meta, b"key_bytes", str(params.codec.key_bytes).encode())
    txn.put(meta, b"recent_layout", recent_json.encode())
    txn.put(meta, COUNT, b"0")
    txn.put(meta, RECENT, b"0")
    txn.put(meta, b"created", repr(time.time()).encode())


def read_params(
    path: str,
    stored: dict[bytes, bytes],
    max_distance: int | None,
    layout: Layout | None,
    numbers: bool | None = None,
) -> Params:
    """The parameters in ``stored`` (``meta``'s items), checked against this code's versions
    and the k, layout and number features asked for (None: any)."""

    def differ(what: str, on_disk: object, wanted: object) -> IndexMismatchError:
        return IndexMismatchError(f"index {path!r} was built with {what}={on_disk}, not {wanted}")

    def number(name: bytes, default: bytes | None = None) -> int:
        value = stored.get(name, default)
        try:
            if value is None:
                raise ValueError("missing")
            return int(value)
        except ValueError:
            raise IndexMismatchError(
                f"index {path!r}: its metadata is damaged ({name.decode()}={value!r})"
            ) from None

    fmt = number(b"format_version", b"0")
    if fmt != FORMAT_VERSION:
        raise differ("format_version", fmt, f"{FORMAT_VERSION} (this code's format)")
    fpv = number(b"fingerprint_version", b"0")
    if fpv != FINGERPRINT_VERSION:
        raise differ(
            "fingerprint_version", fpv, f"{FINGERPRINT_VERSION} (this code's fingerprints)"
        )
    flag = stored.get(b"numbers", b"1")
    if flag not in (b"0", b"1"):
        raise IndexMismatchError(f"index {path!r}: its metadata is damaged (numbers={flag!r})")
    with_numbers = flag == b"1"
    if numbers is not None and numbers != with_numbers:
        raise differ("numbers", with_numbers, numbers)
    k = number(b"max_distance")
    try:
        on_disk = Layout.from_json(stored[b"layout"].decode())
    except (KeyError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise IndexMismatchError(f"index {path!r}: {exc}") from None
    if k != on_disk.max_distance:  # one of the two is damaged: neither can be trusted
        raise IndexMismatchError(
            f"index {path!r}: its metadata is damaged (max_distance={k}, where its layout "
            f"is for {on_disk.max_distance})"
        )
    if max_distance is not None and max_distance != k:
        raise differ("max_distance", k, max_distance)
    if layout is not None and layout != on_disk:
        raise differ("layout", f"'{on_disk}'", f"'{layout}'")
    try:
        codec = Buckets(int(stored[b"key_bytes"]))
        recent_json = stored[b"recent_layout"].decode()
        recent = Layout.from_json(recent_json) if recent_json else None
    except (KeyError, ValueError) as exc:
        raise IndexMismatchError(f"index {path!r}: bad bucket meta ({exc})") from None
    return Params(on_disk, codec, recent, with_numbers)


def check_distance(value: Any, name: str, limit: int = MAX_SUPPORTED_DISTANCE) -> int:
    """``value`` as a Hamming distance in 0..limit, or a TypeError or ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 0 <= value <= limit:
        raise ValueError(f"{name} must be in 0..{limit}, got {value}")
    return value


def check_open(
    max_distance: Any, expected_size: Any, layout: Layout | None, readonly: bool, reset: bool
) -> int | None:
    """The checks of an index's opening arguments (LMDB or Redis): ``max_distance`` checked
    (or None)."""
    if max_distance is not None:
        max_distance = check_distance(max_distance, "max_distance")
    if isinstance(expected_size, bool) or not isinstance(expected_size, int):
        raise TypeError(f"expected_size must be an int, got {type(expected_size).__name__}")
    if expected_size < 1:
        raise ValueError(f"expected_size must be >= 1, got {expected_size}")
    if layout is not None and max_distance is not None and layout.max_distance != max_distance:
        raise ValueError(f"layout is for max_distance={layout.max_distance}, not {max_distance}")
    if layout is not None and layout.tables > MAX_TABLES:
        # an index keeps at most MAX_TABLES tables (LMDB's named databases, the keys a Redis
        # index removes): a larger layout failed half-made on LMDB, and on Redis was written,
        # then refused as bad meta
        raise ValueError(
            f"layout '{layout}': an index holds at most {MAX_TABLES} tables (choose fewer "
            f"blocks, or layout=None to let the index choose)"
        )
    if readonly and reset:
        raise ValueError("reset=True cannot be used with readonly=True")
    return max_distance
