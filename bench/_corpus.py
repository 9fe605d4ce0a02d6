"""Reads the shared corpus of real pages at run time (never copied into the project).

The corpus lives in ``../shared/corpus`` from the project root, or wherever
``SIMHASH_CORPUS`` points. Scripts call :func:`require_corpus`, which exits cleanly with a
message when it is absent.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("SIMHASH_CORPUS", ROOT.parent / "shared" / "corpus"))


@dataclass(frozen=True)
class Page:
    rid: str
    lang: str
    site: str
    url: str
    raw: bytes
    encoding: str
    gt: str

    @property
    def html(self) -> str:
        return self.raw.decode(self.encoding, "replace")

    @property
    def group(self) -> str:
        return "zh" if self.lang == "zh" else "en+"


def corpus_available() -> bool:
    return (CORPUS / "manifest.jsonl").is_file()


def require_corpus() -> None:
    if not corpus_available():
        print(f"corpus not found at {CORPUS}: nothing to measure (set SIMHASH_CORPUS)")
        sys.exit(0)


def load_pages() -> list[Page]:
    with open(CORPUS / "manifest.jsonl", encoding="utf-8") as f:
        manifest = [json.loads(line) for line in f]
    gts = {}
    with gzip.open(CORPUS / "gt.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            gts[row["rid"]] = row["gt"]
    pages = []
    for m in manifest:
        with gzip.open(CORPUS / "pages" / f"{m['rid']}.html.gz") as f:
            raw = f.read()
        url = m.get("url") or ""
        pages.append(
            Page(m["rid"], m["lang"], m["site"], url, raw, m["encoding"], gts.get(m["rid"], ""))
        )
    return pages


def reference_texts(min_words: int, min_chars: int) -> dict[str, list[str]]:
    """The corpus's reference texts by group (``"en+"``, ``"zh"``), those of at least
    ``min_words`` words (``min_chars`` characters in Chinese)."""
    groups: dict[str, list[str]] = {"en+": [], "zh": []}
    for page in load_pages():
        text = page.gt.strip()
        zh = page.group == "zh"
        if text and (len(text) >= min_chars if zh else len(text.split()) >= min_words):
            groups[page.group].append(text)
    return groups


def token_f1(predicted: list[str], reference: list[str]) -> float:
    """The bag-of-tokens F1 of an extracted text's tokens against its reference's."""
    overlap = sum((Counter(predicted) & Counter(reference)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(predicted), overlap / len(reference)
    return 2 * precision * recall / (precision + recall)
