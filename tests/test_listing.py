"""Listing pages (a blog's home, label and archive pages showing several posts whole): found
in pages written for these tests, with real lxml and trafilatura."""

from __future__ import annotations

import pytest
import trafilatura

from scrapy_simhash import PageSignature, extract_page, extract_text
from scrapy_simhash.crawl.pages import PageOptions, PageWork
from scrapy_simhash.text.chrome import line_size
from scrapy_simhash.text.listing import MIN_POST_WORDS, count_posts

POSTS = [
    (
        "/2026/11/orchard.html",
        "Saving the old orchard",
        [
            "Volunteers spent the weekend pruning the apple trees in the abandoned orchard "
            "behind the mill, some of which were planted more than a century ago.",
            "A local nursery has offered to graft cuttings from the oldest trees, so that "
            "varieties nobody else grows any more can be planted in school gardens.",
            "The owner of the land agreed to lease the orchard to the village for a nominal "
            "rent, on condition that the public footpath through it stays open all year.",
            "Next spring the group hopes to press its first juice and sell it at the fair to "
            "pay for fencing that will keep the deer away from the young trees.",
        ],
    ),
    (
        "/2026/11/bridge.html",
        "The footbridge reopens",
        [
            "The wooden footbridge over the canal reopened on Monday after six months of "
            "repairs, and commuters no longer need to walk the long way round by the lock.",
            "Engineers replaced every plank of the deck and strengthened the piers with steel "
            "collars, which should let the bridge stand for another fifty years of use.",
            "Cyclists must still dismount to cross, a rule that the council says will be "
            "enforced, because the deck is narrow and the railings are only waist high.",
            "A small plaque now records the names of the carpenters who built the original "
            "bridge in the year the canal was dug, found in a ledger at the museum.",
        ],
    ),
    (
        "/2026/11/choir.html",
        "A choir for the whole town",
        [
            "The community choir that began in a kitchen with five singers has grown to more "
            "than sixty members, and now rehearses every Wednesday in the church hall.",
            "Nobody is asked to audition; the conductor says that anyone who can hum a tune "
            "can learn to sing in harmony with enough patience and a few weeks of practice.",
            "Their winter concert will mix carols with songs from the musicals, and tickets "
            "are free, though a collection will be taken for the repair of the church organ.",
            "Members range from a schoolboy of twelve to a retired headmistress of ninety, who "
            "has sung in every choir the town has had since the end of the war.",
        ],
    ),
]

ZH_POSTS = [
    (
        "/zh/garden.html",
        "社区花园开放",
        [
            "城东的社区花园本周末正式向居民开放，这片原本荒废多年的空地在志愿者的努力下变成了种满蔬菜和花卉的绿色角落。",
            "花园分成四十块小菜地，每户居民可以申请一块，租期一年，收取的少量费用将用于购买工具、种子和修理灌溉用的水管。",
            "负责协调的退休教师说，最让她高兴的是邻居们因为种菜而互相认识，孩子们也第一次知道西红柿和黄瓜是怎样长出来的。",
            "街道办事处表示，如果这次试点顺利，明年还会在城西和城北各开辟一处类似的花园，并请有经验的居民担任指导老师。",
        ],
    ),
    (
        "/zh/library.html",
        "旧粮仓变成图书馆",
        [
            "河边的旧粮仓经过两年改造，今年春天作为镇图书馆重新开放，开馆第一周就迎来了两千多名读者，其中一半是中小学生。",
            "设计师保留了原来的木梁和砖墙，并在屋顶开了一排天窗，使阅览室在白天几乎不需要开灯，冬天也显得明亮而温暖。",
            "每个星期六上午都有志愿者给低年级的孩子讲故事，馆长希望暑假开始后还能增加书法课、绘画课和老人使用电脑的课程。",
            "老居民回忆说，以前每到收获季节，粮仓门口总是排满了拖拉机，如今排队的换成了拿着新借书证、争论漫画书的孩子们。",
        ],
    ),
]


def _paragraphs(paragraphs: list[str]) -> str:
    return "".join(f"<p>{p}</p>" for p in paragraphs)


def blogger_post(path: str, title: str, paragraphs: list[str]) -> str:
    return (
        f'<div class="post hentry"><h3 class="post-title entry-title"><a href="{path}">'
        f'{title}</a></h3><div class="post-header">Sunday, 22 November 2026</div>'
        f'<div class="post-body entry-content">{_paragraphs(paragraphs)}</div>'
        f'<div class="post-footer">Posted by Ann <a href="{path}#comments">2 comments</a>'
        "</div></div>"
    )


def wordpress_post(path: str, title: str, paragraphs: list[str]) -> str:
    return (
        '<article class="post type-post status-publish"><header class="entry-header">'
        f'<h2 class="entry-title"><a href="{path}" rel="bookmark">{title}</a></h2>'
        '<div class="entry-meta">November 22, 2026 by Ann</div></header>'
        f'<div class="entry-content">{_paragraphs(paragraphs)}</div>'
        f'<footer class="entry-footer"><a href="{path}#respond">Leave a comment</a></footer>'
        "</article>"
    )


def flat_post(path: str, title: str, paragraphs: list[str]) -> str:
    """A theme that sets the posts' titles and bodies side by side, in one column."""
    return f'<h2><a href="{path}">{title}</a></h2><div class="entry-content">' + (
        f"{_paragraphs(paragraphs)}</div>"
    )


def page(body: str, title: str = "Village notes") -> str:
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head><body>'
        '<header><h1><a href="/">Village notes</a></h1><nav><a href="/">Home</a> '
        '<a href="/about">About</a></nav></header>'
        f'<main class="blog-posts">{body}</main>'
        '<aside class="sidebar"><h2>Archive</h2><ul><li><a href="/2026/11/">November</a></li>'
        '<li><a href="/2026/10/">October</a></li></ul></aside>'
        "<footer>Powered by a blog host.</footer></body></html>"
    )


def tree_of(html: str):
    return trafilatura.load_html(html)


def test_the_posts_are_long_enough_to_be_shown_whole() -> None:
    """What the listings below are made of: posts of more words than an excerpt (a CJK
    character counts a half), and a first paragraph that is shorter."""
    for _, _, paragraphs in POSTS + ZH_POSTS:
        assert line_size(" ".join(paragraphs)) >= MIN_POST_WORDS > line_size(paragraphs[0])


@pytest.mark.parametrize("layout", [blogger_post, wordpress_post, flat_post])
def test_a_blogs_home_page_showing_its_posts_whole_is_a_listing(layout) -> None:
    html = page("".join(layout(*post) for post in POSTS))
    assert count_posts(tree_of(html)) == 3
    found = extract_page(html, "https://village.example/", listings=True)
    assert (found.text, found.posts, found.is_listing) == (None, 3, True)
    # unasked, the page is extracted as ever: trafilatura returns the first post (with the
    # others, in the flat layout), which a post's own page would be a near duplicate of
    text = extract_page(html, "https://village.example/").text
    assert text == extract_text(html, "https://village.example/")
    assert text is not None and POSTS[0][2][0] in text
    assert (POSTS[2][2][0] in text) == (layout is flat_post)


def test_a_chinese_blogs_listing_is_one() -> None:
    html = page("".join(blogger_post(*post) for post in ZH_POSTS), "乡村笔记")
    assert count_posts(tree_of(html)) == 2
    assert extract_page(html, listings=True).is_listing


def test_a_posts_own_page_is_no_listing() -> None:
    for layout in (blogger_post, wordpress_post, flat_post):
        html = page(layout(*POSTS[0]), POSTS[0][1])
        assert count_posts(tree_of(html)) == 0
        found = extract_page(html, listings=True)
        assert found.posts == 0 and found.text is not None
        assert found.text == extract_text(html)


def test_an_article_set_in_blocks_of_one_class_is_no_listing() -> None:
    """An article whose body is cut into blocks of one class by pictures and subheadings
    (that link nowhere, or to their own anchors) is one article."""
    blocks = []
    for n, (_, title, paragraphs) in enumerate(POSTS):
        blocks.append(
            f'<h2 id="part{n}"><a href="#part{n}">{title}</a></h2>'
            f'<div class="article-body">{_paragraphs(paragraphs)}</div>'
            f'<figure><img src="/p{n}.jpg"><figcaption>Picture {n}</figcaption></figure>'
        )
    html = page(f"<article><h1>Three stories of the village</h1>{''.join(blocks)}</article>")
    assert count_posts(tree_of(html)) == 0
    assert not extract_page(html, listings=True).is_listing


def test_an_article_with_excerpts_of_other_posts_is_no_listing() -> None:
    """Excerpts (shorter than a post shown whole) under linked titles, in the body's class."""
    _, title, paragraphs = POSTS[0]
    excerpts = "".join(
        f'<div class="related"><h3><a href="{p}">{t}</a></h3>'
        f'<div class="entry-content"><p>{ps[0]}</p></div></div>'
        for p, t, ps in POSTS[1:]
    )
    html = page(
        f'<article><h1>{title}</h1><div class="entry-content">{_paragraphs(paragraphs)}</div>'
        f"</article><section><h2>More posts</h2>{excerpts}</section>",
        title,
    )
    assert count_posts(tree_of(html)) == 0
    # a listing of such excerpts is no copy of any post: no listing either
    teasers = "".join(
        f'<h2><a href="{p}">{t}</a></h2><div class="entry-content"><p>{ps[0]}</p></div>'
        for p, t, ps in POSTS
    )
    assert count_posts(tree_of(page(teasers))) == 0


def test_posts_under_no_title_linking_away_are_no_listing() -> None:
    """Whole posts of one class whose titles hold no link, or only a link to an anchor of the
    page itself, are not a listing's."""
    untitled = "".join(
        f'<div class="post"><h3>{t}</h3><div class="post-body">{_paragraphs(ps)}</div></div>'
        for _, t, ps in POSTS
    )
    assert count_posts(tree_of(page(untitled))) == 0
    anchored = "".join(
        f'<div class="post"><h3><a href="#post-{n}">{t}</a></h3>'
        f'<div class="post-body">{_paragraphs(ps)}</div></div>'
        for n, (_, t, ps) in enumerate(POSTS)
    )
    assert count_posts(tree_of(page(anchored))) == 0
    scripted = anchored.replace('href="#post-', 'href="javascript:void(0)//')
    assert count_posts(tree_of(page(scripted))) == 0


def test_a_title_of_the_post_before_does_not_count_for_the_next() -> None:
    """Each post needs its own title: a title above the first post is not the second's."""
    (p1, t1, ps1), (_, _, ps2), _ = POSTS
    html = page(
        f'<h2><a href="{p1}">{t1}</a></h2><div class="entry-content">{_paragraphs(ps1)}</div>'
        f'<div class="entry-content">{_paragraphs(ps2)}</div>'
    )
    assert count_posts(tree_of(html)) == 0
    html = page(
        f'<h2><a href="{p1}">{t1}</a></h2><div class="entry-content">{_paragraphs(ps1)}</div>'
        f'<h2><a href="/other.html">Other</a></h2><div class="entry-content">'
        f"{_paragraphs(ps2)}</div>"
    )
    assert count_posts(tree_of(html)) == 2


def test_a_post_body_inside_another_counts_once() -> None:
    """Nested elements of one class (a theme's wrapper named like its body) are one post."""
    posts = "".join(
        f'<div class="post"><h3><a href="{p}">{t}</a></h3><div class="post-body">'
        f'<div class="post-body">{_paragraphs(ps)}</div></div></div>'
        for p, t, ps in POSTS[:2]
    )
    assert count_posts(tree_of(page(posts))) == 2
    one = POSTS[0]
    single = (
        f'<div class="post"><h3><a href="{one[0]}">{one[1]}</a></h3><div class="post-body">'
        f'<div class="post-body">{_paragraphs(one[2])}</div></div></div>'
    )
    assert count_posts(tree_of(page(single))) == 0


def test_a_page_without_a_body_or_a_tree_is_no_listing() -> None:
    assert count_posts(tree_of("<html><body><p>Just a line.</p></body></html>")) == 0
    assert extract_page(b"", listings=True).posts == 0
    assert extract_page(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, listings=True).posts == 0


def test_the_crawls_page_work_skips_a_listing_unless_told_not_to() -> None:
    html = page("".join(blogger_post(*post) for post in POSTS))
    assert PageWork(PageOptions()).html(html, "https://village.example/") == "listing"
    signed = PageWork(PageOptions(skip_listings=False)).html(html, "https://village.example/")
    assert isinstance(signed, PageSignature)
    own = PageWork(PageOptions()).html(page(blogger_post(*POSTS[0])), POSTS[0][0])
    assert isinstance(own, PageSignature)
    # the listing, checked, reads as its first post's own page: what skipping it prevents
    assert signed.is_near_duplicate(own)
