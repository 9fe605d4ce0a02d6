"""Product pages of one description with other specs: told apart, however the table is set.

A shop's product pages share their description and differ in the spec table (storage,
weight, battery, size) and the price. How a shop sets the table decides what the
fingerprint can read of it: a unit beside each number ("| Weight | 245 g |"), each unit in
the row's name cell ("| Weight (g) | 245 |"), or no unit at all ("| 重量 | 186 |", common on
Chinese shops). Extraction returns each row as a short line of cells, which the chrome
filter leaves out unless it reads a quantity in it; version 16 also reads the rows of a
spec table (four rows or more of a name and a number) and a row whose unit is in its name
cell (``docs/quality.md``, "Product pages: spec tables").

Each product is a description (the first 80-140 words, or 200-400 characters in Chinese, of
a reference text of the corpus) in a shop's HTML page, with a spec table of ten rows and a
price; its sibling has the same description and other values in every row ("all specs"), or
in two rows with the same price ("two specs": told apart since version 17 when each holds a
number the other lacks and both three, which the 64 bits of their numbers' sets may not
show). The
duplicates beside them are the same product's page crawled again (its views counter changed)
and the same product in a second shop's layout. Every page goes through ``extract_text`` and
``page_signature`` as a crawl's do, and each pair is decided by the default rule
(``PageSignature.is_near_duplicate``, k=3).

    .venv/bin/python bench/spec_tables.py               # about ten seconds
    .venv/bin/python bench/spec_tables.py --products 20 # a quick look
"""

from __future__ import annotations

import argparse
import html
import random
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import reference_texts, require_corpus  # noqa: E402

from scrapy_simhash import FINGERPRINT_VERSION, extract_text, page_signature  # noqa: E402

#: Each spec: its name (English, Chinese), its unit (English, Chinese), and its values.
SPECS = [
    (("Storage", "存储容量"), ("GB", "GB"), [64, 128, 256, 512]),
    (("Memory", "运行内存"), ("GB", "GB"), [4, 6, 8, 12, 16]),
    (("Screen size", "屏幕尺寸"), ("inches", "英寸"), [6.1, 6.4, 6.7, 6.9]),
    (("Battery", "电池容量"), ("mAh", "毫安时"), list(range(3000, 5500, 37))),
    (("Weight", "重量"), ("g", "克"), list(range(150, 240))),
    (("Camera", "摄像头"), ("MP", "万像素"), [12, 48, 50, 108, 200]),
    (("Refresh rate", "刷新率"), ("Hz", "Hz"), [60, 90, 120, 144]),
    (("Charging", "充电功率"), ("W", "W"), [18, 25, 45, 65, 120]),
    (("Thickness", "厚度"), ("mm", "毫米"), [7.4, 7.9, 8.2, 8.9]),
    (("Processor cores", "处理器核心数"), ("cores", "核"), [6, 8, 10]),
]
STYLES = ("unit in value", "unit in name", "no unit")
SHOPS = [
    {
        "en+": ("Harbour Electronics", ["Phones", "Tablets", "Audio", "Deals", "Support"]),
        "zh": ("海港数码商城", ["手机", "平板", "耳机", "优惠", "客服"]),
    },
    {
        "en+": ("Northgate Mobile", ["Shop", "New arrivals", "Trade in", "Help", "Stores"]),
        "zh": ("北门手机网", ["首页", "新品", "以旧换新", "帮助", "门店"]),
    },
]


def description(text: str, zh: bool, rng: random.Random) -> list[str]:
    """A product's description: the start of a reference text, as paragraphs."""
    if zh:
        flat = "".join(text.split())
        cut = flat[: rng.randint(200, 400)]
        return [cut[i : i + 120] for i in range(0, len(cut), 120)]
    words = text.split()[: rng.randint(80, 140)]
    return [" ".join(words[i : i + 40]) for i in range(0, len(words), 40)]


def spec_rows(values: list, style: str, zh: bool) -> str:
    rows = []
    for ((name_en, name_zh), (unit_en, unit_zh), _), value in zip(SPECS, values, strict=True):
        name, unit = (name_zh, unit_zh) if zh else (name_en, unit_en)
        if style == "unit in value":
            cells = (name, f"{value} {unit}")
        elif style == "unit in name":
            cells = (f"{name} ({unit})", f"{value}")
        else:
            cells = (name, f"{value}")
        rows.append(f"<tr><th>{html.escape(cells[0])}</th><td>{html.escape(cells[1])}</td></tr>")
    return "".join(rows)


def product_page(
    shop: int, group: str, model: str, paragraphs: list[str], table: str, price: int, views: int
) -> str:
    zh = group == "zh"
    name, menu = SHOPS[shop][group]
    nav = "".join(f'<li><a href="/{i}">{html.escape(m)}</a></li>' for i, m in enumerate(menu))
    desc = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    heading = (
        ("商品介绍", "规格参数", "浏览", "加入购物车")
        if zh
        else ("Description", "Specifications", "Views", "Add to cart")
    )
    return f"""<!DOCTYPE html><html lang="{"zh" if zh else "en"}"><head><meta charset="utf-8">
<title>{html.escape(model)} | {html.escape(name)}</title></head><body>
<header><a href="/">{html.escape(name)}</a><nav><ul>{nav}</ul></nav></header>
<main><article class="product"><h1>{html.escape(model)}</h1>
<div class="price">{"¥" if zh else "$"}{price}</div><button>{heading[3]}</button>
<h2>{heading[0]}</h2>{desc}
<h2>{heading[1]}</h2><table>{table}</table>
<table><tr><td>{heading[2]}</td><td>{views}</td></tr></table></article></main>
<footer><p>{html.escape(name)} · Privacy · Terms · Contact</p></footer></body></html>"""


def signed(page: str, url: str):
    text = extract_text(page, url)
    return None if text is None else page_signature(text)


def caught(group: str, style: str, text: str, rng: random.Random, i: int) -> set[str]:
    """Which of a product's pages the default rule takes for a near duplicate of it."""
    zh = group == "zh"
    paragraphs = description(text, zh, rng)
    values = [rng.choice(v) for _, _, v in SPECS]
    other = [
        rng.choice([x for x in v if x != old]) for (_, _, v), old in zip(SPECS, values, strict=True)
    ]
    two = list(values)
    for j in rng.sample(range(len(SPECS)), 2):
        two[j] = other[j]
    price = rng.randint(199, 1299)
    variants = {  # (shop, specs, price, views, model)
        "all": (0, other, price + 100, 12, "Nova X1 Pro"),
        "two": (0, two, price, 12, "Nova X1 Plus"),
        "again": (0, values, price, 4321, "Nova X1"),
        "shop": (1, values, price, 12, "Nova X1"),
    }

    def page(shop: int, specs: list, cost: int, views: int, model: str) -> str:
        table = spec_rows(specs, style, zh)
        return product_page(shop, group, model, paragraphs, table, cost, views)

    base = signed(page(0, values, price, 12, "Nova X1"), f"https://a.example/p/{i}")
    found = set()
    for kind, variant in variants.items():
        sig = signed(page(*variant), f"https://b.example/p/{i}/{kind}")
        if base is not None and sig is not None and sig.is_near_duplicate(base):
            found.add(kind)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--products", type=int, default=60, help="products a group")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    require_corpus()
    texts = reference_texts(min_words=150, min_chars=450)
    print(f"# spec tables: fingerprint version {FINGERPRINT_VERSION}, k=3, seed {args.seed}\n")
    print(
        "| group | table | all specs differ: merged | two specs differ: merged "
        "| crawled again: caught | other shop: caught |"
    )
    print("|---|---|---|---|---|---|")
    for group in ("en+", "zh"):
        rng = random.Random(f"{args.seed}-{group}")
        pool = rng.sample(texts[group], min(args.products, len(texts[group])))
        for style in STYLES:
            counts: Counter[str] = Counter()
            for i, text in enumerate(pool):
                counts.update(caught(group, style, text, random.Random(f"{args.seed}-{i}"), i))
            share = {
                k: f"{100 * counts[k] / len(pool):.1f}%" for k in ("all", "two", "again", "shop")
            }
            print(
                f"| {group} | {style} | {share['all']} | {share['two']} | {share['again']} "
                f"| {share['shop']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
