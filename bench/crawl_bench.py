"""Crawl throughput, CPU and memory of a real Scrapy crawl with and without the plugin.

About 2,000 real pages (the corpus pages of ``../shared/corpus`` plus near-duplicates made
from them: the same page with tracking parameters, decorated copies, copies moved into another
site's layout, copies with 1% of the words edited; see ``_crawl_site.KINDS``) are written to a
temporary directory and served on 127.0.0.1 by a stdlib ``ThreadingHTTPServer`` in its own
process. Each mode is one ``scrapy runspider`` subprocess crawling the list of page URLs:

  scrapy       the spider yields ``{"url": response.url}``; no plugin
  trafilatura  the spider extracts each page's text with ``trafilatura.extract`` (the plugin's
               options: no comments, no deduplication, favouring recall) and yields it: what
               a user does without the plugin
  plugin       the spider yields ``{"url": response.url}``; ``scrapy_simhash.Addon`` on (the
               middleware drops near-duplicate pages), a fresh index in a temporary directory,
               the work inline (``SIMHASH_WORKERS = 0``)
  workers      the same with 2 worker processes (``SIMHASH_WORKERS = 2``)

Per mode, medians over ``--rounds``: pages/s (``downloader/response_count`` over Scrapy's
``elapsed_time_seconds``, i.e. from spider open to spider close, process startup left out),
CPU ms/page (user + sys of the crawl process and its worker processes, from ``os.wait4``,
startup included), peak RSS (the largest resident memory of the crawl process and its worker
processes together, sampled every 100 ms by the small launcher the crawl is forked from, see
``_crawl_site.LAUNCHER``), and ratios against ``trafilatura``. Then the same
modes on the first ``--small`` pages (does peak memory stay flat as the crawl grows?), and the
plugin's CPU time split into extraction, page signature (fingerprint and sentences) and index
(timers wrapped around those steps in the plugin runs: two ``time.process_time()`` calls a
step, microseconds a page;
``--no-breakdown`` leaves them out).

    .venv/bin/python bench/crawl_bench.py                     # ~2000 pages, 3 rounds
    .venv/bin/python bench/crawl_bench.py --pages 500 --rounds 1 --modes scrapy,plugin

Adding a mode is one line in ``MODES``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import load_pages, require_corpus  # noqa: E402
from _crawl_site import LAUNCHER, SPIDER, build_site  # noqa: E402

from scrapy_simhash.text.extract import TRAFILATURA_OPTIONS  # noqa: E402

#: Scrapy settings of every mode: as fast as the CPU allows on loopback.
BASE_SETTINGS = {
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "ROBOTSTXT_OBEY": False,
    "LOG_LEVEL": "INFO",
    "TELNETCONSOLE_ENABLED": False,
    "HTTPCACHE_ENABLED": False,
    "MEMUSAGE_ENABLED": True,
}
PLUGIN = {"ADDONS": {"scrapy_simhash.Addon": 300}, "SIMHASH_RESET": True, "SIMHASH_WORKERS": 0}


@dataclass(frozen=True)
class Mode:
    label: str
    parse: str  # what the spider does per page: "url" or "trafilatura"
    settings: dict = field(default_factory=dict)  # on top of BASE_SETTINGS (+ SIMHASH_DIR)


MODES = {
    "scrapy": Mode("scrapy alone", "url"),
    "trafilatura": Mode("trafilatura in the spider", "trafilatura"),
    "plugin": Mode("plugin inline", "url", PLUGIN),
    "workers": Mode("plugin, 2 workers", "url", {**PLUGIN, "SIMHASH_WORKERS": 2}),
}
BASELINE = "trafilatura"
PLUGIN_MODE = "plugin"
WORKERS_MODE = "workers"
AIM_CPU = 1.15  # the plugin inline costs at most this times the CPU per page of trafilatura
AIM_WORKERS = 1.7  # with 2 workers, at least this times the pages/s of the plugin inline
#: Peak memory is "flat" when the full crawl peaks at most this much above the small one.
FLAT_MB, FLAT_SHARE = 10.0, 0.1

_STAT = re.compile(r"'([^']+)':\s*(-?\d+(?:\.\d+)?)(?=[,}\s])")


@dataclass
class Run:
    mode: str
    pages: int
    wall: float  # seconds, the whole subprocess
    cpu: float  # seconds, user + sys of the crawl process
    maxrss_mb: float
    stats: dict[str, float]

    @property
    def responses(self) -> int:
        return int(self.stats.get("downloader/response_count", 0))

    @property
    def pages_per_s(self) -> float:
        return self.responses / self.stats["elapsed_time_seconds"]

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu / self.responses

    @property
    def anon_mb(self) -> float:
        return self.stats.get("bench/mem_kib/RssAnon", 0.0) / 1024

    @property
    def file_mb(self) -> float:
        return self.stats.get("bench/mem_kib/RssFile", 0.0) / 1024

    @property
    def startup_ms(self) -> float:
        return self.stats.get("bench/cpu_ms/startup", 0.0)

    @property
    def self_ms_per_page(self) -> float:
        """CPU per page of the crawl process alone (its worker processes and its startup left
        out)."""
        own = self.stats.get("bench/cpu_ms/self", 1000 * self.cpu)
        return (own - self.startup_ms) / self.responses

    @property
    def workers_ms_per_page(self) -> float:
        """CPU per page of the worker processes (their startup included)."""
        own = self.stats.get("bench/cpu_ms/self", 1000 * self.cpu)
        return (1000 * self.cpu - own) / self.responses

    @property
    def crawl_cpu_ms_per_page(self) -> float:
        """CPU per page once the spider started (imports and Scrapy's setup left out)."""
        return (1000 * self.cpu - self.startup_ms) / self.responses


def crawl(mode: str, urls: list[str], work: Path, tag: str, profile: bool = False) -> Run:
    """One ``scrapy runspider`` of ``urls`` in ``mode``, measured with ``os.wait4``."""
    run_dir = work / f"run-{tag}"
    run_dir.mkdir()
    (run_dir / "urls.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
    settings = {**BASE_SETTINGS, **MODES[mode].settings, "SIMHASH_DIR": str(run_dir / "simhash")}
    config = {
        "urls": str(run_dir / "urls.txt"),
        "parse": MODES[mode].parse,
        "trafilatura_options": dict(TRAFILATURA_OPTIONS),
        "settings": settings,
        "profile": profile,
    }
    env = {**os.environ, "CRAWL_BENCH": json.dumps(config), "PYTHONHASHSEED": "0"}
    usage_file = run_dir / "rusage.json"
    argv = [sys.executable, "-c", LAUNCHER, str(usage_file)]
    argv += [sys.executable, "-m", "scrapy", "runspider", str(work / "bench_spider.py")]
    log = run_dir / "crawl.log"
    with open(log, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.run(argv, cwd=run_dir, env=env, stdout=out, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - started
    usage = json.loads(usage_file.read_text()) if usage_file.exists() else {}
    text = log.read_text(encoding="utf-8", errors="replace")
    dump = text.split("Dumping Scrapy stats:", 1)
    stats = {k: float(v) for k, v in _STAT.findall(dump[1])} if len(dump) == 2 else {}
    run = Run(
        mode,
        len(urls),
        wall,
        usage.get("utime", 0.0) + usage.get("stime", 0.0),
        usage.get("tree_kib", 0) / 1024 or usage.get("maxrss_kib", 0) / 1024,
        stats,
    )
    problems = []
    if proc.returncode:
        problems.append(f"exit status {proc.returncode}")
    if run.responses != len(urls):
        problems.append(f"{run.responses} responses for {len(urls)} URLs")
    if stats.get("log_count/ERROR"):
        problems.append(f"{int(stats['log_count/ERROR'])} errors logged")
    if problems:
        print(f"crawl {tag} ({mode}) failed: {', '.join(problems)}; end of {log}:")
        print("\n".join(text.splitlines()[-40:]))
        sys.exit(1)
    return run


def median(runs: list[Run], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in runs)


def header(n_corpus: int, kinds: Counter, opts: argparse.Namespace) -> None:
    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "?"

    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print("# Crawl benchmark: scrapy alone vs trafilatura in the spider vs the plugin\n")
    print(
        f"scrapy-simhash {ver('scrapy-simhash')}, Scrapy {ver('scrapy')}, "
        f"trafilatura {ver('trafilatura')}, lxml {ver('lxml')}, rjieba {ver('rjieba')}, "
        f"lmdb {ver('lmdb')}, Python {platform.python_version()}"
    )
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores ({cpu_model or platform.machine()}), "
        f"{platform.system()} {platform.release()}, load average at start "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    mix = ", ".join(f"{k} {kinds[k]}" for k in kinds)
    print(f"pages: {sum(kinds.values())} from {n_corpus} corpus pages ({mix})")
    print(
        "served by a ThreadingHTTPServer (HTTP/1.1 keep-alive) in its own process; crawled by "
        "`scrapy runspider`\nwith " + ", ".join(f"{k}={v}" for k, v in BASE_SETTINGS.items())
    )
    print(
        f"rounds: {opts.rounds} (medians); pages/s = downloader/response_count / "
        "elapsed_time_seconds (Scrapy's stats,\nspider open to close); CPU = user+sys of the "
        "crawl process and its workers (os.wait4, interpreter\nstartup included); peak RSS = "
        "largest resident memory of the crawl process and its workers together\n(sampled "
        "every 100 ms)\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=2000, help="pages in the site (default 2000)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per mode (default 3)")
    ap.add_argument(
        "--modes",
        default=",".join(MODES),
        help=f"comma-separated, of {', '.join(MODES)} (default: all)",
    )
    ap.add_argument(
        "--small", type=int, default=100, help="pages of the memory-flatness runs (default 100)"
    )
    ap.add_argument(
        "--no-breakdown", action="store_true", help="no timers around the plugin's steps"
    )
    ap.add_argument("--seed", type=int, default=7)
    opts = ap.parse_args(argv)
    modes = [m.strip() for m in opts.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    require_corpus()
    began = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="crawl-bench-") as tmp:
        work = Path(tmp)
        pages = load_pages()
        site = build_site(pages, opts.pages, work / "site", opts.seed)
        (work / "bench_spider.py").write_text(SPIDER, encoding="utf-8")
        server = subprocess.Popen(
            [sys.executable, str(HERE / "_crawl_site.py"), "serve", str(work / "site")],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            port = int(server.stdout.readline())
            base = f"http://127.0.0.1:{port}"
            urls = [base + path for path, _ in site]
            header(len(pages), Counter(kind for _, kind in site), opts)
            results = run_all(modes, urls, work, opts)
        finally:
            server.terminate()
            server.wait()
    report(modes, results, len(urls), opts)
    print(f"\n(benchmark took {time.perf_counter() - began:.0f} s)")
    return 0


def run_all(modes: list[str], urls: list[str], work: Path, opts: argparse.Namespace) -> dict:
    full: dict[str, list[Run]] = {m: [] for m in modes}
    small: dict[str, list[Run]] = {m: [] for m in modes}
    small_urls = urls[: opts.small]
    for r in range(opts.rounds):
        order = modes[r % len(modes) :] + modes[: r % len(modes)]  # vary who runs first
        for m in order:
            profile = m == PLUGIN_MODE and not opts.no_breakdown
            run = crawl(m, urls, work, f"{m}-{r}", profile=profile)
            full[m].append(run)
            print(
                f"round {r + 1} {m:<12} {run.pages_per_s:7.1f} pages/s  "
                f"{run.cpu_ms_per_page:6.2f} CPU ms/page  {run.maxrss_mb:6.1f} MB  "
                f"(wall {run.wall:.1f} s, elapsed {run.stats['elapsed_time_seconds']:.1f} s)",
                flush=True,
            )
        for m in order:
            small[m].append(crawl(m, small_urls, work, f"{m}-{r}-small"))
    return {"full": full, "small": small}


def report(modes: list[str], results: dict, n: int, opts: argparse.Namespace) -> None:
    full, small = results["full"], results["small"]
    base = full.get(BASELINE)
    base_pps = median(base, "pages_per_s") if base else None
    base_cpu = median(base, "cpu_ms_per_page") if base else None

    print(f"\n## {n} pages, medians of {opts.rounds} round(s)\n")
    print(
        "| mode | pages | pages/s | CPU ms/page | peak RSS MB | pages/s ratio | CPU ratio "
        f"vs {MODES[BASELINE].label} |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for m in modes:
        runs = full[m]
        pps, cpu = median(runs, "pages_per_s"), median(runs, "cpu_ms_per_page")
        ratio_pps = f"{pps / base_pps:.2f}x" if base_pps else "n/a"
        ratio_cpu = f"{cpu / base_cpu:.2f}x" if base_cpu else "n/a"
        print(
            f"| {MODES[m].label} | {n} | {pps:.1f} | {cpu:.2f} | "
            f"{median(runs, 'maxrss_mb'):.1f} | {ratio_pps} | {ratio_cpu} |"
        )

    print("\nCPU split into fixed startup (imports, Scrapy setup: before the first request) and")
    print("per page after it, medians:")
    for m in modes:
        runs = full[m]
        print(
            f"  {MODES[m].label:<26} startup {median(runs, 'startup_ms'):6.0f} ms, "
            f"then {median(runs, 'crawl_cpu_ms_per_page'):.2f} ms/page"
        )

    print(f"\nPeak RSS at {opts.small} pages vs {n} pages (medians):")
    for m in modes:
        a, b = median(small[m], "maxrss_mb"), median(full[m], "maxrss_mb")
        flat = "flat" if b - a <= max(FLAT_MB, FLAT_SHARE * a) else "grows"
        anon = [median(runs, "anon_mb") for runs in (small[m], full[m])]
        mapped = [median(runs, "file_mb") for runs in (small[m], full[m])]
        print(
            f"  {MODES[m].label:<26} {a:6.1f} MB -> {b:6.1f} MB ({b - a:+.1f} MB, {flat}); "
            f"crawl process at the end: heap {anon[0]:.0f} -> {anon[1]:.0f} MB, "
            f"mapped files {mapped[0]:.0f} -> {mapped[1]:.0f} MB"
        )

    if PLUGIN_MODE in modes and BASELINE in modes:
        growth = [
            median(full[m], "maxrss_mb") - median(small[m], "maxrss_mb")
            for m in (PLUGIN_MODE, BASELINE)
        ]
        print(
            f"  the plugin's own growth, beyond {MODES[BASELINE].label}'s: "
            f"{growth[0] - growth[1]:+.1f} MB over {n - opts.small} more pages"
        )

    for mode in (PLUGIN_MODE, WORKERS_MODE):
        if mode not in modes:
            continue
        runs = full[mode]
        keys = ("simhash/checked", "simhash/unique", "simhash/duplicate", "item_scraped_count")
        seen = "; ".join(
            f"{k} {' / '.join(str(int(r.stats.get(k, 0))) for r in runs)}" for k in keys
        )
        print(f"\n{MODES[mode].label} ran (per round): {seen}")
        skipped = {
            k: int(v)
            for k, v in runs[0].stats.items()
            if k.startswith(("simhash/skipped/", "simhash/workers/"))
        }
        if skipped:
            print(f"  skipped (round 1): {skipped}")
        if not all(r.stats.get("simhash/duplicate", 0) > 0 for r in runs):
            print("  WARNING: no near-duplicate dropped: the plugin did not run as expected")
    if PLUGIN_MODE in modes and WORKERS_MODE in modes:
        # With 32 requests in flight, pages arrive in a slightly different order in each run,
        # and where near-duplicates chain (A~B, B~C, A!~C) the order decides what is kept.
        counts = {
            m: sorted({int(r.stats.get("simhash/unique", 0)) for r in full[m]})
            for m in (PLUGIN_MODE, WORKERS_MODE)
        }
        print(
            f"  pages kept, inline: {counts[PLUGIN_MODE]}, with workers: {counts[WORKERS_MODE]} "
            "(the arrival order, hence what is kept in chains of near-duplicates, varies by run)"
        )

    profiled = full.get(PLUGIN_MODE, [])
    if profiled and "bench/cpu_ms/middleware" in profiled[0].stats:
        cpu = {
            k[len("bench/cpu_ms/") :]: statistics.median(r.stats.get(k, 0.0) for r in profiled)
            for k in profiled[0].stats
            if k.startswith("bench/cpu_ms/")
        }
        pages = profiled[0].responses
        inside = cpu.get("extract", 0) + cpu.get("fingerprint", 0) + cpu.get("index", 0)
        mw_other = cpu.get("middleware", 0) - inside
        total = 1000 * median(profiled, "cpu")
        rest = total - cpu.get("startup", 0) - cpu.get("middleware", 0) - cpu.get("pipeline", 0)
        print(
            f"\nWhere the plugin's CPU goes (CPU time of each step measured inside the plugin "
            f"runs,\nmedians, {pages} pages, ms/page):"
        )
        print(
            f"  extraction {cpu.get('extract', 0) / pages:.2f}, page signature "
            f"{cpu.get('fingerprint', 0) / pages:.2f}, index {cpu.get('index', 0) / pages:.2f}, "
            f"rest of the middleware {mw_other / pages:.2f}, pipeline "
            f"{cpu.get('pipeline', 0) / pages:.2f}; Scrapy and the spider {rest / pages:.2f}; "
            f"startup {cpu.get('startup', 0):.0f} ms in all"
        )
        print(
            f"  total {total / pages:.2f} ms/page; slowest single fingerprint "
            f"{cpu.get('fingerprint/slowest', 0):.0f} ms (the first Chinese page loads the "
            f"segmentation's dictionary: {cpu.get('fingerprint/slowest', 0) / pages:.2f} "
            "ms/page of the "
            f"fingerprint's), slowest extraction {cpu.get('extract/slowest', 0):.0f} ms"
        )

    if PLUGIN_MODE in modes and base:
        plugin_cpu = median(full[PLUGIN_MODE], "cpu_ms_per_page")
        ratio = plugin_cpu / base_cpu
        verdict = "met" if ratio <= AIM_CPU else "missed"
        after = median(full[PLUGIN_MODE], "crawl_cpu_ms_per_page") / median(
            base, "crawl_cpu_ms_per_page"
        )
        print(
            f"\nAim: the plugin inline costs at most {AIM_CPU}x the CPU per page of "
            f"{MODES[BASELINE].label}: {verdict} ({ratio:.2f}x; {after:.2f}x leaving startup out)"
        )

    if WORKERS_MODE in modes:
        runs = full[WORKERS_MODE]
        own = median(runs, "self_ms_per_page")
        work = median(runs, "workers_ms_per_page")
        print(
            f"\nWith workers, CPU per page: crawl process (Scrapy, the index, handing pages over) "
            f"{own:.2f} ms, worker processes {work:.2f} ms (startup included). On enough free "
            f"cores one crawl process would sustain about {1000 / own:.0f} pages/s, each worker "
            f"about {1000 / work:.0f} pages/s: the crawl process is the limit "
            f"from about {work / own:.0f} workers on."
        )

    if WORKERS_MODE in modes and PLUGIN_MODE in modes:
        inline = median(full[PLUGIN_MODE], "pages_per_s")
        workers = median(full[WORKERS_MODE], "pages_per_s")
        ratio = workers / inline
        verdict = "met" if ratio >= AIM_WORKERS else "missed"
        cpu = median(full[WORKERS_MODE], "cpu_ms_per_page") / median(
            full[PLUGIN_MODE], "cpu_ms_per_page"
        )
        print(
            f"Aim: with 2 workers the crawl runs at least {AIM_WORKERS}x the pages/s of the "
            f"plugin inline: {verdict} ({ratio:.2f}x; CPU per page {cpu:.2f}x inline's)"
        )


if __name__ == "__main__":
    sys.exit(main())
