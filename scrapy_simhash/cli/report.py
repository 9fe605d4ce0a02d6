"""``scrapy-simhash report``: one self-contained HTML page about an index, read after a crawl.

What the page holds: the totals; the drops per pair of sites (which site's pages were
dropped as copies of which site's: who syndicates whom); a histogram of drop distances; the
largest groups, each kept page with its copies (URL, title, distance, time); and a search box
over the URLs. Everything is inline (styles, SVG charts, one small script, the URLs as JSON):
the file opens with no network. Lists are bounded (:data:`LIMITS`), so a 10^6-entry index
gives a page of a few MB, and the page says what it left out.

Every text from the index (URLs, titles) is escaped for HTML, and the JSON in the script
element cannot close it.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import itertools
import json
import os
import secrets
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..index import Drop, SimhashIndex
from .open_index import open_index
from .output import CliError, Output, iso_time

#: How much of each list the page shows.
LIMITS = {"groups": 50, "copies": 50, "site_pairs": 30, "urls": 20_000, "results": 200}


@dataclass
class Report:
    """What the page shows, gathered from the index."""

    path: str
    totals: dict[str, Any]
    distances: list[int]  # drops at distance 0..k, then beyond k (the sentence rule's) if any
    site_pairs: list[tuple[str, str, int]]  # (dropped page's site, kept page's site, drops)
    groups: list[dict[str, Any]]
    urls: list[list[Any]]  # ["kept" | "dropped", url, duplicate of, distance]
    left_out: list[str] = field(default_factory=list)


def site(url: str | None) -> str:
    """The host of ``url`` (``host:port`` when it has a port), or the URL itself."""
    if not url:
        return "?"
    parts = urlsplit(url)
    return parts.netloc or url


def gather(index: SimhashIndex, k: int, source: str) -> Report:
    """Read what the report shows from ``index``: one pass over the drop records, the
    near-duplicate groups within ``k``, and the entries for the search box."""
    drops: list[Drop] = list(index.drops())
    left_out: list[str] = []  # what the page leaves out, in the order of its notes
    groups = _groups_shown(index, k, left_out)
    k_index = index.max_distance
    distances = [0] * (k_index + 2)  # the last: beyond k, found by their sentences
    pairs: Counter[tuple[str, str]] = Counter()
    for drop in drops:
        distances[min(drop.distance, k_index + 1)] += 1
        pairs[site(drop.key), site(drop.kept)] += 1
    most = LIMITS["site_pairs"]
    site_pairs = [(a, b, n) for (a, b), n in pairs.most_common(most)]
    if len(pairs) > most:
        left_out.append(f"{len(pairs) - most:,} less frequent site pairs")
    if not distances[-1]:
        distances.pop()
    urls = _search_urls(index, drops, left_out)
    return Report(source, _totals(index, k, drops), distances, site_pairs, groups, urls, left_out)


def _totals(index: SimhashIndex, k: int, drops: list[Drop]) -> dict[str, Any]:
    oldest, newest = index.seen_range()
    return {
        "entries": len(index),
        "drop_records": len(drops),
        "dropped_in_dry_runs": sum(d.dry_run for d in drops),
        "k": index.max_distance,
        "groups_within": k,
        "sites_dropped_from": len({site(d.key) for d in drops}),
        # (by the run's JSON: a record written through the API may hold any JSON value)
        "crawls_with_drops": len({json.dumps(d.record["run"]) for d in drops if "run" in d.record}),
        "oldest_entry": iso_time(oldest.record["seen"]) if oldest else None,
        "newest_entry": iso_time(newest.record["seen"]) if newest else None,
        "first_drop": iso_time(min((d.seen for d in drops), default=None)),
        "last_drop": iso_time(max((d.seen for d in drops), default=None)),
        "format_version": index.stats(seen=False)["format_version"],
        "made": iso_time(time.time()),
    }


def _groups_shown(index: SimhashIndex, k: int, left_out: list[str]) -> list[dict[str, Any]]:
    """The largest groups within ``k``, each kept page with its title and its copies."""
    groups = index.groups(k)
    most, copies_most = LIMITS["groups"], LIMITS["copies"]
    if len(groups) > most:
        left_out.append(f"{len(groups) - most:,} smaller groups")
    shown = []
    for number, group in enumerate(groups[:most], 1):
        kept = []
        for key in group.kept:
            entry = index.get(key)
            record = entry.record if entry else {}
            kept.append({"url": key, "title": record.get("title"), "seen": record.get("seen")})
        copies = [
            {
                "url": d.key,
                "title": d.record.get("title"),
                "distance": d.distance,
                "dropped": d.seen,
                "of": d.kept,
                "dry_run": d.dry_run,
            }
            for d in group.dropped[:copies_most]
        ]
        if len(group.dropped) > copies_most:
            left_out.append(f"{len(group.dropped) - copies_most:,} copies of group {number}")
        shown.append({"size": len(group), "kept": kept, "dropped": copies})
    return shown


def _search_urls(index: SimhashIndex, drops: list[Drop], left_out: list[str]) -> list[list[Any]]:
    """The search box's rows, ``[status, url, duplicate of, distance]``: the drops first
    (what a reader asks about), then the stored pages, up to the limit."""
    most = LIMITS["urls"]
    urls: list[list[Any]] = [["dropped", d.key, d.kept, d.distance] for d in drops[:most]]
    if len(urls) < most:
        for match in itertools.islice(index.items(), most - len(urls)):
            urls.append(["kept", match.key, None, None])
    searchable = len(drops) + len(index)
    if searchable > len(urls):
        left_out.append(f"{searchable - len(urls):,} URLs from the search box")
    return urls


# -- HTML ------------------------------------------------------------------------------------

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#b8c2d0;word-break:break-all}
main{max-width:1100px;margin:0 auto;padding:8px 28px 40px}
section{background:#fff;border:1px solid #dde2e8;border-radius:8px;margin:18px 0;padding:14px 20px}
h2{font-size:17px;margin:4px 0 12px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{flex:1 1 150px;background:#eef3fb;border-radius:6px;padding:10px 14px}
.card b{display:block;font-size:24px}.card span{color:#4b5868;font-size:13px}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:4px 8px;
border-bottom:1px solid #eef0f3;vertical-align:top}th{font-size:13px;color:#4b5868}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
a{color:#1f5fbf;text-decoration:none;word-break:break-all}a:hover{text-decoration:underline}
.kept{color:#176b3a;font-weight:600}.dropped{color:#9a3b12}
.group{border-top:1px solid #eef0f3;padding:8px 0}.group:first-of-type{border-top:0}
.title{color:#4b5868;font-size:13px}.note{color:#4b5868;font-size:13px}
input[type=search]{width:100%;box-sizing:border-box;font-size:15px;padding:7px 10px;
border:1px solid #c4ccd6;border-radius:6px}
#results{list-style:none;padding:0;margin:10px 0 0}#results li{padding:3px 0;
border-bottom:1px solid #f0f2f5;word-break:break-all}
svg text{font:12px system-ui,sans-serif;fill:#1d2430}
"""

SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById("urls").textContent);
  var box = document.getElementById("q"), list = document.getElementById("results");
  var count = document.getElementById("count"), most = %(results)d;
  function item(row) {
    var li = document.createElement("li"), tag = document.createElement("span");
    tag.className = row[0];
    tag.textContent = row[0] + " ";
    li.appendChild(tag);
    li.appendChild(document.createTextNode(row[1]));
    if (row[0] === "dropped") {
      var of = document.createElement("span");
      of.className = "title";
      of.textContent = "  duplicate of " + row[2] + " at distance " + row[3];
      li.appendChild(of);
    }
    return li;
  }
  function show() {
    var q = box.value.trim().toLowerCase(), found = 0, rows = [];
    for (var i = 0; i < data.length; i++) {
      if (q && data[i][1].toLowerCase().indexOf(q) < 0) continue;
      found++;
      if (rows.length < most) rows.push(item(data[i]));
    }
    list.replaceChildren.apply(list, rows);
    count.textContent = found + " of " + data.length + " URLs" +
      (found > most ? " (the first " + most + " shown)" : "");
  }
  box.addEventListener("input", show);
  show();
  document.body.setAttribute("data-ready", "1");
})();
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _link(url: str | None) -> str:
    if not url:
        return "<em>a page no longer stored</em>"
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return f'<a href="{_e(url)}" rel="noreferrer">{_e(url)}</a>'
    return _e(url)


def _cards(totals: dict[str, Any]) -> str:
    shown = [
        (totals["entries"], "pages kept (entries)"),
        (totals["drop_records"], "drops recorded"),
        (totals["sites_dropped_from"], "sites with dropped pages"),
        (totals["crawls_with_drops"], "crawls with drops"),
    ]
    cards = "".join(
        f'<div class="card"><b>{n:,}</b><span>{_e(label)}</span></div>' for n, label in shown
    )
    return f'<div class="cards">{cards}</div>'


def _histogram(distances: list[int], k: int) -> str:
    """Drops per distance 0..k, as SVG bars, and a bar of those beyond k (found by the
    sentence rule) when there are some."""
    width, height, bar = 60 * len(distances) + 40, 180, 40
    top = max(distances, default=0) or 1
    parts = [
        f'<svg id="distances" role="img" width="{width}" height="{height}" '
        f'aria-label="drops per distance">'
    ]
    for d, n in enumerate(distances):
        h = round(120 * n / top)
        x = 30 + 60 * d
        what, label = (
            (f"distance {d}", str(d)) if d <= k else (f"beyond {k}, by sentences", f">{k}")
        )
        parts.append(
            f'<rect x="{x}" y="{140 - h}" width="{bar}" height="{h}" fill="#3b7dd8">'
            f"<title>{what}: {n:,} drops</title></rect>"
        )
        parts.append(f'<text x="{x + bar / 2}" y="{134 - h}" text-anchor="middle">{n:,}</text>')
        parts.append(f'<text x="{x + bar / 2}" y="158" text-anchor="middle">{label}</text>')
    axis = "Hamming distance to the kept page"
    parts.append(f'<text x="{width / 2}" y="176" text-anchor="middle">{axis}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _site_pairs(pairs: list[tuple[str, str, int]]) -> str:
    if not pairs:
        return '<p class="note">No drops recorded.</p>'
    top = pairs[0][2]
    rows = []
    for dropped_from, kept_on, n in pairs:
        w = max(2, round(200 * n / top))
        rect = f'<rect width="{w}" height="12" y="1" fill="#d9822b"/>'
        bar = f'<svg width="204" height="14">{rect}</svg>'
        rows.append(
            f"<tr><td>{_e(dropped_from)}</td><td>{_e(kept_on)}</td>"
            f'<td class="n">{n:,}</td><td>{bar}</td></tr>'
        )
    head = (
        "<tr><th>pages dropped from</th><th>as copies of pages on</th><th>drops</th><th></th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _groups(groups: list[dict[str, Any]]) -> str:
    if not groups:
        return (
            '<p class="note">No near duplicates: no two kept pages are within k, and no drop'
            " is recorded.</p>"
        )
    out = []
    head = "<tr><th></th><th>distance</th><th>page</th><th>time</th></tr>"
    for number, group in enumerate(groups, 1):
        rows = []
        for kept in group["kept"]:
            rows.append(
                f'<tr><td class="kept">kept</td><td class="n"></td><td>{_link(kept["url"])}'
                f'<div class="title">{_e(kept["title"])}</div></td>'
                f'<td class="n">{_e(iso_time(kept["seen"]))}</td></tr>'
            )
        several = len(group["kept"]) > 1  # then say which kept page each copy duplicates
        for copy in group["dropped"]:
            what = "dropped (dry run)" if copy["dry_run"] else "dropped"
            of = f" · duplicate of {_e(copy['of'])}" if several else ""
            rows.append(
                f'<tr><td class="dropped">{what}</td><td class="n">{copy["distance"]}</td>'
                f'<td>{_link(copy["url"])}<div class="title">{_e(copy["title"])}{of}</div></td>'
                f'<td class="n">{_e(iso_time(copy["dropped"]))}</td></tr>'
            )
        out.append(
            f'<div class="group"><h3>Group {number}: {group["size"]:,} pages</h3>'
            f"<table>{head}{''.join(rows)}</table></div>"
        )
    return "".join(out)


def render(report: Report) -> str:
    """The report as one HTML document."""
    totals = report.totals
    data = json.dumps(report.urls, ensure_ascii=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    left_out = ""
    if report.left_out:
        items = "".join(f"<li>{_e(x)}</li>" for x in report.left_out)
        left_out = f'<section id="left-out"><h2>Left out</h2><ul>{items}</ul></section>'
    facts = [
        ("k (the Hamming rule's largest distance)", totals["k"]),
        ("groups within", totals["groups_within"]),
        ("drops in dry runs", totals["dropped_in_dry_runs"]),
        ("oldest entry", totals["oldest_entry"]),
        ("newest entry", totals["newest_entry"]),
        ("first drop recorded", totals["first_drop"]),
        ("last drop recorded", totals["last_drop"]),
        ("index format", totals["format_version"]),
    ]
    fact_rows = "".join(f"<tr><th>{_e(a)}</th><td>{_e(b)}</td></tr>" for a, b in facts)
    histogram = _histogram(report.distances, totals["k"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scrapy-simhash report: {_e(report.path)}</title>
<style>{STYLE}</style></head>
<body>
<header><h1>Near duplicates in {_e(report.path)}</h1>
<p>scrapy-simhash report, made {_e(totals["made"])}</p></header>
<main>
<section id="totals"><h2>Totals</h2>{_cards(totals)}<table>{fact_rows}</table></section>
<section id="sites"><h2>Who copies whom: drops per pair of sites</h2>
{_site_pairs(report.site_pairs)}</section>
<section id="histogram"><h2>How near the copies were</h2>{histogram}</section>
<section id="groups"><h2>The largest groups</h2>{_groups(report.groups)}</section>
<section id="search"><h2>Find a URL</h2>
<input type="search" id="q" placeholder="part of a URL" autocomplete="off">
<p class="note" id="count"></p><ul id="results"></ul></section>
{left_out}
</main>
<script type="application/json" id="urls">{data}</script>
<script>{SCRIPT % {"results": LIMITS["results"]}}</script>
</body></html>
"""


def write_whole(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a new file beside it, flushed to
    disk, then renamed over it, so that a full disk or an interrupt leaves the file that was
    there (or none) and no part of the new one. A path that is no regular file (a pipe,
    ``/dev/stdout``) is written in place; through a symbolic link, the file it names."""
    target = os.path.realpath(path)
    if os.path.exists(target) and not os.path.isfile(target):
        Path(target).write_bytes(data)
        return
    folder, name = os.path.split(target)
    temp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
    # Made as open() makes a file (mode 0o666 less the umask), then given the mode of the
    # file it replaces.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if os.path.exists(target):
            shutil.copymode(target, temp)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise


def cmd_report(args: argparse.Namespace, out: Output) -> int:
    """``report INDEX -o FILE``: gather, render, and write the page (``-`` for stdout)."""
    with open_index(args.index) as index:
        k = index.max_distance if args.k is None else args.k
        if not 0 <= k <= index.max_distance:
            raise CliError(
                f"-k must be between 0 and {index.max_distance} (the k this index was built"
                f" with), got {k}"
            )
        page = render(gather(index, k, args.index))
    if args.output == "-":
        stream = out.stream
        if not out.utf and hasattr(stream, "buffer"):  # the UTF-8 its meta tag says
            stream.flush()
            stream.buffer.write(page.encode("utf-8"))
        else:
            stream.write(page)
        return 0
    try:
        write_whole(args.output, page.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    # the table's one line, or (--json, --jsonl) an object, as every command answers
    out.write_object({"report": args.output, "k": k}, [("report", args.output)])
    return 0
