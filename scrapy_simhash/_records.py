"""Byte encodings of the index's LMDB keys and values, and checks of caller input.

* a document id is the 16-byte BLAKE2b of the key (UTF-8): fixed length, so keys of any
  length (URLs beyond LMDB's 511-byte key limit) fit; the full key is kept in the record;
* a document record is ``fingerprint (8) | first seen (float64) | key length (4) | key |
  JSON of the caller's record`` (empty when the record is empty);
* a table entry is a 2-byte bucket key (top 16 permuted bits) and a 6-byte value (low 48).
"""

from __future__ import annotations

import hashlib
import json
import operator
import struct
from typing import Any

HEADER = struct.Struct(">QdI")
FINGERPRINT_LIMIT = 1 << 64
LOW_MASK = (1 << 48) - 1


def doc_id(key: str) -> bytes:
    """The 16-byte id a document is stored under."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest()


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


def check_key(key: Any) -> str:
    """``key`` if it is a non-empty str, else TypeError/ValueError naming ``key``."""
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {type(key).__name__}")
    if not key:
        raise ValueError("key must be a non-empty str")
    return key


def encode_doc(fingerprint: int, seen: float, key: str, record: dict[str, Any]) -> bytes:
    """A document record's bytes (``record`` without ``seen``)."""
    key_bytes = key.encode("utf-8")
    try:
        body = (
            json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            if record
            else b""
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(f"record for key {key!r} must be JSON-serializable: {exc}") from None
    return HEADER.pack(fingerprint, seen, len(key_bytes)) + key_bytes + body


def decode_header(data: bytes) -> tuple[int, float]:
    """(fingerprint, first seen) of a document record."""
    fingerprint, seen, _ = HEADER.unpack_from(data)
    return fingerprint, seen


def decode_doc(data: bytes) -> tuple[int, str, dict[str, Any]]:
    """(fingerprint, key, record with ``seen``) of a document record."""
    fingerprint, seen, key_len = HEADER.unpack_from(data)
    start = HEADER.size
    key = bytes(data[start : start + key_len]).decode("utf-8")
    body = data[start + key_len :]
    record = json.loads(bytes(body)) if body else {}
    record["seen"] = seen
    return fingerprint, key, record


def split_seen(record: dict[str, Any], default: float) -> tuple[dict[str, Any], float]:
    """The record without ``seen``, and ``seen`` (given by the caller, else ``default``)."""
    if "seen" not in record:
        return record, default
    record = dict(record)
    seen = record.pop("seen")
    if isinstance(seen, bool) or not isinstance(seen, int | float):
        raise TypeError(f"record 'seen' must be a unix time (float), got {seen!r}")
    return record, float(seen)


def table_entry(permuted: int) -> tuple[bytes, bytes]:
    """(2-byte bucket, 6-byte value) of a permuted fingerprint."""
    return (permuted >> 48).to_bytes(2, "big"), (permuted & LOW_MASK).to_bytes(6, "big")
