"""Hard-wrapped text: read as the paragraphs a browser shows, so a copy keeps its signature
whether extraction kept the wrapped lines or not."""

from __future__ import annotations

import itertools
import random
import textwrap

from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import Fingerprinter, extract_text, hamming, page_signature
from scrapy_simhash.text.rule import DEFAULT_RULE
from scrapy_simhash.text.wrap import columns, join_continued, unwrap

from .test_scrapy_crawl import MIDDLEWARE, crawl, paths
from .test_signature import OTHER, PARAGRAPHS, _plain_layout

ZH_PARAGRAPHS = [
    "山区小镇的老粮站今年春天改建成了图书馆，开馆第一周就接待了三千多名读者。镇里的老人说，粮站"
    "曾经是全镇最热闹的地方，每到秋收，拖拉机从早到晚排在门口，如今这里又一次聚满了人，只是大家"
    "手里拿的不再是粮袋，而是孩子们的借书卡。",
    "设计图书馆的建筑师保留了粮仓原有的木梁和砖墙，在屋顶开了一排天窗，让阅览室整天都有自然光。"
    "她说，改建时最难的是在不破坏旧墙的前提下加装保温层，施工队为此试了好几种做法，最后选用了一"
    "种可以拆卸的内衬板。",
    "图书馆的藏书大多来自城里几所大学的捐赠，也有不少是镇上居民自己送来的旧书。馆长介绍，他们每"
    "个周末都会请志愿者给孩子们讲故事，暑假还打算开设书法和绘画课程，让留在镇上的孩子们有一个安"
    "静学习的地方。",
    "镇政府表示，下一步准备把粮站旁边的晒谷场改造成小广场，方便居民晚上散步和跳舞。附近的商户也"
    "很期待，一家开了二十年的面馆老板说，自从图书馆开门以后，来吃面的年轻人明显多了，他打算在店"
    "里也放一个小书架。",
]
# The behaviour before hard-wrapped text was joined (fingerprint version 4).
LINE_BY_LINE = Fingerprinter(unwrap=False)


def _wrap_zh(paragraph: str, per_line: int = 36) -> list[str]:
    """A paragraph of CJK characters and full-width punctuation (two columns each) wrapped
    at ``2 * per_line`` columns, as a GB2312 text editor wraps it."""
    return [paragraph[i : i + per_line] for i in range(0, len(paragraph), per_line)]


def _shared(a, b) -> int:
    return len(set(a.sentences) & set(b.sentences))


def test_columns_count_cjk_characters_twice():
    assert columns("abc") == 3
    assert columns("图书馆，") == 8
    assert all(columns(line) <= 72 for p in ZH_PARAGRAPHS for line in _wrap_zh(p))


def test_english_wrapped_at_72_columns_is_read_as_its_paragraphs():
    wrapped = "\n\n".join(textwrap.fill(p, 72) for p in PARAGRAPHS)
    assert wrapped.count("\n") > 3 * len(PARAGRAPHS)
    assert unwrap(wrapped) == "\n\n".join(PARAGRAPHS)
    assert page_signature(wrapped) == page_signature("\n".join(PARAGRAPHS))
    # read line by line, the copies shared no sentence, and the paragraphs' short last lines
    # were taken for chrome
    before, flowing = page_signature(wrapped, LINE_BY_LINE), page_signature("\n".join(PARAGRAPHS))
    assert before is not None and flowing is not None
    assert _shared(before, flowing) == 0
    assert before.words < flowing.words


def test_chinese_wrapped_mid_word_is_read_as_its_paragraphs():
    wrapped = "\n\n".join("\n".join(_wrap_zh(p)) for p in ZH_PARAGRAPHS)
    # how a page that shows the same text flowing reads after extraction: each line break a
    # space, or gone where an editor joined the lines
    spaced = "\n".join(" ".join(_wrap_zh(p)) for p in ZH_PARAGRAPHS)
    joined = "\n".join(ZH_PARAGRAPHS)
    assert unwrap(wrapped) == "\n\n".join(" ".join(_wrap_zh(p)) for p in ZH_PARAGRAPHS)
    signature = page_signature(wrapped)
    assert signature is not None and signature == page_signature(spaced)
    flowing = page_signature(joined)
    assert flowing is not None
    # where an editor joined the lines, a sentence runs on where the spaced copies' ends at a
    # space between two CJK characters (version 6): fewer sentences shared, the same words
    assert 0 < _shared(signature, flowing) < len(flowing.sentences)
    assert hamming(signature.fingerprint, flowing.fingerprint) <= 1
    assert flowing.is_near_duplicate(signature) and signature.is_near_duplicate(flowing)
    before = page_signature(wrapped, LINE_BY_LINE)
    assert before is not None and _shared(before, flowing) < DEFAULT_RULE.shared


def test_first_line_indents_and_blank_lines_keep_paragraphs_apart():
    indented = "\n".join(line for p in ZH_PARAGRAPHS for line in _wrap_zh("\u3000\u3000" + p))
    paragraphs = unwrap(indented).split("\n")
    assert [p.replace(" ", "") for p in paragraphs] == ["\u3000\u3000" + p for p in ZH_PARAGRAPHS]
    # a body indented as a whole (an RFC, a quoted e-mail) is joined within its paragraphs
    quoted = "\n\n".join(textwrap.indent(textwrap.fill(p, 68), "   ") for p in PARAGRAPHS)
    assert unwrap(quoted) == "\n\n".join("   " + p for p in PARAGRAPHS)


def test_html_source_lines_kept_with_their_indentation_are_read_as_their_paragraphs():
    """Some extractions keep the line breaks and indentation of HTML whose source is wrapped:
    a paragraph's first line follows its ``<p>``, the rest are indented to the markup's depth."""
    lines = [textwrap.wrap(p, 72) for p in PARAGRAPHS]
    source = "\n".join(
        "\n".join([first, *(" " * 33 + line for line in rest)]) for first, *rest in lines
    )
    assert max(map(len, source.split("\n"))) > 100  # wider than any wrap, with the indent
    assert unwrap(source) == "\n".join(PARAGRAPHS)
    signature = page_signature(source)
    assert signature is not None and signature == page_signature("\n".join(PARAGRAPHS))


def _source_wrapped(paragraph: str, rng: random.Random, indent: int = 32) -> str:
    """A paragraph as trafilatura's fallback extractors return HTML whose source wraps it
    where its editor pleased: each source line a line, the continued ones indented to the
    markup's depth; cut after a word that ends no sentence."""
    words = paragraph.split(" ")
    lines, line = [], [words[0]]
    for before, word in itertools.pairwise(words):
        if not before.endswith((".", "?", "!", ":")) and rng.random() < 0.12:
            lines.append(" ".join(line))
            line = []
        line.append(word)
    lines.append(" ".join(line))
    return ("\n" + " " * indent).join(lines)


def test_a_paragraph_wrapped_in_its_html_source_at_no_one_width_is_read_as_one_line():
    """Version 14: the continued lines of a source-wrapped paragraph (too few, and of too
    many widths, for :func:`unwrap`) are joined to the lines they continue."""
    rng = random.Random(14)
    source = "\n".join(_source_wrapped(p, rng) for p in PARAGRAPHS)
    flowing = "\n".join(PARAGRAPHS)
    assert source.count("\n") > 2 * len(PARAGRAPHS)
    assert unwrap(source) is source  # not hard-wrapped at one width
    assert join_continued(source) == flowing
    signature = page_signature(source)
    assert signature is not None and signature == page_signature(flowing)
    # read line by line (version 13), the short continued lines were taken for chrome and
    # the sentences were cut where the source broke them
    before = page_signature(source, LINE_BY_LINE)
    assert before is not None and signature is not None
    assert before.words < signature.words
    assert _shared(before, signature) < len(signature.sentences)


def test_only_a_line_broken_in_mid_sentence_is_continued():
    """A line that ends a sentence or a colon's lead, a blank line, a list item or table row
    (or a list item's bare mark), a Chinese paragraph's ideographic indent and a single
    space of indentation each keep the line after them apart."""
    kept_apart = [
        "The ferry runs every hour.\n    The first leaves at six.",
        "Install it with:\n    pip install harbour-market",
        "The market opens in May\n\n    with forty stalls",
        "- Ferry timetable changes\n    from Monday morning",
        "The stalls sell fish\n    - and vegetables from the valley",
        "| Market hall | opens |\n    next year",
        "-\n    Ferry timetable changes from Monday",
        "-\t\n    Ferry timetable changes from Monday",
        "山区小镇的老粮站今年春天改建成了图书馆\n\u3000\u3000开馆第一周就接待了三千多名读者",
        "The market opens in May\n with forty stalls",
    ]
    for text in kept_apart:
        assert join_continued(text) is text, text
    assert join_continued("The market opens in May\n\t\twith forty stalls") == (
        "The market opens in May with forty stalls"
    )
    assert join_continued("“The stalls,” she said\n      “are full.”") == (
        "“The stalls,” she said “are full.”"
    )


def test_a_block_of_many_continued_lines_is_joined_whole():
    """A page's code or data block of 200,000 indented lines, none ending a sentence, is
    one line (each line read once: joining it line by line onto the growing line, and
    searching that line's end, took 8 s for 10,000 lines and grew with their square)."""
    lines = [f"    value_{i} = compute(value_{i}, 12)" for i in range(200_000)]
    text = "\n".join(["A block of values", *lines, "", "The end."])
    joined = join_continued(text).split("\n")
    assert len(joined) == 3
    assert joined[0] == " ".join(["A block of values", *(line.strip() for line in lines)])
    assert joined[1:] == ["", "The end."]


def test_a_paragraph_of_many_hard_wrapped_lines_is_joined_whole():
    """A page whose 100,000 lines all fill one width, none ending a sentence (a data dump, a
    catalogue), is one paragraph (each line read once: joining each line onto the growing
    paragraph took a minute for 60,000 lines, a 4 MB page, and grew with their square)."""
    lines = [
        f"Item {i:06d} of the spring catalogue ships from the {depot} depot in {i % 9 + 1} days"
        for i, depot in zip(range(100_000), itertools.cycle(["north", "east", "south"]))
    ]
    text = "\n".join(lines)
    assert unwrap(text) == " ".join(lines)
    assert unwrap(text + "\n\nThe end.") == " ".join(lines) + "\n\nThe end."


def test_joining_continued_lines_changes_white_space_alone():
    rng = random.Random(7)
    words = " ".join(PARAGRAPHS + OTHER).split() + list("".join(ZH_PARAGRAPHS))
    extra = ["", "   ", "- Ferry timetable", "| a | b |", "    indented line", "\u3000\u3000段落"]
    joined = 0
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(1, 6)):
            paragraph = " ".join(rng.choices(words, k=rng.randint(3, 60)))
            lines += [_source_wrapped(paragraph, rng, rng.choice([2, 8, 32]))]
            lines += rng.choices(extra, k=rng.randint(0, 2))
        text = "\n".join(lines)
        once = join_continued(text)
        assert once.split() == text.split()
        joined += once != text
        assert join_continued(once) == once
    assert joined > 100


def test_texts_that_are_not_hard_wrapped_are_left_alone():
    one_line_a_paragraph = "\n".join(PARAGRAPHS + OTHER)
    assert unwrap(one_line_a_paragraph) is one_line_a_paragraph
    # too few full lines to tell, though they are most of the text
    few = textwrap.fill(" ".join(PARAGRAPHS[:3]), 72).split("\n")
    short = "\n".join(few[:6] + [p[:30] for p in OTHER[:4]])
    assert sum(1 for line in short.split("\n") if columns(line) >= 60) == 6
    assert unwrap(short) is short
    # lines as wide as wrapped ones, but each ending its own sentence: a list of questions
    questions = "\n".join(f"{p.split(',')[0][:58]}?" for p in PARAGRAPHS + OTHER)
    assert min(map(columns, questions.split("\n"))) >= 50
    assert unwrap(questions) is questions
    # wrapped paragraphs among more lines of other widths are not enough
    wrapped = [textwrap.fill(p, 72) for p in PARAGRAPHS[:4]]
    assert sum(w.count("\n") for w in wrapped) >= 8
    mixed = "\n".join(wrapped + [f"{p[:20]} {i}" for i in range(8) for p in OTHER])
    assert unwrap(mixed) is mixed


def test_list_items_and_table_rows_are_not_joined_to_the_line_before():
    wrapped = "\n".join(textwrap.fill(p, 72) for p in PARAGRAPHS)
    full_line = textwrap.fill(PARAGRAPHS[0], 72).split("\n")[0]
    items = ["- Ferry timetable changes from Monday", "| Market hall | opens next year |"]
    for item in items:
        text = wrapped.replace(full_line, f"{full_line}\n{item}")
        assert f"{full_line}\n{item}\n" in unwrap(text)


def test_joining_changes_white_space_alone():
    """On texts of every kind (wrapped or not, at several widths, with blank, indented, list
    and menu lines mixed in), unwrapping keeps every other character in its order, and a
    text it joined is not joined again."""
    rng = random.Random(5)
    words = " ".join(PARAGRAPHS + OTHER).split() + list("".join(ZH_PARAGRAPHS))
    extra = ["", "   ", "- Ferry timetable changes", "| a | b |", "Home | News | Sport | Weather"]
    joined = 0
    for _ in range(300):
        lines: list[str] = []
        width = rng.choice([40, 64, 72, 80, 100, 200])
        for _ in range(rng.randint(1, 6)):
            paragraph = " ".join(rng.choices(words, k=rng.randint(5, 120)))
            lines += textwrap.wrap(paragraph, width) + rng.choices(extra, k=rng.randint(0, 2))
        text = "\n".join(lines)
        once = unwrap(text)
        assert once.split() == text.split()
        joined += once != text
        assert unwrap(once) == once
    assert joined > 50  # the texts made include hard-wrapped ones


def test_a_menu_line_as_wide_as_the_text_is_not_joined_to_it():
    menu = "Home | World | Business | Science | Culture | Sport | Weather | Podcasts"
    assert 60 <= columns(menu) <= 72
    wrapped = menu + "\n" + "\n\n".join(textwrap.fill(p, 72) for p in PARAGRAPHS)
    assert unwrap(wrapped).split("\n")[:2] == [menu, PARAGRAPHS[0]]


def _plain_text_page(title: str, paragraphs: list[str]) -> str:
    """An article as plain text wrapped at 72 columns in a ``<pre>`` block (a mailing-list
    archive, a newsletter's web copy)."""
    wrapped = "\n\n".join(textwrap.fill(p, 72) for p in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> | "
        f"<a href='/n'>News</a></nav><article><h1>{title}</h1><pre>{wrapped}</pre>"
        "</article><footer>Contact</footer></body></html>"
    )


def test_an_article_kept_wrapped_in_one_layout_and_flowing_in_another_is_one_article():
    """Through extraction: the text of a plain-text article (a ``<pre>`` block) and the
    same article set in paragraphs on another site."""
    plain = _plain_text_page("Harbour market", PARAGRAPHS)
    formatted = _plain_layout("Harbour market", PARAGRAPHS)
    texts = (
        extract_text(plain, "https://a.example/m"),
        extract_text(formatted, "https://b.example/m"),
    )
    assert texts[0] is not None and texts[1] is not None
    assert "terminal\nwill" in texts[0]  # extraction kept the wrapped lines
    first, second = (page_signature(t) for t in texts)
    assert first is not None and second is not None
    assert second.is_near_duplicate(first)
    assert _shared(first, second) == len(first.sentences) == 8
    # read line by line, the sentences veto refused the copy
    old = [page_signature(t, LINE_BY_LINE) for t in texts]
    assert old[0] is not None and old[1] is not None
    assert _shared(old[0], old[1]) == 0
    assert DEFAULT_RULE.decide(old[1], old[0], 3) is None
    assert hamming(first.fingerprint, second.fingerprint) <= 3


@deferred_f_from_coro_f
async def test_a_crawl_drops_the_paragraph_copy_of_a_plain_text_article(site, tmp_path, routes):
    pages = {
        "/wrap/market.txt.html": _plain_text_page("Harbour market", PARAGRAPHS),
        "/wrap/market.html": _plain_layout("Harbour market", PARAGRAPHS),
        "/wrap/railway-path.txt.html": _plain_text_page("Railway path", OTHER),
    }
    links = "".join(f"<li><a href='{path}'>{path}</a></li>" for path in pages)
    routes["/wrap/index.html"] = (200, "text/html", f"<ul>{links}</ul>".encode())
    for path, html in pages.items():
        routes[path] = (200, "text/html; charset=utf-8", html.encode())
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/wrap/index.html")
    assert paths(site, result.kept) == ["/wrap/market.txt.html", "/wrap/railway-path.txt.html"]
    assert result.simhash["simhash/duplicate"] == 1
    assert result.simhash["simhash/duplicate/distance/0"] == 1
