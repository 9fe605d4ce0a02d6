"""Time on adversarial texts: what a hostile or broken page costs the text layer, by size.

A crawl meets pages no one wrote for it: tens of thousands of unclosed ``<h1>`` in a comment,
a megabyte of sentences of one length (with numbers or without), a long line followed by
thousands of indented ones, a catalogue whose lines all fill one width (read as one
hard-wrapped paragraph), a Chinese page of the digits of pi or of a lottery's numbers run
together, a page of sentences of stop words with times (read whole: no word counts to the
fingerprint's limit), a headline of unclosed ``<``.
For each such input, at sizes doubling from ``--start`` bytes, this prints the time of the
function a crawl calls on it (the median of ``--repeat`` runs) and the ratio to the time at
half the size: about 2 is linear, about 4 quadratic. Beside ``page_title``, the regular
expression it used to run (``<(title|h1)\\b[^>]*>(.*?)</\\1\\s*>``, every match) is timed on
the same input, as the baseline it replaced (both up to 64 KB: a title is looked for there).

    python bench/text_bench.py                  # 4 KB to 256 KB
    python bench/text_bench.py --start 16000 --steps 7 --repeat 1   # to 1 MB
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_simhash import extract_text, page_signature
from scrapy_simhash.text.headings import page_title
from scrapy_simhash.text.wrap import join_continued, unwrap

_OLD_TITLE = re.compile(r"<(title|h1)\b[^>]*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)


def unclosed_headlines(size: int) -> bytes:
    return b"<h1>" * (size // 4) + b"</title>"


def headlines_in_a_comment(size: int) -> str:
    para = "The committee approved the new budget for the regional transport network. " * 3
    paras = "".join(f"<p>{para} Paragraph {i}.</p>" for i in range(6))
    return (
        f"<html><head><title>Budget news</title></head><body><article>{paras}</article>"
        f"<!-- {'<h1>' * (size // 4)} --></body></html>"
    )


def sentences_of_one_length(size: int) -> str:
    rng = random.Random(1)
    words = ("".join(rng.choice(string.ascii_lowercase) for _ in range(20)) for _ in range(size))
    return "".join(f"{w}. " for w, _ in zip(words, range(size // 22), strict=False))


def numbered_sentences(size: int) -> str:
    rng = random.Random(1)
    lines = (
        f"Order {rng.randint(10000, 99999)} of the catalogue was shipped to the depot on time."
        for _ in range(size // 63)
    )
    return "\n".join(lines)


def hard_wrapped_lines(size: int) -> str:
    rng = random.Random(1)
    lines = (
        f"Item {i} of the catalogue costs {rng.randint(10, 999)} dollars and ships within "
        f"{rng.randint(1, 9)} days"
        for i in range(size // 70)
    )
    return "\n".join(lines)


_ZH = (
    "北京时间昨天晚上，国家统计局发布了最新的经济数据，显示今年前三个季度国内生产总值同比增长百分之五，"
    "消费和投资保持稳定，专家认为下半年经济将继续回升向好。\n"
)


def digits_on_a_chinese_page(size: int) -> str:
    rng = random.Random(1)
    return _ZH * 3 + "圆周率：" + "".join(rng.choices(string.digits, k=size))


def numbers_run_together_on_a_chinese_page(size: int) -> str:
    rng = random.Random(1)
    return _ZH * 3 + "开奖号码：" + ",".join(rng.choices(string.digits, k=size // 2))


def timed_sentences_of_stop_words(size: int) -> str:
    rng = random.Random(1)
    words = ["the", "of", "and", "to", "in", "for", "on", "with", "at", "by", "from"]
    sentences = []
    for _ in range(size // 50):
        rng.shuffle(words)
        time = f"{rng.randint(10, 23)}:{rng.randint(10, 59)}"
        sentences.append(f"{' '.join(words[:6])} {time} {' '.join(words[6:])}. ")
    head = "The committee approved the new budget for the regional transport network. " * 3
    return head + "\n" + "".join(sentences)


def unclosed_tags_in_a_headline(size: int) -> str:
    para = "The committee approved the new budget for the regional transport network. " * 3
    return (
        f"<html><head><title>Budget news</title></head><body><h1>{'<' * size}</h1>"
        f"<article><p>{para}</p><p>{para}</p></article></body></html>"
    )


def indented_continuations(size: int) -> str:
    head = "a.\n  " + "word " * (size // 10) + "\n"
    return head + "  x\n" * max(0, (size - len(head)) // 4)


#: (name, the input of a size, the function, the largest size it reads: page_title reads a
#: page's first 64 KB)
CASES: list[tuple[str, Callable[[int], object], Callable[[object], object], int | None]] = [
    ("page_title, unclosed <h1>", unclosed_headlines, page_title, 65536),
    (
        "  baseline: the former regular expression",
        unclosed_headlines,
        lambda b: list(_OLD_TITLE.finditer(b.decode("ascii"), 0, 65536)),
        65536,
    ),
    ("extract_text, <h1> in a comment", headlines_in_a_comment, extract_text, None),
    ("page_signature, sentences of one length", sentences_of_one_length, page_signature, None),
    (
        "page_signature, sentences of one length with numbers",
        numbered_sentences,
        page_signature,
        None,
    ),
    ("join_continued, indented lines", indented_continuations, join_continued, None),
    ("unwrap, hard-wrapped lines", hard_wrapped_lines, unwrap, None),
    ("page_signature, hard-wrapped lines", hard_wrapped_lines, page_signature, None),
    ("page_signature, digits on a Chinese page", digits_on_a_chinese_page, page_signature, None),
    (
        "page_signature, numbers run together on a Chinese page",
        numbers_run_together_on_a_chinese_page,
        page_signature,
        None,
    ),
    (
        "page_signature, timed sentences of stop words",
        timed_sentences_of_stop_words,
        page_signature,
        None,
    ),
    ("extract_text, unclosed < in an <h1>", unclosed_tags_in_a_headline, extract_text, None),
]


def timed(fn: Callable[[object], object], value: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(value)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=int, default=4_000, help="first size, in bytes")
    ap.add_argument("--steps", type=int, default=7, help="sizes, each twice the one before")
    ap.add_argument("--repeat", type=int, default=3, help="runs a size (the median is shown)")
    args = ap.parse_args(argv)
    sizes = [args.start << i for i in range(args.steps)]
    print("| input | " + " | ".join(f"{s // 1000} KB" for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, make, fn, limit in CASES:
        cells, before = [], None
        for size in sizes:
            if limit is not None and size > limit:
                cells.append("-")
                continue
            took = timed(fn, make(size), args.repeat)
            ratio = f" (x{took / before:.1f})" if before else ""
            cells.append(f"{took * 1000:.1f} ms{ratio}")
            before = took
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\ncells: median time; (xN): the time over that at half the size (2 linear, 4 quadratic)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
