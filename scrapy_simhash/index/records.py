"""Byte encodings of the index's LMDB keys and values, and checks of caller input.

* a document id is the 16-byte BLAKE2b of the key (UTF-8): fixed length, so keys of any
  length (URLs beyond LMDB's 511-byte key limit) fit; the full key is kept in the record;
* a document record is ``fingerprint (8) | first seen (float64) | key length (4) | key |
  JSON of the caller's record (empty when the record is empty) | CRC-32 (4)``;
* a table holds one LMDB entry per *bucket*: the top ``key_bytes`` bytes of permuted
  fingerprints as the key, and as the value the other ``8 - key_bytes`` bytes of every
  permuted fingerprint in the bucket, concatenated in ascending order (a sorted run of
  fixed-width big-endian numbers, searched by bisection), then a CRC-32 of the key and those
  bytes (4).

The checksums (CRC-32, :func:`sealed`) let every read tell damaged data from good data: a
record or bucket whose checksum fails raises :class:`DamagedIndexError` naming it, instead of
decoding into wrong values. The CRC is stored little-endian, so that the CRC of a whole sealed
item is a constant (:data:`RESIDUE`): a read checks a bucket in place, without copying it.
"""

from __future__ import annotations

import hashlib
import json
import operator
import struct
import zlib
from collections.abc import Iterable
from typing import Any

from ..text.signature import PageSignature

HEADER = struct.Struct(">QdI")
#: Bytes of the CRC-32 that ends every document record, drop record and bucket.
CHECK = 4
#: The CRC-32 of any item followed by its own CRC-32 (little-endian): what a sealed item gives.
RESIDUE = 0x2144DF1C
FINGERPRINT_LIMIT = 1 << 64
#: Largest number of fingerprints a bucket is sized for at the expected size of an index.
BUCKET_TARGET = 256


#: No index holds a count this large (a drop record's header holds its number in 64 bits).
COUNT_LIMIT = 1 << 63


def stored_count(value: bytes) -> int | None:
    """The count ``value`` (decimal digits) stores, or None when it is no count an index can
    hold: not digits, or :data:`COUNT_LIMIT` and more (a damaged meta)."""
    if not value.isdigit() or len(value) > len(str(COUNT_LIMIT)):
        return None
    count = int(value)
    return count if count < COUNT_LIMIT else None


def doc_id(key: str) -> bytes:
    """The 16-byte id a document is stored under."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest()


def packed_ids(ids: bytes) -> list[bytes]:
    """The 16-byte document ids of a value that concatenates them (a last partial id
    included, for ``verify`` to see)."""
    return [ids[i : i + 16] for i in range(0, len(ids), 16)]


def check_fingerprint(fingerprint: Any, name: str = "fingerprint") -> int:
    """``fingerprint`` as an int in [0, 2**64), or TypeError/ValueError naming ``name``."""
    if isinstance(fingerprint, bool):
        raise TypeError(f"{name} must be an int, got bool")
    try:
        value = operator.index(fingerprint)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(fingerprint).__name__}") from None
    if not 0 <= value < FINGERPRINT_LIMIT:
        raise ValueError(f"{name} must be in [0, 2**64), got {value}")
    return value


def signed(fingerprint: Any) -> tuple[int, PageSignature | None]:
    """The fingerprint of a fingerprint or a page signature (checked, and its stored form
    made once, so that a signature that cannot be stored fails before any write: a batch it
    failed in was rolled back whole), and the signature."""
    if isinstance(fingerprint, PageSignature):
        value = check_fingerprint(fingerprint.fingerprint)
        try:
            fingerprint.pack()
        except (struct.error, OverflowError, TypeError, AttributeError) as exc:
            raise ValueError(f"a page signature that cannot be stored: {exc}") from None
        return value, fingerprint
    return check_fingerprint(fingerprint), None


def check_key(key: Any) -> str:
    """``key`` if it is a non-empty str, else TypeError/ValueError naming ``key``."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {type(key).__name__}")
    if not key:
        raise ValueError("key must be a non-empty str")
    if not key.isascii():
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"key must be valid Unicode (a lone surrogate), got {key!r}") from None
    return key


class Entry:
    """A document record waiting for its fingerprint and first-seen time: the key and the
    caller's record encoded (so a bad one fails before anything is written)."""

    __slots__ = ("key_len", "payload", "seen")

    def __init__(self, key: str, record: dict[str, Any]) -> None:
        record, seen = split_seen(record)
        key_bytes = key.encode("utf-8")
        try:
            body = (
                json.dumps(
                    record, separators=(",", ":"), ensure_ascii=False, allow_nan=False
                ).encode("utf-8")
                if record
                else b""
            )
        except (TypeError, ValueError) as exc:
            raise TypeError(f"record for key {key!r} must be JSON-serializable: {exc}") from None
        self.key_len = len(key_bytes)
        self.payload = key_bytes + body
        #: First-seen time given in the record, else None.
        self.seen: float | None = seen

    def data(self, fingerprint: int, seen: float) -> bytes:
        """The document record's bytes."""
        return sealed(HEADER.pack(fingerprint, seen, self.key_len) + self.payload)


def checked_items(items: Iterable[tuple[Any, Any, Any]]) -> list[tuple[int, str, Entry]]:
    """``(fingerprint, key, record)`` items checked and encoded, before any is written."""
    checked = []
    for fingerprint, key, record in items:
        if not isinstance(record, dict):
            raise TypeError(f"record must be a dict, got {type(record).__name__}")
        key = check_key(key)
        checked.append((check_fingerprint(fingerprint), key, Entry(key, record)))
    return checked


#: A checked item that may carry its page signature.
SignedItem = tuple[int, str, Entry, PageSignature | None]


def checked_signed_items(items: Iterable[Any]) -> list[SignedItem]:
    """``(fingerprint or signature, key, record)`` items checked and encoded, before any is
    written, each with its signature (None for a bare fingerprint)."""
    signatures = []
    plain = []
    for item in items:
        if isinstance(item, tuple) and item and isinstance(item[0], PageSignature):
            signatures.append(item[0])
            item = (signed(item[0])[0], *item[1:])
        else:
            signatures.append(None)
        plain.append(item)
    return [
        (fp, key, entry, sig)
        for (fp, key, entry), sig in zip(checked_items(plain), signatures, strict=True)
    ]


class DamagedIndexError(ValueError):
    """Something read from the index cannot be decoded: the index is damaged."""


def sealed(data: bytes, salt: bytes = b"") -> bytes:
    """``data`` followed by the CRC-32 of ``salt`` and ``data`` (a bucket's salt is its key,
    so that a bucket under another key fails too)."""
    return b"".join((data, zlib.crc32(data, zlib.crc32(salt)).to_bytes(CHECK, "little")))


def check_sealed(data: bytes, what: str, salt: bytes = b"") -> None:
    """Nothing if ``data`` is a sealed item, else :class:`DamagedIndexError` saying ``what``
    failed its checksum."""
    if len(data) <= CHECK:
        raise DamagedIndexError(f"index damaged: {what} of {len(data)} bytes")
    if zlib.crc32(data, zlib.crc32(salt)) != RESIDUE:
        raise DamagedIndexError(f"index damaged: {what} fails its checksum")


def unsealed(data: bytes, what: str, salt: bytes = b"") -> bytes:
    """``data`` without its checksum, or :class:`DamagedIndexError` saying ``what`` failed
    it."""
    check_sealed(data, what, salt)
    return data[:-CHECK]


def _damaged(exc: Exception) -> DamagedIndexError:
    return DamagedIndexError(f"index damaged: a document record cannot be decoded ({exc})")


def _record(data: bytes) -> bytes:
    return unsealed(data, "a document record")


def decode_header(data: bytes) -> tuple[int, float]:
    """(fingerprint, first seen) of a document record."""
    data = _record(data)
    try:
        fingerprint, seen, _ = HEADER.unpack_from(data)
    except struct.error as exc:
        raise _damaged(exc) from None
    return fingerprint, seen


def decode_key(data: bytes) -> tuple[int, str]:
    """(fingerprint, key) of a document record (its JSON part left unread)."""
    data = _record(data)
    try:
        fingerprint, _, key_len = HEADER.unpack_from(data)
        return fingerprint, bytes(data[HEADER.size : HEADER.size + key_len]).decode("utf-8")
    except (struct.error, UnicodeDecodeError) as exc:
        raise _damaged(exc) from None


def decode_doc(data: bytes) -> tuple[int, str, dict[str, Any]]:
    """(fingerprint, key, record with ``seen``) of a document record."""
    data = _record(data)
    try:
        fingerprint, seen, key_len = HEADER.unpack_from(data)
        start = HEADER.size
        key = bytes(data[start : start + key_len]).decode("utf-8")
        body = data[start + key_len :]
        record = json.loads(bytes(body)) if body else {}
    except (struct.error, ValueError) as exc:  # UnicodeDecodeError and JSON's are ValueErrors
        raise _damaged(exc) from None
    if not isinstance(record, dict):
        raise _damaged(TypeError(f"a JSON {type(record).__name__}, not an object"))
    record["seen"] = seen
    return fingerprint, key, record


def split_seen(record: dict[str, Any]) -> tuple[dict[str, Any], float | None]:
    """The record without ``seen``, and ``seen`` (given by the caller, else None)."""
    if "seen" not in record:
        return record, None
    record = dict(record)
    seen = record.pop("seen")
    if isinstance(seen, bool) or not isinstance(seen, int | float):
        raise TypeError(f"record 'seen' must be a unix time (float), got {seen!r}")
    if not -62_135_596_800 <= seen < 253_402_300_800:  # years 1 to 9999 (and not NaN)
        raise ValueError(f"record 'seen' must be a unix time of the years 1 to 9999, got {seen!r}")
    return record, float(seen)


def choose_key_bytes(expected_size: int, min_prefix_bits: int) -> int:
    """Bucket key width (1..3 bytes) for a new index: buckets of at most about
    :data:`BUCKET_TARGET` fingerprints at ``expected_size``, and no wider than the narrowest
    table prefix when it can be helped (then a query reads one bucket per table)."""
    wanted = 1
    while wanted < 3 and expected_size > BUCKET_TARGET << (8 * wanted):
        wanted += 1
    return max(1, min(wanted, min_prefix_bits // 8))


class Buckets:
    """Encoding of one table's buckets for a key width of ``key_bytes``."""

    def __init__(self, key_bytes: int) -> None:
        if not 1 <= key_bytes <= 3:
            raise ValueError(f"key_bytes must be in 1..3, got {key_bytes}")
        self.key_bytes = key_bytes
        self.width = 8 - key_bytes  # bytes per value in a bucket
        self.shift = 8 * self.width
        self.value_mask = (1 << self.shift) - 1

    def seal(self, key: bytes, values: bytes) -> bytes:
        """A bucket as stored: its ``values`` and their checksum."""
        return sealed(values, key)

    def check(self, key: bytes, bucket: bytes) -> None:
        """Nothing if the stored ``bucket`` under ``key`` passes its checksum, else
        :class:`DamagedIndexError` naming it. Its values are its first ``len - CHECK`` bytes,
        and :meth:`position` reads it as it is: the checksum (4 bytes) is shorter than a
        value (5 to 7), so it never counts as one."""
        if len(bucket) <= CHECK or zlib.crc32(bucket, zlib.crc32(key)) != RESIDUE:
            check_sealed(bucket, f"bucket {bytes(key).hex()}", key)  # raises, naming it

    def opened(self, key: bytes, bucket: bytes) -> bytes:
        """The values of the stored ``bucket`` under ``key``, its checksum and shape checked
        (:class:`DamagedIndexError` naming the bucket)."""
        values = unsealed(bucket, f"bucket {bytes(key).hex()}", key)
        if len(key) != self.key_bytes or not values or len(values) % self.width:
            raise DamagedIndexError(
                f"index damaged: bucket {bytes(key).hex()} has a {len(key)}-byte key and"
                f" {len(values)} bytes of values"
            )
        return values

    def split(self, permuted: int) -> tuple[bytes, int]:
        """(bucket key, value as an int) of a permuted fingerprint."""
        return (permuted >> self.shift).to_bytes(self.key_bytes, "big"), permuted & self.value_mask

    def position(self, bucket: bytes, value: int) -> int:
        """Index of the first value >= ``value`` in a bucket (by bisection)."""
        w = self.width
        target = value.to_bytes(w, "big")
        lo, hi = 0, len(bucket) // w
        while lo < hi:
            mid = (lo + hi) >> 1
            if bucket[mid * w : mid * w + w] < target:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def added(self, bucket: bytes | None, value: int) -> bytes | None:
        """The bucket with ``value`` added, or None if it holds it already."""
        raw = value.to_bytes(self.width, "big")
        if bucket is None:
            return raw
        at = self.position(bucket, value) * self.width
        if bucket[at : at + self.width] == raw:
            return None
        return bucket[:at] + raw + bucket[at:]

    def removed(self, bucket: bytes, value: int) -> bytes | None:
        """The bucket without ``value`` (possibly empty), or None if it does not hold it."""
        at = self.position(bucket, value) * self.width
        if bucket[at : at + self.width] != value.to_bytes(self.width, "big"):
            return None
        return bucket[:at] + bucket[at + self.width :]
