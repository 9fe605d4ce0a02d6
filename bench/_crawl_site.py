"""The site, the server, the spider and the launcher of ``crawl_bench.py``.

``build_site`` writes real corpus pages and near-duplicates of them into a temporary
directory (never into the project), ``python bench/_crawl_site.py serve DIR`` serves that
directory on 127.0.0.1 with a stdlib ``ThreadingHTTPServer`` (run in its own process, so that
serving costs nothing to the crawl process), ``SPIDER`` is the source of the spider that
``scrapy runspider`` crawls it with, and ``LAUNCHER`` runs that crawl and records its rusage.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

TRACKING = "utm_source=newsletter&utm_medium=email&utm_campaign=weekly_{n}"

#: Copies made of each page, in this order: every page gets the first kind of copy before any
#: page gets the second, and so on, until the site has the pages asked for.
#:   original   the corpus page as it was fetched (its own bytes and charset)
#:   tracking   the same page under its URL with utm_* parameters (the same bytes)
#:   decorated  dates changed, ads and a related-articles list added, tracking on its links
#:   moved      the article's text in another site's page layout (syndicated copy)
#:   edited     1% of the words edited, in the page's own layout (an updated version)
KINDS = ("original", "tracking", "decorated", "moved", "edited")


def build_site(pages: list, n: int, out: Path, seed: int = 7) -> list[tuple[str, str]]:
    """Write up to ``n`` pages into ``out`` (``routes.json`` maps each path to its file and
    content type) and return ``(path, kind)`` per page, shuffled (the crawl order)."""
    from _legacy_variants import decorate, edit, jaccard, move_into, page_title, tokenize

    from scrapy_simhash import extract_text

    rng = random.Random(seed)
    started = time.perf_counter()
    texts = {p.rid: extract_text(p.html, p.url or None) for p in pages}
    originals = [p for p in pages if texts[p.rid]]
    titles = {p.rid: page_title(p.html) for p in originals}
    # Layouts an article can be moved into: putting the page's own text back gives that text
    # (otherwise the layout's own article survives somewhere on the page).
    templates = set()
    for p in originals:
        own = texts[p.rid]
        rebuilt = move_into(p.html, own, own, titles[p.rid])
        again = extract_text(rebuilt) if rebuilt else None
        if again and jaccard(own, again) >= 0.9:
            templates.add(p.rid)
    by_group: dict[str, list] = defaultdict(list)
    for p in originals:
        by_group[p.group].append(p)
    pools = {
        g: [w for p in ps for w in tokenize(texts[p.rid], g) if any(map(str.isalnum, w))][:20000]
        for g, ps in by_group.items()
    }

    out.mkdir(parents=True, exist_ok=True)
    routes: dict[str, tuple[str, str]] = {}
    site: list[tuple[str, str]] = []

    def put(path: str, kind: str, body: bytes, charset: str) -> None:
        name = f"{len(routes):05d}.html"
        (out / name).write_bytes(body)
        routes[path] = (name, f"text/html; charset={charset}")
        site.append((path, kind))

    def copy(p, kind: str) -> tuple[str, bytes] | None:
        g, text, title = p.group, texts[p.rid], titles[p.rid]
        html = None
        if kind == "decorated":
            related = [titles[q.rid] for q in rng.sample(by_group[g], 5)]
            html = decorate(p.html, g, related, rng)
        elif kind == "moved":
            others = [q for q in by_group[g] if q.site != p.site and q.rid in templates]
            if others:
                tpl = rng.choice(others)
                html = move_into(tpl.html, texts[tpl.rid], text, title)
        elif kind == "edited" and p.rid in templates:
            html = move_into(p.html, text, edit(text, g, 0.01, pools[g], rng), title)
        return None if html is None else (f"/{kind}/{p.rid}.html", html.encode("utf-8"))

    # At most a quarter of the pages are originals, so that a small site has copies too.
    chosen = rng.sample(originals, min(len(originals), -(-n // 4)))
    for kind in KINDS:
        for p in chosen:
            if len(site) >= n:
                break
            if kind == "original":
                charset = "utf-8" if p.encoding == "utf-8-sig" else p.encoding
                put(f"/news/{p.rid}.html", kind, p.raw, charset)
            elif kind == "tracking":
                if f"/news/{p.rid}.html" not in routes:
                    continue
                path = f"/news/{p.rid}.html?{TRACKING.format(n=rng.randrange(100))}"
                site.append((path, kind))  # served from the original's file
            else:
                made = copy(p, kind)
                if made is not None:
                    put(made[0], kind, made[1], "utf-8")
    (out / "routes.json").write_text(json.dumps(routes))
    rng.shuffle(site)
    took = time.perf_counter() - started
    print(f"site: {len(site)} pages from {len(originals)} corpus pages in {took:.0f} s")
    return site


# ---------------------------------------------------------------- the server


def serve(directory: str) -> None:
    """Serve ``directory`` (as written by ``build_site``) until killed; print the port."""
    root = Path(directory)
    routes = json.loads((root / "routes.json").read_text())
    bodies = {path: ((root / name).read_bytes(), ctype) for path, (name, ctype) in routes.items()}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Scrapy's connection pool expects

        def do_GET(self) -> None:
            found = bodies.get(urlsplit(self.path).path)
            body, ctype = found if found else (b"not found", "text/plain")
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


# ---------------------------------------------------------------- the spider

#: Run with ``scrapy runspider``; its configuration is the JSON in ``$CRAWL_BENCH``:
#: ``urls`` (a file of URLs, one a line), ``parse`` (``"url"`` or ``"trafilatura"``),
#: ``settings`` (the mode's Scrapy settings) and ``profile`` (CPU time of the plugin's steps).
SPIDER = r"""
import inspect
import json
import os
import resource
import time
from collections import defaultdict

import scrapy

CONFIG = json.loads(os.environ["CRAWL_BENCH"])
CPU = defaultdict(float)


def timed(name, fn):
    # CPU time between the call and the return; a coroutine function is timed from its start to
    # its end (right for the plugin inline, where its awaits never suspend it).
    def account(started):
        took = time.process_time() - started
        CPU[name] += took
        CPU[name + "/slowest"] = max(CPU[name + "/slowest"], took)

    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            account(started)

    async def coroutine_wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return await fn(*args, **kwargs)
        finally:
            account(started)

    return coroutine_wrapper if inspect.iscoroutinefunction(fn) else wrapper


if CONFIG.get("profile"):
    import scrapy_simhash.crawl.service as dedup
    import scrapy_simhash.crawl.pages as pages
    from scrapy_simhash.crawl.middleware import SimhashMiddleware
    from scrapy_simhash.crawl.pipeline import SimhashPipeline

    pages.extract_page = timed("extract", pages.extract_page)
    # the page signature: the fingerprint and the second signal (what the crawl computes)
    pages.page_signature = timed("fingerprint", pages.page_signature)
    dedup.DedupService.check = timed("index", dedup.DedupService.check)
    SimhashMiddleware.process_response = timed("middleware", SimhashMiddleware.process_response)
    SimhashPipeline.process_item = timed("pipeline", SimhashPipeline.process_item)


class BenchSpider(scrapy.Spider):
    name = "crawl_bench"
    custom_settings = CONFIG["settings"]

    async def start(self):
        CPU["startup"] = time.process_time()
        with open(CONFIG["urls"], encoding="utf-8") as f:
            urls = f.read().split()
        for url in urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        if CONFIG["parse"] == "trafilatura":
            import trafilatura

            # the plugin's options, passed in the config: importing them here would load the
            # plugin's package into the spider it is compared with
            options = CONFIG["trafilatura_options"]
            text = trafilatura.extract(response.text, url=response.url, **options)
            yield {"url": response.url, "text": text}
        else:
            yield {"url": response.url}

    def closed(self, reason):
        for name, seconds in CPU.items():
            self.crawler.stats.set_value(f"bench/cpu_ms/{name}", round(1000 * seconds, 1))
        usage = resource.getrusage(resource.RUSAGE_SELF)  # this process alone, not its workers
        self.crawler.stats.set_value(
            "bench/cpu_ms/self", round(1000 * (usage.ru_utime + usage.ru_stime), 1)
        )
        try:  # what the resident memory is at the end: the heap, and mapped files (LMDB)
            with open("/proc/self/status", encoding="ascii") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key in ("RssAnon", "RssFile"):
                        self.crawler.stats.set_value(f"bench/mem_kib/{key}", int(value.split()[0]))
        except OSError:
            pass
"""

#: ``python -c LAUNCHER OUT ARGV...``: runs ARGV in a child forked from this small process and
#: writes the child's ``os.wait4`` rusage to OUT as JSON. The crawl must not be forked from
#: the benchmark itself: Linux keeps ``ru_maxrss`` across fork and exec, so a crawl forked
#: from the benchmark (which holds the corpus) would report the benchmark's peak as its own.
#: The rusage includes the child's own waited-for children (worker processes): their CPU is
#: counted, but ``ru_maxrss`` is the largest single process. So a thread also samples, every
#: 100 ms, the resident memory of the child and all its descendants together (``tree_kib``).
LAUNCHER = """
import json, os, sys, threading, time

def tree_rss_kib(pid):
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{p}/task"):  # children of every thread
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, StopIteration, ValueError):
            pass
    return total

pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
peak = [0]
done = threading.Event()

def sample():
    while not done.wait(0.1):
        peak[0] = max(peak[0], tree_rss_kib(pid))

threading.Thread(target=sample, daemon=True).start()
_, status, ru = os.wait4(pid, 0)
done.set()
with open(sys.argv[1], "w") as f:
    json.dump(
        {"utime": ru.ru_utime, "stime": ru.ru_stime, "maxrss_kib": ru.ru_maxrss,
         "tree_kib": peak[0]},
        f,
    )
sys.exit(os.waitstatus_to_exitcode(status))
"""


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        sys.exit("usage: _crawl_site.py serve DIR")
