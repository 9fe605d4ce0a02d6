"""Different articles that share a block of prose: press releases and their boilerplate.

A company's newsroom closes every release with the same long paragraphs (what the company
is, forward-looking statements, a media contact); a finance or health blog closes every post
with the same disclaimer. Those paragraphs are the longest sentences of many such pages, so
two different releases can share half their long sentences, which the sentence rule alone
would take for one article. ``Rule.block_shared`` refuses it when the pages' fingerprints
are as far apart as unrelated texts and their runs of words mostly differ, or whatever the
fingerprints when the runs of words are as far apart (``Rule.block_far_runs``); and
``Rule.apart_distance`` when they are yet further apart, and not every long sentence is
shared.

Each pair is built from two reference texts of the corpus (their first 150-300 words, or
400-800 characters in Chinese), each followed by the same block (written here, in English or
Chinese), as HTML pages of one newsroom template; the duplicates beside them are one such
release in the newsroom's layout and in a news site's (a section menu, a standfirst, a
related-stories list). Every page goes through ``extract_text`` and ``page_signature`` as a
crawl's do, and each pair is decided by the default rule and by the rule without those
clauses (``block_shared=0``, ``apart_distance`` off), side by side. Then a crawl's order:
each group's releases of one company checked into one new index
(``SimhashIndex.check_and_insert``), where the frequency guard also acts, and the releases
dropped counted.

    .venv/bin/python bench/boilerplate.py               # a few seconds
    .venv/bin/python bench/boilerplate.py --pairs 20    # a quick look
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import itertools
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import reference_texts, require_corpus  # noqa: E402

from scrapy_simhash import extract_text, page_signature  # noqa: E402
from scrapy_simhash.index import SimhashIndex  # noqa: E402
from scrapy_simhash.text.rule import DEFAULT_RULE  # noqa: E402
from scrapy_simhash.text.signature import PageSignature  # noqa: E402

#: The blocks, each a list of paragraphs: a newsroom's boilerplate, a blog's disclaimer.
BLOCKS = {
    ("en+", "release"): [
        "About Harbourline Energy: Harbourline Energy builds and operates offshore wind farms, "
        "battery storage plants and high-voltage links in eleven countries, supplies "
        "electricity to more than three million households and employs about seven thousand "
        "people; its shares are listed on the main market of the stock exchange.",
        "Forward-looking statements: this release contains statements about future orders, "
        "revenues, margins, investments and plans that are based on the current expectations "
        "of the management and are subject to risks and uncertainties, many of which are "
        "beyond the company's control, so that actual results may differ materially.",
        "Such risks include changes in energy policy, auctions and subsidies, the prices of "
        "steel, copper and other raw materials, the availability of vessels and cranes, "
        "interest and exchange rates, delays in permits and grid connections, and the "
        "outcome of legal and regulatory proceedings described in the annual report.",
        "The company assumes no obligation to update or revise these statements in the light "
        "of new information, future events or otherwise, except where the law or the rules "
        "of the stock exchange require it to do so.",
        "Media contact: the press office of Harbourline Energy, press@harbourline.example",
    ],
    ("en+", "disclaimer"): [
        "Disclaimer: the content of this post is general information for readers and does "
        "not constitute financial, legal, tax or medical advice; it does not take into "
        "account your objectives, circumstances or needs, and you should speak to a qualified "
        "adviser before acting on anything you read here.",
        "While the authors try to keep every figure and statement accurate and up to date, "
        "they make no promise or warranty of any kind about its completeness or reliability, "
        "and neither they nor the publisher accept liability for any loss that arises from "
        "relying on it.",
        "Some links on this page are affiliate links, which means the site may earn a small "
        "commission when you buy through them, at no extra cost to you; this never decides "
        "what we write about or what we recommend to our readers.",
    ],
    ("zh", "release"): [
        "关于海岸线能源：海岸线能源股份有限公司成立于二零零六年，总部位于青岛，主要从事海上风电场、储能电站和高压输电"
        "工程的投资、建设与运营，业务遍及十一个国家和地区，为三百多万户家庭供电，员工约七千人，公司股票在上海证券交易所上市。",
        "前瞻性陈述：本新闻稿中有关公司未来订单、收入、利润率、投资计划和经营安排的陈述，均基于管理层目前的预期，"
        "受到许多公司无法控制的风险和不确定因素影响，实际结果可能与这些陈述存在重大差异。",
        "这些风险包括但不限于能源政策和补贴的调整、钢材铜材等原材料价格的波动、施工船舶与吊装设备的供应、利率和汇率的变化、"
        "审批与并网的延误，以及公司年度报告中披露的法律和监管程序的结果。",
        "除法律法规和证券交易所规则另有要求外，公司不承担根据新的信息、未来事件或其他情况更新或修改上述陈述的义务。",
        "媒体联系：海岸线能源品牌与公共关系部",
    ],
    ("zh", "disclaimer"): [
        "免责声明：本文内容仅供读者一般参考，不构成任何投资、法律、税务或医疗方面的建议，也没有考虑您的具体目标、"
        "处境和需要，在根据本文采取任何行动之前，请先咨询具有相应资质的专业人士。",
        "作者尽力保证文中数据和表述准确及时，但不对其完整性和可靠性作出任何形式的承诺或保证，作者和本站均不对因依赖本文内容"
        "而产生的任何损失承担责任。",
        "本文部分链接为推广链接，读者通过这些链接购买商品时本站可能获得少量佣金，您无需为此支付额外费用，这也不会影响我们"
        "选择写什么以及向读者推荐什么。",
    ],
}


def _article(text: str, zh: bool, rng: random.Random) -> list[str]:
    """The first 150-300 words (400-800 characters in Chinese) of a reference text, in its
    paragraphs."""
    want = rng.randint(400, 800) if zh else rng.randint(150, 300)
    out: list[str] = []
    size = 0
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        out.append(line)
        size += len(line) if zh else len(line.split())
        if size >= want:
            break
    return out


def _headline(paragraphs: list[str], zh: bool) -> str:
    first = paragraphs[0]
    return first[:24] if zh else " ".join(first.split()[:9])


def newsroom(title: str, paragraphs: list[str], lang: str) -> bytes:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)} | Newsroom</title></head><body>"
        '<header><a href="/">Newsroom</a> <a href="/releases">Releases</a> '
        '<a href="/media">Media kit</a></header>'
        f"<main><article><h1>{html.escape(title)}</h1>"
        '<p class="date">Press release, 2026-11-20</p>'
        f"{body}</article></main><footer>Investor relations | Careers | Contact</footer>"
        "</body></html>"
    ).encode()


def news_site(title: str, paragraphs: list[str], lang: str, others: list[str]) -> bytes:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    related = "".join(
        f'<li><a href="/s/{i}">{html.escape(h)}</a></li>' for i, h in enumerate(others)
    )
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)} - Business Wire Daily</title></head><body>"
        '<nav><ul><li><a href="/n">News</a></li><li><a href="/b">Business</a></li>'
        '<li><a href="/m">Markets</a></li><li><a href="/t">Technology</a></li></ul></nav>'
        f"<main><article><h1>{html.escape(title)}</h1>"
        '<p class="standfirst">A company announcement, as received.</p>'
        f"{body}</article>"
        f'<section class="related"><h2>More business news</h2><ul>{related}</ul></section>'
        "</main><footer>Business Wire Daily. All rights reserved.</footer></body></html>"
    ).encode()


def _signature(body: bytes, url: str) -> PageSignature | None:
    text = extract_text(body, url)
    return page_signature(text) if text else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=60, help="pairs a group and block")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    require_corpus()
    rng = random.Random(args.seed)
    groups = reference_texts(min_words=180, min_chars=500)
    without = dataclasses.replace(DEFAULT_RULE, block_shared=0, apart_distance=65)
    print(f"{args.pairs} pairs a group and block (seed {args.seed}); decided pairwise, k=3\n")
    print(
        "| group | block | different pairs merged, default rule | without the clauses "
        "| the same release in two layouts caught, default | without | "
        "releases of one company dropped in a crawl (index, guard on) |"
    )
    print("|---|---|---|---|---|---|---|")
    for group, pool in groups.items():
        zh = group == "zh"
        lang = "zh" if zh else "en"
        for kind in ("release", "disclaimer"):
            block = BLOCKS[(group, kind)]
            texts = rng.sample(pool, min(len(pool), args.pairs + 1))
            pages = []
            for i, text in enumerate(texts):
                paragraphs = _article(text, zh, rng) + block
                title = _headline(paragraphs, zh)
                url = f"https://newsroom.example/{kind}/{i}"
                others = [_headline(_article(t, zh, rng), zh) for t in rng.sample(pool, 4)]
                own = _signature(newsroom(title, paragraphs, lang), url)
                copy = _signature(
                    news_site(title, paragraphs, lang, others), f"https://wire.example/{i}"
                )
                pages.append((url, own, copy))
            merged, merged_before, caught, caught_before, n_diff, n_same = 0, 0, 0, 0, 0, 0
            for (_, a, _), (_, b, _) in itertools.pairwise(pages):
                if a is None or b is None:
                    continue
                n_diff += 1
                merged += DEFAULT_RULE.decide(b, a, 3) is not None
                merged_before += without.decide(b, a, 3) is not None
            for _, own, copy in pages:
                if own is None or copy is None:
                    continue
                n_same += 1
                caught += DEFAULT_RULE.decide(copy, own, 3) is not None
                caught_before += without.decide(copy, own, 3) is not None
            crawl: Counter[str] = Counter()
            with tempfile.TemporaryDirectory() as tmp, SimhashIndex(Path(tmp) / "ix") as index:
                for url, own, _ in pages:
                    if own is not None:
                        crawl["dropped" if index.check_and_insert(own, url) else "kept"] += 1
            print(
                f"| {group} | {kind} | {merged / n_diff:.1%} ({merged} of {n_diff}) | "
                f"{merged_before / n_diff:.1%} | {caught / n_same:.1%} | "
                f"{caught_before / n_same:.1%} | {crawl['dropped']} of {sum(crawl.values())} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
