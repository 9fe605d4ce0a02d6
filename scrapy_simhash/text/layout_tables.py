"""Tables that lay a page out rather than hold data, read as the blocks they frame.

Sites built before CSS layouts, many of them still served (Chinese portals, forums,
university sites), set the whole page in nested tables: the menu in one cell, the article
in another. trafilatura reads a table as a table, each row one line and each cell's
paragraphs and line breaks run together with spaces::

    | 会议日程 4月18日 报到注册 地点:图书馆报告厅 主持人:... |

The same article in a layout of ``<div>`` elements comes back one line a paragraph, so the
two copies differ in their lines and their sentences (split at line breaks), and the
table's one line, as long as the article, hides where its sentences end.

So a layout table is read as blocks before extraction: the ``<table>`` and its cells are
renamed ``<div>``, its rows (and ``<tbody>``) ``<section>``, attributes kept. (trafilatura
weighs each ``<div>`` for links and drops one under 300 characters whose links are mostly of
a word or two: a portal's row that holds a short article and a line of page links,
"comment", "print", "close", went whole as a ``<div>``, as a ``<tr>`` it never did; a
``<section>`` is read as a ``<div>`` in every other respect.) A table lays the page out when
one of its own cells (not those of a table inside it) holds a table, or holds blocks
(paragraphs, lists, headings) or two line breaks or more, with :data:`MIN_TEXT` characters
of text (an article, a post, a column of prose), and it names no header cells (a ``<th>``, a
``<thead>`` or a ``<caption>``: a data table, whose rows are records, such as a list of films
with long synopses); or when its ``role`` says it presents nothing (``presentation``,
``none``). Data tables stay tables, which extraction keeps as rows.

On the 1,221 real pages of the benchmarks, 63 extract to another text, most of them Chinese
pages set in tables; the token F1 of 50 against their reference text rises, of 9 falls (a
source line, a portal's menu rows or a footer's lines now read with the article), of 4
stays (``docs/quality-history.md``).
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree
from lxml.html import HtmlElement

#: A cell's text, from this many characters up, that makes it a column of the layout when it
#: holds blocks or line breaks (a paragraph or more; a data table's cells hold a value, a
#: name, a line).
MIN_TEXT = 200

_SECTIONS = frozenset({"tbody", "thead", "tfoot"})
_CELLS = frozenset({"td", "th"})
#: What a cell of prose holds: blocks of text (a table inside a cell is caught first).
_BLOCKS = frozenset(
    {"p", "div", "ul", "ol", "dl", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}
)
_PRESENTATION_ROLES = frozenset({"presentation", "none"})
#: A column of the layout, tested in lxml's C code: a table inside the cell, or blocks (or
#: two line breaks) and MIN_TEXT characters of text, each run of white space counted as one.
_LAYS_OUT = etree.XPath(
    ".//table or (("
    + " or ".join(f".//{tag}" for tag in sorted(_BLOCKS))
    + " or count(.//br) >= 2)"
    f" and string-length(normalize-space(.)) >= {MIN_TEXT})"
)


def _rows(table: HtmlElement) -> Iterator[HtmlElement]:
    """The table's own rows (directly in it, or in its ``<tbody>``, ``<thead>``,
    ``<tfoot>``)."""
    for child in table:
        if child.tag in _SECTIONS:
            yield from (row for row in child if row.tag == "tr")
        elif child.tag == "tr":
            yield child


def _cells(table: HtmlElement) -> Iterator[HtmlElement]:
    """The table's own cells (a nested table's are its own)."""
    for child in table:
        if child.tag in _CELLS:  # a cell outside any row (lxml keeps it where it was)
            yield child
    for row in _rows(table):
        yield from (cell for cell in row if cell.tag in _CELLS)


def _lays_out(cell: HtmlElement) -> bool:
    """Whether ``cell`` is a column of the layout: it holds a table, or blocks or line breaks
    and :data:`MIN_TEXT` characters of text (:data:`_LAYS_OUT`)."""
    return bool(_LAYS_OUT(cell))


def _is_data(table: HtmlElement, cells: list[HtmlElement]) -> bool:
    """Whether ``table`` (its own ``cells``) names header cells or a caption (a data
    table)."""
    for child in table:
        if child.tag in ("thead", "caption"):
            return True
    return any(cell.tag == "th" for cell in cells)


def layout_tables(tree: HtmlElement) -> list[HtmlElement]:
    """The tables of ``tree`` that lay the page out (see the module's docstring), in document
    order."""
    found = []
    for table in tree.iter("table"):
        role = (table.get("role") or "").strip().lower()
        if role in _PRESENTATION_ROLES:
            found.append(table)
            continue
        cells = list(_cells(table))  # (read once: for header cells, then for prose)
        if not _is_data(table, cells) and any(_lays_out(cell) for cell in cells):
            found.append(table)
    return found


def unwrap_layout_tables(tree: HtmlElement) -> None:
    """Rename each of :func:`layout_tables`' tables and cells ``<div>``, its rows and their
    groups (``<tbody>``, ``<thead>``, ``<tfoot>``) ``<section>`` (all are found before any is
    renamed: a table inside a cell is judged by its own cells)."""
    for table in layout_tables(tree):
        cells, rows = list(_cells(table)), list(_rows(table))  # (both before any renaming)
        for cell in cells:
            cell.tag = "div"
        for row in rows:
            row.tag = "section"
        for child in table:
            if child.tag in _SECTIONS:
                child.tag = "section"
            elif child.tag == "caption":
                child.tag = "div"
        table.tag = "div"
