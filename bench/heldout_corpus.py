"""Builds a held-out corpus: real pages of the shared corpus's benchmarks that it leaves out.

The quality bench's rules were tuned on the shared corpus (``../shared/corpus`` from the project
root, or ``$SIMHASH_CORPUS``, as in ``bench/_corpus.py``). This writes a second corpus in its
format (``manifest.jsonl``, ``gt.jsonl.gz``, ``pages/<rid>.html.gz``, and a ``README.md`` that
says how each field was made) from the pages of the same public benchmark repositories that the
shared corpus does not hold, so that the bench can be run on pages its rules never saw:

    SIMHASH_CORPUS=DIR python bench/quality.py --seed 7

Sources, each a clone (``git clone https://github.com/<owner>/<name>``; its work tree, its
``.git`` or a bare mirror), read at HEAD with ``git show``; a source not given is skipped:

  --aeb    scrapinghub/article-extraction-benchmark (reference: ground-truth.json)
  --cwced  immortal-autumn/Chinese-Web-Content-Extraction-Dataset (cleaned/<id>.txt)
  --gne    kingname/GeneralNewsExtractor (result.txt, else readability-lxml's extraction)
  --rdb    mozilla/readability (test/test-pages/*/expected.html)
  --traf   adbar/trafilatura (tests/eval, tests/cache; readability-lxml's extraction)

Filter, as the shared corpus's: kept when ``main_f1 >= 0.75`` and ``ref_tokens >= 120``, main_f1
being the bag-of-tokens F1 between ``trafilatura.extract(html, include_comments=False)`` and the
reference, ref_tokens the reference's tokens (jieba words for Chinese, else runs of word
characters; lower-cased). Left out besides: a page at a (repository, path) of the corpus, or with
the bytes of one of its pages (or of an earlier held-out page); a page with the url of a corpus
page (compared without scheme, ``www.`` and trailing slash); readability's synthetic fixtures
(lorem-ipsum references, reordering-paragraphs); a page no encoding decodes strictly or without a
reference text; a page whose reference shares 80% or more of its word 5-grams with one corpus
page's reference.

Needs, beside the project's dependencies (trafilatura pinned: main_f1, and so which pages are
kept, moves with its version; the held-out corpus was built with 2.3.1):

    pip install trafilatura==2.3.1 readability-lxml py3langid 'tldextract>=5.3'

(tldextract: a page's site is its url's registered domain under the public suffix list bundled
with it, as the shared corpus's sites are.) Run, with the clones in the current folder:

    python bench/heldout_corpus.py --out heldout --aeb article-extraction-benchmark \\
        --cwced Chinese-Web-Content-Extraction-Dataset --gne GeneralNewsExtractor \\
        --rdb readability --traf trafilatura
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import dataclasses
import gzip
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from importlib.metadata import version
from multiprocessing import Pool
from pathlib import Path
from urllib.parse import urlsplit

import jieba
import lxml.html
import trafilatura
from _corpus import CORPUS, token_f1
from lxml import etree

try:  # the builder's own needs, not the project's (the docstring's pip command)
    import py3langid
    import tldextract
    from readability import Document
except ImportError as e:
    raise SystemExit(
        f"{e}: this script needs pip install trafilatura==2.3.1 readability-lxml py3langid "
        "'tldextract>=5.3' (beside the project's dependencies)"
    ) from e

jieba.setLogLevel(logging.WARNING)

MIN_F1, MIN_TOKENS = 0.75, 120
NEAR_DUP = 0.8  # share of a reference's 5-grams found in the reference of one corpus page
# readability's hand-made fixture that is not a real page (the lorem-ipsum ones are found by text)
SYNTHETIC_PATHS = {"test/test-pages/reordering-paragraphs/source.html"}
SYNTHETIC_TEXT = re.compile(r"lorem ipsum|dolor sit amet", re.I)
PSL = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)

# GNE test folders whose site the shared corpus named by hand; others keep the folder name.
GNE_SITES = {
    "163": "163.com", "baijiahao": "baijiahao.baidu.com", "cjn": "cjn.cn", "csdn": "csdn.net",
    "ednchina": "ednchina.com", "guancha": "guancha.cn", "huanqiu": "huanqiu.com",
    "people": "people.com.cn", "qq": "qq.com", "thepaper": "thepaper.cn", "toutiao": "toutiao.com",
    "xinhuanet": "xinhuanet.com", "sina": "sina.com.cn", "ifeng": "ifeng.com",
    "gamersky": "gamersky.com", "hexun": "hexun.com", "stcn": "stcn.com", "readhub": "readhub.cn",
    "wechat": "mp.weixin.qq.com", "cjddsb": "cjddsb.com", "njxfhn": "njxfhn.com",
}  # fmt: skip
# Link targets that say nothing of a page's own site (guess_site).
IGNORE_HOSTS = {
    "w3.org", "google.com", "googleapis.com", "gstatic.com", "google-analytics.com", "baidu.com",
    "bdstatic.com", "cnzz.com", "qhimg.com", "facebook.com", "twitter.com", "doubleclick.net",
    "googlesyndication.com", "bshare.cn", "jiathis.com", "addthis.com", "macromedia.com",
    "adobe.com", "microsoft.com", "weibo.com", "sinaimg.cn", "qq.com", "51.la",
    "miibeian.gov.cn", "beian.gov.cn", "cnzz.net", "miit.gov.cn", "yzwb.net", "baidustatic.com",
    "linkedin.com", "youtube.com",
}  # fmt: skip
# The README's table of drops: (counter, heading), in the order a page meets them.
COLUMNS = [
    ("files", "files at HEAD"), ("in_corpus_path", "already in corpus (path)"),
    ("in_corpus_bytes", "same bytes as a corpus page"), ("duplicate", "duplicate within held-out"),
    ("undecodable", "undecodable"), ("no_reference", "no reference"),
    ("synthetic", "synthetic test fixture"), ("same_url", "same url as a corpus page"),
    ("low_f1", f"main_f1 < {MIN_F1}"), ("short", f"ref_tokens < {MIN_TOKENS}"),
    ("near_duplicate", "text mostly a corpus page's"), ("kept", "kept"),
]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A page of a source repository, with its reference text where the source has one."""

    path: str
    rid: str
    raw: bytes
    ref: str | None  # None: readability-lxml's extraction is the reference
    gt_source: str
    url: str
    site_hint: str  # the site when the url gives none
    source: str = ""
    repo: str = ""
    commit: str = ""
    license: str = ""
    sha256: str = ""


def git(git_dir: str, *args: str) -> bytes:
    command = ["git", "-c", "core.quotepath=off", f"--git-dir={git_dir}", *args]
    return subprocess.run(command, check=True, capture_output=True).stdout


def ls(git_dir: str, prefix: str) -> list[str]:
    listing = git(git_dir, "ls-tree", "-r", "-z", "--name-only", "HEAD", prefix)
    return listing.decode("utf-8").split("\0")[:-1]


def show(git_dir: str, path: str) -> bytes:
    return git(git_dir, "show", f"HEAD:{path}")


def show_or_none(git_dir: str, path: str) -> bytes | None:
    try:
        return show(git_dir, path)
    except subprocess.CalledProcessError:
        return None


META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_\-:.]+)", re.I)
XML_ENCODING = re.compile(rb"<\?xml[^>]+encoding\s*=\s*[\"']([A-Za-z0-9_\-.]+)", re.I)
CHINESE_ALIASES = {"gb2312", "gbk", "gb18030", "hz-gb-2312", "x-gbk", "cp936", "euc-cn"}


def normal_encoding(name: str) -> str | None:
    name = name.strip().lower()
    if name in CHINESE_ALIASES or name.replace("_", "-") in CHINESE_ALIASES:
        return "gb18030"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode(raw: bytes) -> tuple[str, str] | tuple[None, None]:
    """(text, encoding) with the first encoding that decodes the bytes strictly, of: utf-8, the
    declared charset, gb18030 (undeclared: only when it gives Chinese), cp1252 (undeclared)."""
    declared = META_CHARSET.search(raw[:20000]) or XML_ENCODING.search(raw[:2000])
    charset = declared and normal_encoding(declared.group(1).decode("ascii", "replace"))
    candidates = ["utf-8-sig", "utf-8"] if raw.startswith(codecs.BOM_UTF8) else ["utf-8"]
    if charset in ("iso8859-1", "ascii") and re.search(rb"[\x80-\x9f]", raw):
        candidates.append("cp1252")  # as browsers read a page labelled latin-1
    candidates += [charset] if charset else []
    # undeclared, not utf-8 and not Chinese: the web's default legacy encoding
    candidates += ["gb18030"] if declared else ["gb18030", "cp1252"]
    for encoding in candidates:
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
        if encoding == "gb18030" and not declared and not re.search(r"[\u4e00-\u9fff]{4}", text):
            continue  # an undeclared non-Chinese legacy page: don't guess
        return text, encoding
    return None, None


BLOCK = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "section", "article", "blockquote", "pre", "header", "footer", "figure", "figcaption", "dl",
    "dt", "dd", "hr", "main", "aside", "nav", "form", "td", "th", "tbody", "thead", "center",
    "address", "details", "summary",
}  # fmt: skip
SPACES = re.compile(r"[ \t\r\f\v\u00a0\u3000\u200b]+")
WORD = re.compile(r"\w+")


def clean_lines(text: str) -> str:
    """Whitespace collapsed, one line per block, no empty lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line for line in (SPACES.sub(" ", ln).strip() for ln in lines) if line)


def parse(html: str) -> lxml.html.HtmlElement | None:
    try:
        return lxml.html.fromstring(html)
    except (etree.ParserError, ValueError):
        return None


def html_text(html: str) -> str:
    """Visible text of an HTML document or fragment, one line per block."""
    root = parse(html) if html.strip() else None
    if root is None:
        return ""
    for invisible in root.xpath("//script|//style|//noscript|//template"):
        invisible.drop_tree()
    out: list[str] = []

    def walk(element: lxml.html.HtmlElement) -> None:
        is_element = isinstance(element.tag, str)  # not a comment or processing instruction
        block = is_element and element.tag in BLOCK
        if block:
            out.append("\n")
        if is_element and element.text:
            out.append(element.text)
        for child in element:
            walk(child)
            if child.tail:
                out.append(child.tail)
        if block:
            out.append("\n")

    walk(root)
    return clean_lines("".join(out))


def readability_text(html: str) -> str:
    try:
        return html_text(Document(html).summary(html_partial=True))
    except Exception:
        return ""


def is_chinese(text: str) -> bool:
    """Han characters over half the letters, and kana and hangul rare beside them."""
    letters = sum(1 for c in text if c.isalpha())
    han = len(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", text))
    kana = len(re.findall(r"[\u3040-\u30ff]", text))
    hangul = len(re.findall(r"[\uac00-\ud7af]", text))
    return letters > 0 and han / letters > 0.5 and kana < 0.05 * han and hangul < 0.05 * han


def tokens(text: str, chinese: bool) -> list[str]:
    if chinese:
        return [t.lower() for t in jieba.lcut(text) if WORD.search(t)]
    return WORD.findall(text.lower())


def shingles(text: str) -> set[bytes]:
    """Hashes of the 5-grams of words (of characters for text with Han characters)."""
    text = text.lower()
    words = re.findall(r"\w", text) if re.search(r"[\u4e00-\u9fff]", text) else WORD.findall(text)
    return {
        hashlib.blake2b(" ".join(words[i : i + 5]).encode(), digest_size=8).digest()
        for i in range(max(1, len(words) - 4))
    }


def registered_domain(host: str) -> str:
    host = host.lower().split(":")[0].strip(".")
    if not host or re.fullmatch(r"[\d.]+", host):
        return host
    return PSL(host).top_domain_under_public_suffix or host


def site_of(url: str) -> str:
    """The url's registered domain; for a Wayback url, the archived address's."""
    parts = urlsplit(url)
    if parts.netloc.endswith("web.archive.org"):
        archived = re.match(
            r"/web/[^/]+/(.+)", parts.path + (f"?{parts.query}" * bool(parts.query))
        )
        if archived:
            inner = archived.group(1)
            if not re.match(r"https?://", inner):
                inner = "http://" + inner.lstrip("/")
            parts = urlsplit(inner)
    return registered_domain(parts.netloc)


def page_url(root: lxml.html.HtmlElement) -> str:
    """The page's own address from <link rel=canonical> or og:url, if absolute."""
    found = root.xpath(
        '//link[contains(translate(@rel,"CANONICAL","canonical"),"canonical")]/@href'
    )
    found += root.xpath('//meta[@property="og:url" or @name="og:url"]/@content')
    for url in found:
        url = url.strip()
        if url.startswith("//"):
            url = "http:" + url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            return url
    return ""


def guess_site(root: lxml.html.HtmlElement) -> str:
    """The registered domain most of the page's absolute links go to."""
    domains: Counter[str] = Counter()
    for href in root.xpath("//a/@href"):
        parts = urlsplit(href.strip())
        if parts.scheme in ("http", "https") and parts.netloc:
            domain = registered_domain(parts.netloc)
            if domain and domain not in IGNORE_HOSTS:
                domains[domain] += 1
    return domains.most_common(1)[0][0] if domains else ""


def norm_url(url: str) -> str:
    """An address compared loosely: no scheme, no www., no trailing slash, no fragment."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    return host + parts.path.rstrip("/") + (f"?{parts.query}" if parts.query else "")


def aeb_pages(git_dir: str) -> Iterator[Candidate]:
    truth = json.loads(show(git_dir, "ground-truth.json"))
    for path in ls(git_dir, "html/"):
        if path.endswith(".html.gz"):
            pid = path.split("/")[-1].removesuffix(".html.gz")
            known = truth.get(pid, {})
            raw = gzip.decompress(show(git_dir, path))
            url = known.get("url") or ""
            yield Candidate(
                path, f"aeb-{pid[:10]}", raw, known.get("articleBody"), "dataset", url, ""
            )


def cwced_pages(git_dir: str) -> Iterator[Candidate]:
    for path in ls(git_dir, "original/"):
        if path.endswith(".html"):
            uid = path.split("/")[-1].removesuffix(".html")
            cleaned = show_or_none(git_dir, f"cleaned/{uid}.txt")
            try:
                ref = None if cleaned is None else cleaned.decode("utf-8-sig")
            except UnicodeDecodeError:
                ref = cleaned.decode("gb18030", "replace")
            raw = show(git_dir, path)
            yield Candidate(
                path, f"cwced-{uid[:8]}", raw, ref, "dataset", "", f"unknown-cwced-{uid[:8]}"
            )


def gne_pages(git_dir: str) -> Iterator[Candidate]:
    results = {}
    result_txt = show(git_dir, "result.txt").decode("utf-8")
    for m in re.finditer(r"^>{5,}(\S+?)>{5,}\s*\n(.*?)\n<{5,}", result_txt, re.S | re.M):
        with contextlib.suppress(ValueError, KeyError):
            results[m.group(1)] = json.loads(m.group(2))["content"]
    for path in ls(git_dir, "tests/"):
        if path.endswith(".html"):
            _, folder, name = path.split("/")
            ref = results.get(path)
            gt_source = "gne-result" if ref else "readability-lxml"
            rid = f"gne-{folder}-{name.removesuffix('.html')}"
            site = GNE_SITES.get(folder, folder)
            yield Candidate(path, rid, show(git_dir, path), ref, gt_source, "", site)


def rdb_pages(git_dir: str) -> Iterator[Candidate]:
    for path in ls(git_dir, "test/test-pages/"):
        if path.endswith("/source.html"):
            folder = path.split("/")[-2]
            expected = show_or_none(git_dir, path.removesuffix("source.html") + "expected.html")
            ref = None if expected is None else html_text(expected.decode("utf-8"))
            site = re.sub(r"-\d+$", "", folder)
            yield Candidate(path, f"rdb-{folder}", show(git_dir, path), ref, "dataset", "", site)


def traf_pages(git_dir: str) -> Iterator[Candidate]:
    keys: dict[str, str] = {}  # file name -> its key: mostly its url, some 'hard::<file>'
    for key, entry in json.loads(show(git_dir, "tests/evaldata.json")).items():
        keys.setdefault(entry["file"], key)
    realworld = show(git_dir, "tests/realworld_tests.py").decode("utf-8")
    for url, name in re.findall(r'^\s*"(https?://[^"]+)":\s*"([^"]+\.html?)"', realworld, re.M):
        keys.setdefault(name, url)
    for path in ls(git_dir, "tests/"):
        if path.startswith(("tests/eval/", "tests/cache/")):
            name = path.split("/")[-1]
            key = keys.get(name, "")
            url = key if re.match(r"https?://", key) else ""
            rid = "traf-" + hashlib.sha1((key or path).encode()).hexdigest()[:10]
            site = traf_site_hint(re.sub(r"\.html?$", "", name))
            yield Candidate(path, rid, show(git_dir, path), None, "readability-lxml", url, site)


def traf_site_hint(name: str) -> str:
    """'leichtathletik-berlin.de-norddeutschland' -> 'leichtathletik-berlin.de', else the name."""
    domain = re.match(r"([a-z0-9-]+(?:\.[a-z0-9-]+)*?\.[a-z]{2,})(?=[.-]|$)", name)
    return domain.group(1) if domain and PSL(domain.group(1)).suffix else name


# name: (GitHub repository, its licence, its pages)
SOURCES: dict[str, tuple[str, str, Callable[[str], Iterator[Candidate]]]] = {
    "aeb": ("scrapinghub/article-extraction-benchmark", "MIT", aeb_pages),
    "cwced": ("immortal-autumn/Chinese-Web-Content-Extraction-Dataset", "MIT", cwced_pages),
    "gne": ("kingname/GeneralNewsExtractor", "MIT", gne_pages),
    "rdb": ("mozilla/readability", "Apache-2.0", rdb_pages),
    "traf": ("adbar/trafilatura", "Apache-2.0", traf_pages),
}


def measure(page: Candidate) -> tuple[str, dict, str]:
    """('ok', manifest row, reference), or (why the page is left out, {}, '')."""
    html, encoding = decode(page.raw)
    if html is None:
        return "undecodable", {}, ""
    ref = clean_lines(readability_text(html) if page.ref is None else page.ref)
    if not ref:
        return "no_reference", {}, ""
    if SYNTHETIC_TEXT.search(ref) or page.path in SYNTHETIC_PATHS:
        return "synthetic", {}, ""
    chinese = is_chinese(ref)
    # py3langid's best ISO 639-1 (two-letter) code; it also knows codes such as 'ext', 'zxx'
    lang = "zh" if chinese else next((c for c, _ in py3langid.rank(ref) if len(c) == 2), "und")
    ref_tokens = tokens(ref, chinese)
    try:
        extracted = trafilatura.extract(html, include_comments=False) or ""
    except Exception:
        extracted = ""
    root = parse(html)
    url = page.url or (page_url(root) if root is not None else "")
    if page.source == "gne":  # as the shared corpus: the folder's known site, else its name
        site = page.site_hint
    else:
        site = site_of(url) if url else ""
        if not site and page.source == "cwced" and root is not None:
            site = guess_site(root)
        site = site or page.site_hint
    row = {
        "rid": page.rid, "path": page.path, "repo": page.repo, "commit": page.commit,
        "license": page.license, "url": url, "site": site, "lang": lang, "encoding": encoding,
        "sha256": page.sha256, "ref_tokens": len(ref_tokens), "gt_source": page.gt_source,
        "main_f1": round(token_f1(tokens(extracted, chinese), ref_tokens), 3),
        "source": page.source,
    }  # fmt: skip
    return "ok", row, ref


def holders_of(hashes: dict[str, set[bytes]]) -> dict[bytes, set[str]]:
    """5-gram hash -> the rids whose reference holds it."""
    holders = defaultdict(set)
    for rid, own in hashes.items():
        for h in own:
            holders[h].add(rid)
    return holders


def closest_page(own: set[bytes], holders: dict[bytes, set[str]]) -> tuple[str, float]:
    """The page holding most of a reference's 5-grams (``own``), and the share of them it
    holds."""
    hits = Counter(rid for h in own for rid in holders.get(h, ()))
    if not hits:
        return "", 0.0
    rid, n = hits.most_common(1)[0]
    return rid, round(n / len(own), 2)


def heldout_pairs(hashes: dict[str, set[bytes]]) -> list[tuple[tuple[str, str], float]]:
    """Pairs of kept pages whose references (their 5-grams, by rid) overlap by more than half
    (the smaller one's)."""
    holders, pairs = holders_of(hashes), {}
    for rid, own in hashes.items():
        shared = Counter(other for h in own for other in holders[h] if other != rid)
        for other, n in shared.items():
            overlap = n / min(len(own), len(hashes[other]))
            if overlap > 0.5:
                pairs[tuple(sorted((rid, other)))] = round(overlap, 2)
    return sorted(pairs.items())


def write_gzip(path: Path, data: bytes) -> None:
    with gzip.GzipFile(str(path), "wb", mtime=0) as f:
        f.write(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus to leave out")
    parser.add_argument("--out", type=Path, required=True, help="the held-out corpus's folder")
    for name, (repo, _, _) in SOURCES.items():
        parser.add_argument(f"--{name}", metavar="PATH", help=f"a clone of {repo}")
    jobs = max(1, (os.cpu_count() or 2) - 1)
    parser.add_argument("--jobs", type=int, default=jobs, help=f"worker processes ({jobs})")
    args = parser.parse_args()
    sources = {name: getattr(args, name) for name in SOURCES if getattr(args, name)}
    if not sources:
        parser.error(f"no source given (--{', --'.join(SOURCES)})")
    if not (args.corpus / "manifest.jsonl").is_file():
        parser.error(f"no corpus at {args.corpus}")
    if args.out.resolve() == args.corpus.resolve():
        parser.error("--out is the corpus to leave out: its pages would be replaced")

    with open(args.corpus / "manifest.jsonl", encoding="utf-8") as f:
        corpus = [json.loads(line) for line in f]
    corpus_paths = {(r["repo"], r["path"]) for r in corpus}
    corpus_hashes = {r["sha256"] for r in corpus}
    corpus_urls = {norm_url(r["url"]) for r in corpus if r["url"]}

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    candidates, seen, commits = [], set(), {}
    for name, location in sources.items():
        repo, licence, pages = SOURCES[name]
        git_dir = str(Path(location) / ".git") if (Path(location) / ".git").exists() else location
        commits[name] = git(git_dir, "rev-parse", "HEAD").decode().strip()
        origin = {"source": name, "repo": repo, "commit": commits[name], "license": licence}
        for page in pages(git_dir):
            counts[name]["files"] += 1
            sha256 = hashlib.sha256(page.raw).hexdigest()
            if (repo, page.path) in corpus_paths:
                counts[name]["in_corpus_path"] += 1
            elif sha256 in corpus_hashes:
                counts[name]["in_corpus_bytes"] += 1
            elif sha256 in seen:
                counts[name]["duplicate"] += 1
            else:
                seen.add(sha256)
                candidates.append(dataclasses.replace(page, **origin, sha256=sha256))
    with Pool(args.jobs) as pool:
        results = pool.map(measure, candidates, chunksize=4)

    with gzip.open(args.corpus / "gt.jsonl.gz", "rt", encoding="utf-8") as f:
        holders = holders_of({e["rid"]: shingles(e["gt"]) for e in map(json.loads, f)})
    kept, refs, grams, near_dups, short_chinese = [], {}, {}, [], []
    used_rids = {r["rid"] for r in corpus}
    for page, (status, row, ref) in zip(candidates, results, strict=True):
        if status == "ok":
            if row["url"] and norm_url(row["url"]) in corpus_urls:
                status = "same_url"
            elif row["main_f1"] < MIN_F1:
                status = "low_f1"
            elif row["ref_tokens"] < MIN_TOKENS:
                status = "short"
                if row["lang"] == "zh":
                    short_chinese.append(row)
            else:
                own = shingles(ref)
                closest, share = closest_page(own, holders)
                if share >= NEAR_DUP:
                    status = "near_duplicate"
                    near_dups.append((row["rid"], closest, share))
        counts[page.source][status if status != "ok" else "kept"] += 1
        if status == "ok":
            if row["rid"] in used_rids:  # never reuse a rid of the corpus or of a kept page
                row["rid"] = f"{row['rid']}-{page.sha256[:6]}"
            used_rids.add(row["rid"])
            kept.append((row, page.raw))
            refs[row["rid"]] = ref
            grams[row["rid"]] = own
    kept.sort(key=lambda item: (item[0]["source"], item[0]["rid"]))

    out: Path = args.out
    shutil.rmtree(out / "pages", ignore_errors=True)
    (out / "pages").mkdir(parents=True)
    manifest, gt = [], []
    for row, raw in kept:
        manifest.append(json.dumps(dict(sorted(row.items())), ensure_ascii=False) + "\n")
        gt.append(
            json.dumps({"rid": row["rid"], "gt": refs[row["rid"]]}, ensure_ascii=False) + "\n"
        )
        write_gzip(out / "pages" / f"{row['rid']}.html.gz", raw)
    (out / "manifest.jsonl").write_text("".join(manifest), encoding="utf-8")
    write_gzip(out / "gt.jsonl.gz", "".join(gt).encode("utf-8"))
    rows = [row for row, _ in kept]
    readme = describe(
        rows, sources, commits, counts, near_dups, short_chinese, heldout_pairs(grams)
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    print(
        f"{len(rows)} pages written to {out}: "
        + ", ".join(f"{s} {counts[s]['kept']}" for s in sources)
    )


def describe(
    rows: list[dict],
    sources: dict[str, str],
    commits: dict[str, str],
    counts: dict[str, Counter[str]],
    near_dups: list[tuple[str, str, float]],
    short_chinese: list[dict],
    pairs: list[tuple[tuple[str, str], float]],
) -> str:
    """The held-out corpus's README.md."""
    langs = Counter(r["lang"] for r in rows)
    other_langs = ", ".join(f"{lang} {n}" for lang, n in langs.most_common() if lang != "zh")
    kept = Counter(r["source"] for r in rows)
    kept_zh = Counter(r["source"] for r in rows if r["lang"] == "zh")
    table = "\n".join(
        f"| {s} | {repo} | {commits[s][:12]} | {licence} | {kept[s]} | {kept_zh[s]} |"
        for s, (repo, licence, _) in ((s, SOURCES[s]) for s in sources)
    )
    headings = " | ".join(heading for _, heading in COLUMNS)
    drops = "\n".join(
        f"| {s} | " + " | ".join(str(counts[s][c]) for c, _ in COLUMNS) + " |" for s in sources
    )
    short_chinese = ", ".join(f"`{r['rid']}` ({r['ref_tokens']})" for r in short_chinese) or "none"
    near_dups = "; ".join(f"`{a}` (~ corpus `{b}`, {share:.0%})" for a, b, share in near_dups)
    pairs = "\n".join(f"- `{a}` / `{b}`: {share:.0%}" for (a, b), share in pairs)
    packages = ("trafilatura", "readability-lxml", "jieba", "py3langid", "tldextract")
    versions = ", ".join(f"{p} {version(p)}" for p in packages)
    return f"""\
# A held-out corpus of real web pages

{len(rows)} real pages (HTML, gzip-compressed) from the same public content-extraction benchmarks as
the project's shared corpus, in the same format, but **none of them is in that corpus**: a page is
left out when its (repository, path) is in that corpus's manifest or when the sha256 of its bytes
equals one of its pages'.
Languages: {langs["zh"]} Chinese, {len(rows) - langs["zh"]} others ({other_langs}).

The pages are third-party content, copyright of their publishers, redistributed by those
repositories.

| source | repository | commit | licence | pages | of them zh |
|---|---|---|---|---|---|
{table}

## Filter

Kept: `main_f1 >= {MIN_F1}` and `ref_tokens >= {MIN_TOKENS}`, where `main_f1` is the bag-of-tokens
F1 between `trafilatura.extract(html, include_comments=False)` (trafilatura
{version("trafilatura")}, on the decoded page) and the reference text, and `ref_tokens` the number
of reference tokens. Tokens: jieba words (those holding a `\\w` character, lower-cased) when the
reference is Chinese, else lower-cased `\\w+` runs. Note: the zh `ref_tokens` of the shared corpus
appear to count differently (closer to one per Han character), so zh counts here are lower and the
{MIN_TOKENS} floor is stricter for Chinese than it was there: Chinese pages with main_f1 >= {MIN_F1}
dropped for fewer than {MIN_TOKENS} jieba words: {short_chinese}.

| source | {headings} |
|---|{"---|" * len(COLUMNS)}
{drops}

Beyond those two exclusions (same repository+path, same bytes), a page is also left out when its
url (compared without scheme, `www.` and trailing slash) is the url of a corpus page (the same
article saved twice), when its reference is lorem ipsum or it is another of readability's
hand-made test fixtures (not a real page), when no encoding decodes its bytes strictly (a few pages
hold stray invalid bytes), and when no reference text can be had (readability-lxml finds nothing).
Last, a page is left out when {NEAR_DUP:.0%} or more of its reference's word 5-grams are in the
reference of one corpus page (leakage into the held-out set): {near_dups or "none"}.

## Things worth knowing

Like the shared corpus, these pages hold real duplicates: pairs of kept pages whose references
overlap by more than half (share of the smaller one's word 5-grams):

{pairs or "none"}

trafilatura was tuned on its own test pages (most pages here come from tests/eval of
adbar/trafilatura), so its figures on them may flatter it; the readability-lxml references of those
pages are an extraction, not an annotation.

## Files

- `pages/<rid>.html.gz`: the page's original bytes (for aeb, the bytes inside the repository's
  `.html.gz`).
- `manifest.jsonl`: `rid, path, repo, commit, license, url, site, lang, encoding, sha256,
  ref_tokens, gt_source, main_f1, source`, as in the shared corpus.
- `gt.jsonl.gz`: `{{rid, gt}}`, the reference main text, one line per block.

## How it was built

`python bench/heldout_corpus.py` of scrapy_simhash, on clones of the repositories above at the
commits above ({versions}).

- References (`gt_source`): aeb `dataset` = `articleBody` of `ground-truth.json`; cwced `dataset` =
  `cleaned/<id>.txt`; rdb `dataset` = the text of `expected.html`; gne `gne-result` = `content` in
  the repository's `result.txt` where it has the page, else `readability-lxml`; traf
  `readability-lxml` = text of readability-lxml's `Document(html).summary()`. All references:
  whitespace collapsed, one line per block, empty lines dropped.
- `encoding`: utf-8 (utf-8-sig with a BOM) when the bytes decode strictly, else the declared meta
  charset (gb2312/gbk read as gb18030; latin-1 as cp1252 when bytes 0x80-0x9f occur), else for
  undeclared pages gb18030 when that gives Chinese text, else cp1252; pages that decode strictly
  with none of these are dropped.
- `url`: aeb from `ground-truth.json`, traf from `tests/evaldata.json` /
  `tests/realworld_tests.py`, others from the page's `<link rel=canonical>` or `og:url` (absolute),
  else empty.
- `site`: registered domain of the url (public suffix list, bundled with tldextract; a Wayback url
  gives the archived site); gne: the folder's known site, else the folder name (as the shared
  corpus); without a url, cwced: the most frequent linked domain; otherwise a name from the path
  (as the shared corpus does).
- `lang`: `zh` when Han characters are over half the letters of the reference (and kana/hangul are
  rare), else py3langid's best-ranked two-letter code for the reference.
- `rid`: as in the shared corpus: `aeb-<id[:10]>`, `cwced-<uuid[:8]>`, `gne-<folder>-<file>`,
  `rdb-<folder>`, `traf-<sha1(key)[:10]>` with the page's key in `tests/evaldata.json` or
  `realworld_tests.py` (sha1 of the path when it has none).
"""


if __name__ == "__main__":
    main()
