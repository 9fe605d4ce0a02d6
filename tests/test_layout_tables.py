"""Layout tables read as blocks before extraction: real trafilatura on pages written for these
tests, an old portal's page set in nested tables beside the same text in a layout of
``<div>`` elements."""

from __future__ import annotations

import lxml.html
import pytest

from scrapy_simhash import extract_text, page_signature
from scrapy_simhash.text.fingerprint import hamming
from scrapy_simhash.text.layout_tables import MIN_TEXT, layout_tables, unwrap_layout_tables

TITLE = "第三届城市园艺交流会会议日程"
# a programme: lines that end in no full stop (times, places, titles, English names), which
# a table cell runs into one line
AGENDA = [
    "第三届城市园艺交流会（2025年4月18－19日，江城农业大学）",
    "会议日程",
    "4月18日 报到注册",
    "地点：江城农业大学东门学术交流中心一楼大厅",
    "4月18日晚 各地园艺协会负责人联席会",
    "时间：19:00－21:00",
    "地点：学术交流中心三楼第二会议室",
    "主持人：交流会秘书长 林若溪研究员",
    "4月19日上午 开幕式与主题报告",
    "地点：江城农业大学图书馆报告厅",
    "8:30－9:00 开幕式 主持人：江城农业大学园艺学院院长 周明远教授",
    "9:00－9:40 主题报告 屋顶菜园的土壤改良与雨水收集 Green Roof Lab",
    "9:40－10:20 主题报告 社区花园的组织方式与邻里参与 Community Garden Network",
    "10:40－12:00 圆桌论坛 城市空地如何变成四季可用的公共花园 Urban Space Forum",
    "4月19日下午 分组交流",
    "第一组 阳台果树的品种选择与修剪要点 Balcony Orchard Group",
    "第二组 校园种植课程的设计与评价方法 School Garden Group",
    "第三组 老旧小区绿地的改造经验与居民议事规则 Old Estate Group",
    "第四组 城市养蜂的安全距离与蜜源植物配置 Urban Beekeeping Group",
    "16:30－17:00 闭幕式 交流会秘书长总结发言",
    "会务组联系方式：电话 027-88886666 电子邮件 garden@example.org",
]


def table_page(lines: list[str] = AGENDA, title: str = TITLE) -> str:
    """The portal's page: a menu, a side column and the article in cells of nested tables,
    the article's lines split by line breaks."""
    body = "<br>\n".join(lines)
    return (
        f"<html><head><title>{title}</title></head><body>"
        "<table width=760 align=center><tr><td><a href=/>首页</a> | <a href=/news>新闻</a> | "
        "<a href=/meet>会议</a></td></tr></table>"
        "<table width=760 align=center><tr><td width=180 valign=top><table>"
        "<tr><td><a href=/a>学会简介</a></td></tr><tr><td><a href=/b>会员之家</a></td></tr>"
        "</table></td><td valign=top><table width=100% class=main>"
        f"<tr><td align=center><b>{title}</b></td></tr><tr><td>2025-03-02 阅读1234次</td></tr>"
        f"<tr><td><font class=news><p>{body}</p></font></td></tr></table></td></tr></table>"
        "<table width=760 align=center><tr><td>版权所有 江城园艺学会</td></tr></table>"
        "</body></html>"
    )


def div_page(lines: list[str] = AGENDA, title: str = TITLE) -> str:
    """The same text in another site's layout, one paragraph a line."""
    paragraphs = "".join(f"<p>{line}</p>" for line in lines)
    return (
        f"<html><head><title>{title}</title></head><body><header><nav><a href=/>首页</a>"
        f"<a href=/n>动态</a></nav></header><main><article><h1>{title}</h1>"
        f"<div class=meta>园艺周刊 2025-03-05</div>{paragraphs}</article></main>"
        "<footer>园艺周刊 版权所有</footer></body></html>"
    )


def tree(html: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(html)


def test_an_article_in_table_cells_keeps_its_lines():
    text = extract_text(table_page().encode(), "http://portal.example/meet/3.html")
    assert text is not None
    lines = text.splitlines()
    for line in AGENDA:
        assert line in lines  # a line of its own, as in the layout of <div> elements
    assert not any(line.startswith("|") and "会议日程" in line for line in lines)


def test_the_same_article_in_a_table_layout_and_a_div_layout_is_one_page():
    """Run together in one table row, the programme's lines were sentences of another
    length than the copy's, and the two pages were 16 bits apart with one long sentence
    shared (the rule took them for two pages)."""
    in_table = page_signature(extract_text(table_page().encode(), "http://portal.example/m/3"))
    in_divs = page_signature(extract_text(div_page().encode(), "http://weekly.example/a/9"))
    assert in_table is not None and in_divs is not None
    assert hamming(in_table.fingerprint, in_divs.fingerprint) <= 3
    assert len(set(in_table.sentences) & set(in_divs.sentences)) >= 6
    assert in_table.is_near_duplicate(in_divs)


def test_two_programmes_in_one_table_layout_stay_two_pages():
    other = [
        line.replace("园艺", "茶叶").replace("花园", "茶园").replace("果树", "茶树")
        for line in AGENDA[:8]
    ] + [
        "第一组 高山茶园的土壤管理与病虫害绿色防控 Mountain Tea Group",
        "第二组 手工炒茶技艺的传承方式与培训课程 Tea Craft Group",
        "第三组 茶旅融合的乡村民宿经营与游客服务 Tea Travel Group",
        "第四组 茶叶电商的品牌故事与包装设计要点 Tea Brand Group",
        "16:00－16:30 闭幕式 组委会主任总结发言并宣布下届承办单位",
    ]
    first = page_signature(extract_text(table_page().encode(), "http://portal.example/m/3"))
    second = page_signature(
        extract_text(table_page(other, "茶叶交流会会议日程").encode(), "http://portal.example/m/4")
    )
    assert first is not None and second is not None
    assert not first.is_near_duplicate(second)


def test_tables_that_frame_prose_or_tables_lay_the_page_out():
    doc = tree(table_page())
    found = layout_tables(doc)
    # the page's outer frame (a cell holding the side column's table), the article's table
    # (a cell of paragraphs and line breaks); not the menu bar, the side column or the footer
    assert [t.get("width") for t in found] == ["760", "100%"]
    assert found[1].get("class") == "main"


@pytest.mark.parametrize(
    "cell, lays_out",
    [
        ("<p>" + "长" * MIN_TEXT + "</p>", True),  # a paragraph of prose
        ("<p>" + "短" * (MIN_TEXT - 1) + "</p>", False),  # under MIN_TEXT characters
        ("一行<br>" * 3 + "长" * MIN_TEXT, True),  # line breaks
        ("一行<br>" + "长" * MIN_TEXT, False),  # one line break: a value on two lines
        ("长" * (2 * MIN_TEXT), False),  # a long value, no blocks
        ("<table><tr><td>x</td></tr></table>", True),  # a table inside a cell
    ],
)
def test_a_cell_lays_out_when_it_holds_blocks_of_text_or_a_table(cell, lays_out):
    doc = tree(f"<html><body><table><tr><td>{cell}</td><td>x</td></tr></table></body></html>")
    outer = doc.find(".//table")
    assert (outer in layout_tables(doc)) is lays_out


def test_a_data_table_stays_a_table_however_long_its_cells():
    """A list of records with a header row (films with their synopses) is read as rows."""
    synopsis = (
        "<p>A lighthouse keeper relives the same stormy night until she finds out why the "
        "lamp keeps failing, and who has been climbing the stairs at midnight.</p>"
        "<p>Filmed on a small island over three winters with a crew of seven.</p>"
    )
    rows = "".join(
        f"<tr><td>Film {i}</td><td>{2000 + i}</td><td>{synopsis}</td></tr>" for i in range(6)
    )
    for header in (
        "<tr><th>Film</th><th>Year</th><th>About</th></tr>",
        "<thead><tr><td>Film</td></tr></thead>",
        "<caption>Films</caption>",
    ):
        doc = tree(f"<html><body><table>{header}{rows}</table></body></html>")
        assert layout_tables(doc) == []
        intro = "<h1>Films</h1><p>" + "The list of films. " * 5 + "</p>"
        html = f"<html><body>{intro}<table>{header}{rows}</table></body></html>"
        text = extract_text(html.encode())
        assert text is not None and "| Film 3 | 2003 |" in text


def test_a_table_marked_presentation_is_unwrapped_whatever_it_holds():
    doc = tree("<html><body><table role=presentation><tr><td>a</td></tr></table></body></html>")
    assert len(layout_tables(doc)) == 1
    doc = tree("<html><body><table role=none><tr><td>a</td></tr></table></body></html>")
    assert len(layout_tables(doc)) == 1


def test_unwrapping_renames_the_table_its_rows_and_cells_and_keeps_their_attributes():
    doc = tree(table_page())
    article_table = layout_tables(doc)[1]
    unwrap_layout_tables(doc)
    assert article_table.tag == "div" and article_table.get("class") == "main"
    assert all(el.tag not in ("tr", "td", "tbody") for el in article_table.iter())
    # rows are sections, cells divisions, a cell's attributes kept
    assert [row.tag for row in article_table] == ["section"] * 3
    assert all(len(row) == 1 and row[0].tag == "div" for row in article_table)
    assert article_table[0][0].get("align") == "center"
    # the menu bar and the side column (cells of a link each) are tables still
    assert len(doc.findall(".//table")) == 3
    assert [td.text_content() for td in doc.findall(".//table")[1].iter("td")] == [
        "学会简介",
        "会员之家",
    ]


# A match report, short as a product page or a brief is, in an old portal's nested tables: the
# report's cell, then a row of page links ("comment", "this week's top"), a side column, the
# site's menu and footer (the lines and blank cells as such portals serve them).
REPORT = [
    "全场比分：江城队1比5南湖流浪者，本场为第18轮比赛，现场观众43980人。",
    "陈志强在第22分钟利用角球机会首开纪录，刘宇航在第71分钟从23米外远射破门。王建国在第54分钟吃到黄牌。",
    "江城队全场控球率45%，射门23次，其中射正3次；南湖流浪者射门5次，获得1个角球。赛后主队积70分，排名第4位。",
]
PORTAL_REPORT = """<html><head><title>江城队1比5南湖流浪者</title></head><body>
<table width="760" border="0" cellpadding="0" cellspacing="0">
<tr>
<td align="right" valign="bottom" bgcolor="#F0F0F0">
<a href="/">江城体育首页</a> - <a href="/news">新闻</a> -<a href="/football">足球</a> \
-<a href="/basketball">篮球</a> -- ---------- </td>
</tr>
</table>
<table width="760" border="0" cellspacing="0" cellpadding="0">
<tr>
<td valign="top">
<table width="590" border="0" cellspacing="0" cellpadding="0">
<tr>
<td>
<table border="0" width="100%" cellpadding="0" cellspacing="0">
<tr><td class="cc">
{paragraphs}
</td></tr>
</table>
</td>
</tr>
</table>
<table width="590" border="0" cellspacing="0" cellpadding="0">
<tr>
<td height="37" align="center" valign="top">
页面功能  【<a href="/comment">发表评论</a>】【<a href="/top">本周排行</a>】【】【字体：  】【】
【】
【】
</td>
</tr>
</table>
</td>
<td width="170" align="center" valign="top" bgcolor="#DDEEFF">
</td>
</tr>
</table>
<table width="760" border="0" cellspacing="0" cellpadding="0">
<tr>
<td align="center">
<a href="/sports">JCSports</a>
-
- <a href="/map">网站导航</a>
- 网站地图 - <a href="/home">设为首页</a> -
- <a href="/contact">联系我们</a>
-
-  - <br>
Copyright © 2025 Jiangcheng Sports Daily. All rights reserved.江城体育 版权所有</td>
</tr>
</table>
</body></html>"""


@pytest.mark.parametrize("fast", [False, True])
def test_a_short_report_beside_a_row_of_page_links_is_kept(fast):
    # As <div> elements, the row that holds the report and the page links is under 300
    # characters with links only of a word or two, which trafilatura drops as a link block;
    # as <section> it is a row still, which trafilatura never weighed for links.
    page = PORTAL_REPORT.replace("{paragraphs}", "\n".join(f"<p>{p}</p>" for p in REPORT))
    text = extract_text(page.encode(), fast=fast)
    assert text is not None
    assert all(sentence in text for sentence in REPORT)
    doc = tree(page)
    unwrap_layout_tables(doc)
    # the report's own table (one cell of 150 characters) stays a table; the two around it
    # lay the page out
    rows = [el.tag for el in doc.find(".//p").iterancestors() if el.tag in ("tr", "section")]
    assert rows == ["tr", "section", "section"]
