"""Pages that name no encoding and are not UTF-8: how many are read as their real text.

Each corpus page that holds non-ASCII text is decoded by its manifest's encoding, its
``<meta charset>`` tags removed, and encoded again in the legacy encoding of its language
(windows-1252 for English and the other Western languages; ISO-8859-2 and windows-1250 for
Polish and Czech; windows-1251 and KOI8-R for Russian; GBK and Big5 for Chinese;
Shift_JIS and EUC-JP for Japanese; EUC-KR for Korean), wherever it can be: the bytes a
server that sends no charset would send. ``decode_html`` must give back the page's text.
Beside it, the detector alone on the body's first 64 KB (what ``decode_html`` did before
``scrapy_simhash/text/charset.py``). Run with ``--no-lang`` to take the pages' ``lang``
attributes out too.

    .venv/bin/python bench/charset_bench.py              # about a minute
    .venv/bin/python bench/charset_bench.py --no-lang
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import load_pages, require_corpus  # noqa: E402

from scrapy_simhash.text.decode import codec_of, decode_html  # noqa: E402

LEGACY = {
    "pl": ("iso-8859-2", "cp1250"),
    "cs": ("cp1250", "iso-8859-2"),
    "ru": ("cp1251", "koi8-r"),
    "zh": ("gbk", "big5"),
    "ja": ("shift_jis", "euc-jp"),
    "ko": ("euc-kr",),
}
META_CHARSET = re.compile(r"<meta[^>]*charset[^>]*>", re.IGNORECASE)
LANG = re.compile(r"\blang\s*=", re.IGNORECASE)


def detector_alone(data: bytes) -> str:
    """The former last step: the detector's best guess on the first 64 KB."""
    from charset_normalizer import from_bytes

    best = from_bytes(data[:65536]).best()
    name = codec_of(best.encoding) if best else None
    return data.decode(name or "utf-8", "replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-lang", action="store_true", help="take lang attributes out")
    args = parser.parse_args()
    require_corpus()
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    times: list[float] = []
    for page in load_pages():
        html = META_CHARSET.sub("", page.raw.decode(page.encoding, "replace"))
        if args.no_lang:
            html = LANG.sub("data-lang=", html)
        if html.isascii():
            continue
        for encoding in LEGACY.get(page.lang, ("cp1252",)):
            try:
                data = html.encode(encoding)
            except UnicodeEncodeError:
                continue
            start = time.perf_counter()
            ours = decode_html(data)
            times.append(time.perf_counter() - start)
            row = counts[(page.lang if page.lang in LEGACY else "Western", encoding)]
            row[0] += 1
            row[1] += ours == html
            row[2] += detector_alone(data) == html
    print(f"{'language':10} {'encoding':12} {'pages':>6} {'read right':>11} {'detector alone':>15}")
    total = [0, 0, 0]
    for (lang, encoding), row in sorted(counts.items()):
        print(f"{lang:10} {encoding:12} {row[0]:6d} {row[1]:11d} {row[2]:15d}")
        total = [a + b for a, b in zip(total, row, strict=True)]
    print(f"{'all':10} {'':12} {total[0]:6d} {total[1]:11d} {total[2]:15d}")
    print(
        f"decode_html per page: median {statistics.median(times) * 1e3:.1f} ms, "
        f"max {max(times) * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
