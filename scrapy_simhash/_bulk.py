"""Preparing a bulk load: validate and encode items once, sort with numpy.

``insert_many`` spends most of its time per item in Python; this module keeps that loop as
short as possible (fast paths for plain ints, strs and empty records) and does every sort
with numpy on fixed-width arrays rather than on lists of bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._records import (
    FINGERPRINT_LIMIT,
    HEADER,
    check_fingerprint,
    check_key,
    encode_doc,
    split_seen,
)


@dataclass
class Prepared:
    """Items with unique keys (the last of repeated keys wins), in input order."""

    docids: list[bytes]
    fingerprints: list[int]
    encoded: list[bytes]
    items: list[tuple[int, str, dict[str, Any]]]
    read: int  # items read, repeats included


def prepare(items: Iterable[tuple[int, str, dict[str, Any]]], now: float) -> Prepared:
    """Validate and encode ``(fingerprint, key, record)`` items (first seen ``now``)."""
    blake2b = hashlib.blake2b
    pack = HEADER.pack
    position: dict[bytes, int] = {}
    docids: list[bytes] = []
    fps: list[int] = []
    encoded: list[bytes] = []
    kept: list[tuple[int, str, dict[str, Any]]] = []
    read = 0
    for item in items:
        fp, key, record = item
        if type(fp) is not int or not 0 <= fp < FINGERPRINT_LIMIT:
            fp = check_fingerprint(fp)
        if type(key) is not str or not key:
            key = check_key(key)
        if type(record) is not dict:
            raise TypeError(f"record must be a dict, got {type(record).__name__}")
        key_bytes = key.encode("utf-8")
        docid = blake2b(key_bytes, digest_size=16).digest()
        if record:
            body, seen = split_seen(record, now)
            data = encode_doc(fp, seen, key, body)
        else:
            data = pack(fp, now, len(key_bytes)) + key_bytes
        read += 1
        at = position.get(docid)
        if at is None:
            position[docid] = len(docids)
            docids.append(docid)
            fps.append(fp)
            encoded.append(data)
            kept.append((fp, key, record))
        else:
            fps[at], encoded[at], kept[at] = fp, data, (fp, key, record)
    return Prepared(docids, fps, encoded, kept, read)


def _id_columns(docids: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) uint64 halves of 16-byte ids, so numpy sorts them as bytes compare."""
    halves = np.frombuffer(b"".join(docids), dtype=">u8").astype(np.uint64).reshape(-1, 2)
    return halves[:, 0], halves[:, 1]


def id_order(docids: list[bytes]) -> list[int]:
    """Positions of ``docids`` in ascending byte order."""
    if not docids:
        return []
    high, low = _id_columns(docids)
    return np.lexsort((low, high)).tolist()


def link_order(fingerprints: list[int], docids: list[bytes]) -> list[int]:
    """Positions of (fingerprint, id) pairs in ascending order."""
    if not docids:
        return []
    high, low = _id_columns(docids)
    return np.lexsort((low, high, np.array(fingerprints, dtype=np.uint64))).tolist()


def fingerprint_bytes(fingerprints: list[int]) -> list[bytes]:
    """8-byte big-endian forms of many fingerprints."""
    return np.array(fingerprints, dtype=np.uint64).astype(">u8").view("V8").tolist()
