"""Drop records: what a crawl dropped, and of which page, kept in the index (real LMDB, real
crawls of the loopback site, the real command line)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import lmdb
import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash.cli import main
from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.drops import Drop
from scrapy_simhash.index.records import DamagedIndexError, doc_id
from scrapy_simhash.index.redis_index import RedisIndex
from scrapy_simhash.text.signature import PageSignature
from tests.test_index import flip
from tests.test_scrapy_crawl import ARTICLES, COPIES, MIDDLEWARE, SITE, crawl

A = 0x0123456789ABCDEF
B = 0xFEDCBA9876543210
C = 0x5555AAAA5555AAAA
NOW = float(int(time.time()))


@pytest.fixture(params=["lmdb", "redis"])
def open_index(request, tmp_path):
    """Opens the test's index on LMDB or on the real Redis server (the same index each time):
    ``open_index(drop_records=100, **options)``."""
    made = []

    def make(drop_records=100, **options):
        if request.param == "lmdb":
            ix = SimhashIndex(tmp_path / "ix", drop_records=drop_records, **options)
        else:
            server = request.getfixturevalue("redis_server")
            ix = RedisIndex(server.url, request.getfixturevalue("key"), drop_records=drop_records,
                            **options)  # fmt: skip
        made.append(ix)
        return ix

    yield make
    for ix in made:
        ix.close()


@pytest.fixture
def index(open_index):
    ix = open_index()
    ix.insert(A, "a", title="A")
    ix.insert(B, "b")
    return ix


# -- the index, on LMDB and on Redis ---------------------------------------------------------


def test_a_near_duplicate_is_recorded_with_its_record(index):
    before = time.time()
    assert index.check_and_insert(flip(A, 3, 60), "a-copy", title="Copy").key == "a"
    drop = index.dropped("a-copy")
    assert (drop.key, drop.kept, drop.distance, drop.rule) == ("a-copy", "a", 2, "hamming")
    assert drop.fingerprint == flip(A, 3, 60)
    assert drop.record == {"title": "Copy"}
    assert before <= drop.seen <= time.time()
    assert "a-copy" not in index and len(index) == 2  # a drop is not an entry
    assert [d.key for d in index.drops_of("a")] == ["a-copy"]
    assert index.drops_of("b") == [] and index.dropped("a") is None
    assert index.drop_count() == 1 and index.stats()["drops"] == 1
    assert index.verify() == []


def test_a_drop_by_the_sentence_rule_says_so(index):
    """The same article in another layout: far fingerprints, 5 of its 8 long sentences."""
    original = PageSignature(C, tuple(range(1, 9)), 900, 0, 0)
    moved = PageSignature(flip(C, *range(20)), (1, 2, 3, 4, 5, 40, 41, 42), 800, 0, 0)
    index.insert(original, "article")
    match = index.check_and_insert(moved, "moved")
    assert (match.key, match.rule) == ("article", "sentences")
    drop = index.dropped("moved")
    assert (drop.kept, drop.rule, drop.fingerprint) == ("article", "sentences", moved.fingerprint)
    assert drop.distance == bin(original.fingerprint ^ moved.fingerprint).count("1")
    assert index.verify() == []


def test_nothing_is_recorded_without_drop_records(open_index):
    ix = open_index(drop_records=0)
    ix.insert(A, "a")
    assert ix.check_and_insert(flip(A, 1), "copy").key == "a"
    assert ix.dropped("copy") is None and ix.drop_count() == 0
    assert list(ix.drops()) == []


def test_a_key_dropped_again_keeps_one_record_the_newest(index):
    index.check_and_insert(flip(A, 1), "copy", seen=100.0)
    index.check_and_insert(flip(B, 1, 2), "copy", seen=200.0)
    drop = index.dropped("copy")
    assert (drop.kept, drop.distance, drop.seen) == ("b", 2, 200.0)
    assert index.drops_of("a") == [] and [d.key for d in index.drops_of("b")] == ["copy"]
    assert index.drop_count() == 1 and index.verify() == []


@pytest.mark.parametrize("how", ["insert", "check_and_insert", "insert_many"])
def test_a_dropped_key_stored_later_loses_its_record(index, how):
    index.check_and_insert(flip(A, 1), "page")
    assert index.dropped("page") is not None
    if how == "insert":
        index.insert(C, "page")
    elif how == "check_and_insert":  # the page changed: no longer near anything
        assert index.check_and_insert(C, "page") is None
    else:
        assert index.insert_many([(C, "page", {}), (flip(C, 30, 31, 32, 33, 34), "x", {})]) == 2
    assert index.dropped("page") is None and "page" in index
    assert index.drop_count() == 0 and index.verify() == []


def test_removing_a_kept_page_removes_the_records_against_it(index):
    for i in range(3):
        index.check_and_insert(flip(A, i), f"a{i}")
    index.check_and_insert(flip(B, 9), "b0")
    assert index.remove("a")
    assert [index.dropped(f"a{i}") for i in range(3)] == [None] * 3
    assert index.dropped("b0").kept == "b"
    # A dropped key's own record goes with remove() or forget_drop().
    assert index.remove("b0") and index.dropped("b0") is None
    index.check_and_insert(flip(B, 9), "b1")
    assert index.forget_drop("b1") and not index.forget_drop("b1")
    assert not index.remove("never-seen")
    assert index.drop_count() == 0 and index.verify() == []


def test_the_oldest_records_are_evicted_beyond_the_bound(open_index):
    ix = open_index(drop_records=3)
    ix.insert(A, "a")
    for i in range(5):
        ix.check_and_insert(flip(A, i), f"c{i}")
    assert [d.key for d in ix.drops()] == ["c2", "c3", "c4"]  # oldest first
    assert [d.key for d in ix.drops_of("a")] == ["c2", "c3", "c4"]
    assert ix.verify() == []
    ix.close()
    # The bound is the writer's: a smaller one evicts at the next drop, a read keeps all.
    with open_index(readonly=True) as reader:
        assert reader.drop_count() == 3
    with open_index(drop_records=1) as writer:
        writer.check_and_insert(flip(A, 7), "c7")
        assert [d.key for d in writer.drops()] == ["c7"] and writer.verify() == []


def test_drops_stream_over_many_chunks_oldest_first(open_index):
    """2,500 records, read 1,000 at a time: each once, in arrival order."""
    ix = open_index(drop_records=5000)
    ix.insert(A, "a")
    with ix.batch():
        for i in range(2500):
            ix.record_drop(flip(A, i % 64), f"copy{i}", "a", 1, seen=float(i))
    assert [d.key for d in ix.drops()] == [f"copy{i}" for i in range(2500)]
    assert ix.verify() == []


def test_record_drop_writes_a_record_for_a_stored_page(index):
    index.record_drop(flip(B, 4), "later", "b", 1, title="T", seen=50.0)
    drop = index.dropped("later")
    assert (drop.kept, drop.distance, drop.seen, drop.record) == ("b", 1, 50.0, {"title": "T"})
    index.record_drop(flip(B, 20, 30), "moved", "b", 21, "sentences")
    assert (index.dropped("moved").distance, index.dropped("moved").rule) == (21, "sentences")
    with pytest.raises(ValueError, match="'nowhere' is not stored"):
        index.record_drop(1, "x", "nowhere", 0)
    with pytest.raises(ValueError, match=r"distance must be in 0\.\.64"):
        index.record_drop(1, "x", "b", 65)
    with pytest.raises(ValueError, match="rule must be one of"):
        index.record_drop(1, "x", "b", 2, "minhash")
    assert index.drop_count() == 2 and index.verify() == []


#: A drop record's fields named as the parameters of ``record_drop`` (a record is the caller's).
NAMED_AS_PARAMETERS = {
    "rule": "my own",
    "kept": "elsewhere",
    "distance": 99,
    "fingerprint": "f",
    "key": "k",
    "title": "T",
}


def test_add_drop_takes_the_record_whole(index):
    """``add_drop`` records a drop as ``drops()`` gives it, its fields whatever their names;
    ``record_drop(..., **record)`` could not take them."""
    drop = Drop("later", flip(B, 4), "b", 21, 50.0, dict(NAMED_AS_PARAMETERS), "sentences")
    index.add_drop(drop)
    assert index.dropped("later") == drop
    with pytest.raises(ValueError, match="'nowhere' is not stored"):
        index.add_drop(replace(drop, key="x", kept="nowhere"))
    with pytest.raises(ValueError, match="names no kept page"):
        index.add_drop(replace(drop, key="x", kept=None))
    assert index.drop_count() == 1 and index.verify() == []


def test_drop_records_whose_fields_are_named_as_parameters_are_copied(tmp_path, redis_server, key):
    """Copies (``RedisIndex.load`` from LMDB, ``compact`` from Redis to LMDB) carry a drop
    record whose fields are named rule, kept, distance, fingerprint and key as any other
    (they were taken for ``record_drop``'s parameters: TypeError, the copy left half-way)."""
    record = {**NAMED_AS_PARAMETERS, "seen": 50.0}
    with SimhashIndex(tmp_path / "ix", drop_records=10) as lm:
        lm.insert(A, "a")
        assert lm.check_and_insert_many([(flip(A, 2), "copy", record)])[0].key == "a"
        with RedisIndex(redis_server.url, key, layout=lm.layout) as rd:
            assert rd.load(lm) == 1
            assert rd.compact(str(tmp_path / "back")) == 1
            on_redis = rd.dropped("copy")
        with SimhashIndex(tmp_path / "back") as back:
            on_lmdb = back.dropped("copy")
            assert back.verify() == []
        want = Drop("copy", flip(A, 2), "a", 1, 50.0, NAMED_AS_PARAMETERS, "hamming")
        assert lm.dropped("copy") == on_redis == on_lmdb == want


def test_groups_join_near_pages_and_their_dropped_copies(index):
    index.insert(flip(A, 10, 20), "a-twin")  # stored near "a" (another crawl, say)
    index.insert(C, "c")
    index.check_and_insert(flip(A, 1), "a-copy")
    index.check_and_insert(flip(C, 5, 6, 7), "c-copy")
    groups = index.groups()
    assert [(g.kept, [d.key for d in g.dropped]) for g in groups] == [
        (["a", "a-twin"], ["a-copy"]),
        (["c"], ["c-copy"]),
    ]
    assert [m for m in index.clusters()] == [["a", "a-twin"]]  # clusters: stored pages only


def test_reset_empties_the_drop_records(open_index):
    ix = open_index(drop_records=10)
    ix.insert(A, "a")
    ix.check_and_insert(flip(A, 1), "c1")
    ix.close()
    ix = open_index(drop_records=10, reset=True)
    assert ix.drop_count() == 0 and len(ix) == 0
    ix.insert(A, "a")
    ix.check_and_insert(flip(A, 1), "c1")
    assert [d.key for d in ix.drops()] == ["c1"] and ix.verify() == []


def _two_copies_dropped(path: Path) -> None:
    """An index of page ``a`` and the drop records of its copies ``c1`` and ``c2``."""
    with SimhashIndex(path, drop_records=10) as ix:
        ix.insert(A, "a")
        ix.check_and_insert(flip(A, 1), "c1")
        ix.check_and_insert(flip(A, 2), "c2")


def _damage(path: Path, change: Callable[[lmdb.Environment, lmdb.Transaction], None]) -> None:
    """``change`` made to the index's environment in one write, as plain LMDB can."""
    env = lmdb.open(str(path), max_dbs=80)
    try:
        with env.begin(write=True) as txn:
            change(env, txn)
    finally:
        env.close()


def test_verify_names_a_damaged_drop_record(tmp_path):
    path = tmp_path / "ix"
    _two_copies_dropped(path)

    def change(env, txn):
        order = env.open_db(b"dseq", txn=txn)
        txn.delete((1).to_bytes(8, "big"), db=order)  # c1's place in the arrival order
        drops = env.open_db(b"drops", txn=txn)
        c2 = doc_id("c2")
        txn.put(c2, txn.get(c2, db=drops)[:20], db=drops)  # c2's record cut short

    _damage(path, change)
    with SimhashIndex(path, readonly=True) as ix:
        problems = ix.verify()
    assert f"drop record {doc_id('c2').hex()}: index damaged: a drop record fails its checksum" in (
        problems
    )
    assert "drop record of 'c1' is not in the arrival order" in problems


@pytest.mark.parametrize(("value", "said"), [(b"1", "1, below the 2"), (b"x2", "b'x2'")])
def test_verify_names_a_last_drop_number_behind_the_records(capsys, tmp_path, value, said):
    """meta's drops_seq, the last sequence number given to a drop record, set back (or not a
    number): the next drop would take an older record's place in the arrival order (or fail),
    so verify says so before that, as damage (it said ok); one that is no number is found by
    the check made at every open."""
    path = tmp_path / "ix"
    _two_copies_dropped(path)
    _damage(path, lambda env, txn: txn.put(b"drops_seq", value, db=env.open_db(b"meta", txn=txn)))
    code, out, err = cli(capsys, "verify", str(path))
    assert code == 1
    found = "" if value.isdigit() else "index damaged: "
    assert out.startswith(f"problem: {found}the last drop sequence number given is ")
    assert said in out
    assert err == f"scrapy-simhash: error: {path} is damaged: 1 problem(s) found\n"


def test_verify_names_a_damaged_drop_record_on_redis(redis_server, key):
    with RedisIndex(redis_server.url, key, drop_records=10) as ix:
        ix.insert(A, "a")
        ix.check_and_insert(flip(A, 1), "c1")
        ix.check_and_insert(flip(A, 2), "c2")
        ix.check_and_insert(flip(A, 3), "c3")
        assert ix.verify() == []
        with redis_server.client() as client:
            client.zrem(f"{{{key}}}:dseq", doc_id("c1"))  # c1's place in the arrival order
            c2 = doc_id("c2")
            record = client.hget(f"{{{key}}}:drops", c2)
            client.hset(f"{{{key}}}:drops", c2, record[:20])  # c2's record cut short
            c3 = doc_id("c3")  # c3's record with one byte of its key changed
            record = client.hget(f"{{{key}}}:drops", c3)
            client.hset(f"{{{key}}}:drops", c3, record[:47] + b"X" + record[48:])
        problems = ix.verify()
        assert f"drop record {c2.hex()}: index damaged: a drop record fails its checksum" in (
            problems
        )
        assert f"drop record {c3.hex()}: index damaged: a drop record fails its checksum" in (
            problems
        )
        assert "drop record of 'c1' is not in the arrival order" in problems
        with pytest.raises(DamagedIndexError, match="fails its checksum"):
            ix.dropped("c3")


def test_a_redis_drop_record_is_the_lmdb_one_byte_for_byte(tmp_path, redis_server, key):
    """The script builds the record and its CRC-32 as drops.py does on LMDB."""
    seen = 1_700_000_000.25
    with (
        SimhashIndex(tmp_path / "ix", drop_records=10) as lm,
        RedisIndex(redis_server.url, key, drop_records=10) as rd,
    ):
        for ix in (lm, rd):
            ix.insert(A, "a")
            ix.check_and_insert(flip(A, 5), "copy é", seen=seen, title="Ünïcode", n=[1, 2])
        with redis_server.client() as client:
            on_redis = client.hget(f"{{{key}}}:drops", doc_id("copy é"))
    env = lmdb.open(str(tmp_path / "ix"), max_dbs=80, readonly=True)
    try:
        with env.begin() as txn:
            on_lmdb = txn.get(doc_id("copy é"), db=env.open_db(b"drops", txn=txn, create=False))
    finally:
        env.close()
    assert on_redis == on_lmdb and len(on_lmdb) > 60


# -- crawls ----------------------------------------------------------------------------------


def _records(tmp_path) -> dict[str, tuple[str, int, str]]:
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as ix:
        return {d.key: (d.kept, d.distance, d.record.get("title")) for d in ix.drops()}


def _title(path: str) -> str:
    html = (SITE / path.split("?")[0].lstrip("/")).read_text("utf-8")
    return " ".join(html.split("<title>", 1)[1].split("</title>", 1)[0].split())


@deferred_f_from_coro_f
async def test_a_crawl_records_each_drop_by_default(site, tmp_path):
    result = await crawl(MIDDLEWARE, tmp_path, site)
    assert result.simhash["simhash/duplicate"] == len(COPIES)
    expected = {
        site.url(page): (site.url(of), distance, _title(page))
        for page, (of, distance) in COPIES.items()
    }
    assert _records(tmp_path) == expected
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as ix:
        assert ix.get(site.url(ARTICLES[0])).record["title"] == _title(ARTICLES[0])
        runs = {d.record["run"] for d in ix.drops()} | {m.record["run"] for m in ix.items()}
        assert len(runs) == 1  # the crawl's id, on its entries and its drops
    # A second crawl decides the dropped URLs again, against the same pages.
    result = await crawl(MIDDLEWARE, tmp_path, site)
    assert result.simhash["simhash/duplicate"] == len(COPIES) + len(ARTICLES)
    assert _records(tmp_path) == expected


@deferred_f_from_coro_f
async def test_drop_records_can_be_bounded_or_turned_off(site, tmp_path):
    await crawl({**MIDDLEWARE, "SIMHASH_DROP_RECORDS_MAX": 2}, tmp_path / "two", site)
    last_two = [site.url(page) for page in list(COPIES)[-2:]]  # the site's order, one at a time
    assert sorted(_records(tmp_path / "two")) == sorted(last_two)
    result = await crawl({**MIDDLEWARE, "SIMHASH_DROP_RECORDS": False}, tmp_path / "off", site)
    assert result.simhash["simhash/duplicate"] == len(COPIES)
    assert _records(tmp_path / "off") == {}


@deferred_f_from_coro_f
async def test_a_dry_run_records_what_it_would_drop(site, tmp_path):
    result = await crawl({**MIDDLEWARE, "SIMHASH_DRY_RUN": True}, tmp_path, site)
    assert len(result.kept) == len(ARTICLES) + len(COPIES)  # nothing dropped
    with SimhashIndex(tmp_path / "simhash" / "site", readonly=True) as ix:
        drops = list(ix.drops())
    assert sorted(d.key for d in drops) == sorted(site.url(p) for p in COPIES)
    assert all(d.record["dry_run"] is True for d in drops)


# -- the command line ------------------------------------------------------------------------


@pytest.fixture
def crawled(tmp_path):
    """An index as a crawl leaves it: two kept pages, three copies dropped against them."""
    path = tmp_path / "ix"
    now = NOW
    with SimhashIndex(path, drop_records=100) as ix:
        ix.insert(A, "https://a.example/story", title="Story", seen=now - 40 * 86400)
        ix.insert(B, "https://b.example/other", title="Other", seen=now)
        ix.check_and_insert(flip(A, 1, 2), "https://c.example/copy", title="Copy", seen=now)
        ix.check_and_insert(flip(A), "https://a.example/story?utm=x", seen=now - 35 * 86400)
        ix.check_and_insert(flip(B, 5), "https://d.example/mirror", title="Mirror", seen=now)
    return str(path)


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_explain_answers_for_a_dropped_url(capsys, crawled):
    code, out, _ = cli(capsys, "explain", crawled, "https://c.example/copy")
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 0
    assert lines["url"].strip() == "https://c.example/copy"
    when, what = lines["dropped"].strip().split(": ", 1)
    assert what == "duplicate of https://a.example/story at distance 2"
    assert when == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW))
    assert lines["fingerprint"].strip() == f"{flip(A, 1, 2):016x}"
    assert lines["title"].strip() == "Copy"
    code, out, _ = cli(capsys, "explain", crawled, "https://c.example/copy", "--json")
    row = json.loads(out)
    assert (row["duplicate_of"], row["distance"], row["record"]) == (
        "https://a.example/story",
        2,
        {"title": "Copy"},
    )


def test_explain_of_a_dropped_url_checks_k_as_for_a_kept_one(capsys, crawled):
    """``-k`` past the index's k is refused for a dropped URL too (it was ignored there)."""
    for url in ("https://c.example/copy", "https://a.example/story"):
        code, out, err = cli(capsys, "explain", crawled, url, "-k", "99")
        assert (code, out) == (1, "") and "-k must be between 0 and 3" in err


def test_a_drop_record_shows_its_url_field_only_where_it_is_not_the_key(capsys, tmp_path):
    """A crawl's records hold the page's URL, which is the key: output leaves it out there;
    a ``url`` that is not the key, and any other field equal to the key, are shown."""
    path = str(tmp_path / "ix")
    same, other = "https://e.example/same", "https://f.example/other"
    with SimhashIndex(path, drop_records=10) as ix:
        ix.insert(A, "https://a.example/story")
        ix.check_and_insert(flip(A, 1), same, url=same, canonical=same)
        ix.check_and_insert(flip(A, 2), other, url="https://f.example/elsewhere")
    rows = {}
    for key in (same, other):
        code, out, _ = cli(capsys, "explain", path, key, "--json")
        assert code == 0
        rows[key] = json.loads(out)["record"]
    assert rows == {same: {"canonical": same}, other: {"url": "https://f.example/elsewhere"}}


def test_explain_of_a_copy_whose_kept_page_is_gone_says_so(capsys, tmp_path):
    """``remove`` takes a page's drop records with it, so only damage (or an index written by
    hand) leaves a record pointing nowhere; ``explain`` says so instead of failing."""
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=10) as ix:
        ix.insert(A, "https://a.example/story")
        assert ix.check_and_insert(flip(A, 1), "https://c.example/copy") is not None
    _damage(  # the kept page's document, and nothing else
        Path(path),
        lambda env, txn: txn.delete(
            doc_id("https://a.example/story"), db=env.open_db(b"docs", txn=txn)
        ),
    )
    code, out, _ = cli(capsys, "explain", path, "https://c.example/copy")
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 0
    what = lines["dropped"].split(": ", 1)[1]
    assert what == "duplicate of a page no longer stored at distance 1"
    # the report is made too: the copy's site, as copies of pages of an unknown site
    report = tmp_path / "report.html"
    code, _, _ = cli(capsys, "report", path, "-o", str(report))
    assert code == 0
    assert "<tr><td>c.example</td><td>?</td>" in report.read_text(encoding="utf-8")


def _story_and_moved_copy(path: str) -> SimhashIndex:
    """An index (open) holding a story and the drop record of its copy in another layout,
    found by its sentences at distance 20."""
    original = PageSignature(C, tuple(range(1, 9)), 900, 0, 0)
    moved = PageSignature(flip(C, *range(20)), (1, 2, 3, 4, 5, 40, 41, 42), 800, 0, 0)
    ix = SimhashIndex(path, drop_records=10)
    ix.insert(original, "https://a.example/story")
    assert ix.check_and_insert(moved, "https://b.example/moved").rule == "sentences"
    return ix


def test_explain_says_which_rule_dropped_a_copy(capsys, tmp_path):
    """A copy found by its sentences is said to be, with its (large) Hamming distance; one
    found by its fingerprint is not."""
    path = str(tmp_path / "ix")
    with _story_and_moved_copy(path) as ix:
        near = PageSignature(flip(C, 1), tuple(range(1, 9)), 900, 0, 0)
        assert ix.check_and_insert(near, "https://c.example/copy").rule == "hamming"
    said = {}
    for url in ("https://b.example/moved", "https://c.example/copy"):
        code, out, _ = cli(capsys, "explain", path, url)
        assert code == 0
        said[url] = dict(line.split(": ", 1) for line in out.splitlines())["dropped"]
    assert said["https://b.example/moved"].split(": ", 1)[1] == (
        "duplicate of https://a.example/story at distance 20, by the sentence rule"
    )
    assert said["https://c.example/copy"].split(": ", 1)[1] == (
        "duplicate of https://a.example/story at distance 1"
    )


def test_lookup_shows_a_page_found_by_its_sentences(capsys, tmp_path):
    """Beyond the fingerprints within k, ``lookup`` shows the page the crawl's rule would
    drop the one looked up against by its long sentences, and says so."""
    path = str(tmp_path / "ix")
    original = PageSignature(C, tuple(range(1, 9)), 900, 0, 0)
    moved = PageSignature(flip(C, *range(20)), (1, 2, 3, 4, 5, 40, 41, 42), 800, 0, 0)
    with SimhashIndex(path) as ix:
        ix.insert(original, "https://a.example/story")
        ix.insert(moved, "https://b.example/moved")  # stored as it is, not checked
    code, out, _ = cli(capsys, "lookup", path, "--url", "https://b.example/moved", "--json")
    assert code == 0
    assert [(m["url"], m["distance"], m["rule"]) for m in json.loads(out)] == [
        ("https://b.example/moved", 0, "hamming"),
        ("https://a.example/story", 20, "sentences"),
    ]
    code, out, _ = cli(capsys, "lookup", path, "--url", "https://b.example/moved")
    assert out.splitlines()[-1] == (
        "https://a.example/story shares its long sentences: a near duplicate by the sentence rule"
    )


def test_lookup_by_a_url_dropped_by_its_sentences_shows_the_page_kept(capsys, tmp_path):
    """A drop record keeps the fingerprint alone: ``lookup --url`` of a page the sentence
    rule dropped shows the page kept, at the distance and by the rule its record gives."""
    path = str(tmp_path / "ix")
    _story_and_moved_copy(path).close()
    code, out, _ = cli(capsys, "lookup", path, "--url", "https://b.example/moved", "--json")
    assert code == 0
    assert [(m["url"], m["distance"], m["rule"]) for m in json.loads(out)] == [
        ("https://a.example/story", 20, "sentences"),
    ]
    code, out, _ = cli(capsys, "lookup", path, "--url", "https://b.example/moved")
    assert out.splitlines()[-1] == (
        "https://a.example/story shares its long sentences: a near duplicate by the sentence rule"
    )


def test_explain_of_a_kept_url_in_full(capsys, tmp_path):
    """The whole table output: the page, then its stored neighbours and its dropped copies,
    each list after a blank line; a drop's JSON names its rule."""
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=10) as ix:
        ix.insert(A, "https://a.example/story", seen=1_700_000_000.0)
        ix.insert(flip(A, 0, 1), "https://b.example/mirror", seen=1_700_000_100.0)
        ix.check_and_insert(flip(A, 40), "https://c.example/copy", seen=1_700_000_200.0)
    code, out, _ = cli(capsys, "explain", path, "https://a.example/story")
    assert code == 0
    assert out.splitlines() == [
        "url:            https://a.example/story",
        "fingerprint:    0123456789abcdef",
        "seen:           2023-11-14T22:13:20Z",  # 1_700_000_000 s after the epoch
        "within k:       1 other stored page(s) within 3 bits",
        "dropped copies: 1 page(s) dropped as its near duplicates",
        "",
        "DISTANCE  FINGERPRINT       SEEN                  URL",
        "2         0123456789abcdec  2023-11-14T22:15:00Z  https://b.example/mirror",
        "",
        "DISTANCE  FINGERPRINT       DROPPED               URL",
        "1         0123446789abcdef  2023-11-14T22:16:40Z  https://c.example/copy",
    ]
    code, out, _ = cli(capsys, "explain", path, "https://c.example/copy", "--json")
    assert (code, json.loads(out)["rule"]) == (0, "hamming")


def test_explain_of_a_kept_url_lists_its_dropped_copies(capsys, crawled):
    code, out, _ = cli(capsys, "explain", crawled, "https://a.example/story", "--json")
    obj = json.loads(out)
    assert code == 0
    assert [(c["url"], c["distance"]) for c in obj["dropped_copies"]] == [
        ("https://a.example/story?utm=x", 0),
        ("https://c.example/copy", 2),
    ]
    code, out, _ = cli(capsys, "explain", crawled, "https://a.example/story")
    assert "dropped copies: 2 page(s) dropped as its near duplicates" in out
    assert out.rstrip().endswith("https://c.example/copy")


def test_lookup_by_a_dropped_url_uses_its_fingerprint(capsys, crawled):
    code, out, _ = cli(capsys, "lookup", crawled, "--url", "https://d.example/mirror", "--json")
    assert code == 0
    assert [(m["url"], m["distance"]) for m in json.loads(out)] == [("https://b.example/other", 1)]
    code, _, err = cli(capsys, "lookup", crawled, "--url", "https://nowhere.example/")
    assert code == 1 and "no entry or drop record for https://nowhere.example/" in err


def test_clusters_show_each_kept_page_with_its_copies(capsys, crawled):
    code, out, _ = cli(capsys, "clusters", crawled)
    rows = [line.split() for line in out.splitlines()[1:]]
    assert code == 0
    assert rows == [
        ["1", "3", "kept", "https://a.example/story"],
        ["1", "3", "dropped", "0", "https://a.example/story?utm=x"],
        ["1", "3", "dropped", "2", "https://c.example/copy"],
        ["2", "2", "kept", "https://b.example/other"],
        ["2", "2", "dropped", "1", "https://d.example/mirror"],
    ]
    code, out, _ = cli(capsys, "clusters", crawled, "--jsonl")
    first = json.loads(out.splitlines()[0])
    assert first["urls"] == ["https://a.example/story"]
    assert [d["url"] for d in first["dropped"]] == [
        "https://a.example/story?utm=x",
        "https://c.example/copy",
    ]


def test_info_and_verify_count_the_drop_records(capsys, crawled):
    assert cli(capsys, "info", crawled, "--json")[1].count('"drop_records": 3') == 1
    code, out, _ = cli(capsys, "verify", crawled)
    assert (code, out) == (0, "ok: 2 entries, 4 tables and 3 drop records agree\n")


def test_remove_takes_the_drop_records_with_the_kept_page(capsys, crawled):
    code, out, _ = cli(capsys, "remove", crawled, "--url", "https://a.example/story", "--json")
    obj = json.loads(out)
    assert code == 0
    assert (obj["count"], obj["left"], obj["drop_records_left"]) == (1, 1, 1)
    assert sorted(obj["drop_records_removed"]) == [
        "https://a.example/story?utm=x",
        "https://c.example/copy",
    ]
    code, out, _ = cli(capsys, "remove", crawled, "--url", "https://d.example/mirror")
    assert code == 0 and "drop records: 1 removed, 0 left" in out
    with SimhashIndex(crawled, readonly=True) as ix:
        assert ix.drop_count() == 0 and ix.verify() == []


def test_remove_older_than_takes_old_drop_records_too(capsys, crawled):
    code, out, _ = cli(capsys, "remove", crawled, "--older-than", "30", "--dry-run", "--json")
    obj = json.loads(out)
    assert code == 0
    assert obj["removed"] == ["https://a.example/story"]
    # the old drop (35 days) and the new copy dropped against the old story
    assert sorted(obj["drop_records_removed"]) == [
        "https://a.example/story?utm=x",
        "https://c.example/copy",
    ]
    assert obj["drop_records_left"] == 1
    with SimhashIndex(crawled, readonly=True) as ix:
        assert ix.drop_count() == 3  # a dry run
    cli(capsys, "remove", crawled, "--older-than", "30")
    with SimhashIndex(crawled, readonly=True) as ix:
        assert [d.key for d in ix.drops()] == ["https://d.example/mirror"]


def test_explain_tells_a_dry_run_record_from_a_drop(tmp_path, capsys):
    """A dry run records what it would drop, marked ``dry_run``: ``explain`` says the page
    was kept, where it says ``dropped`` for a real drop."""
    path = str(tmp_path / "ix")
    with SimhashIndex(path, drop_records=100) as ix:
        ix.insert(A, "https://a.example/story", seen=NOW)
        ix.check_and_insert(flip(A, 3), "https://e.example/dry", seen=NOW, dry_run=True)
        ix.check_and_insert(flip(A, 4), "https://f.example/real", seen=NOW)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW))
    for url, action in (
        ("https://e.example/dry", "recorded in a dry run (kept)"),
        ("https://f.example/real", "dropped"),
    ):
        code, out, _ = cli(capsys, "explain", path, url)
        lines = dict(line.split(": ", 1) for line in out.splitlines())
        assert code == 0
        assert lines[action].strip() == (
            f"{when}: duplicate of https://a.example/story at distance 1"
        )
    # The kept page's copies, and its cluster, tell the copy kept by the dry run apart.
    code, out, _ = cli(capsys, "explain", path, "https://a.example/story")
    assert code == 0
    assert "2 page(s) dropped as its near duplicates (1 of them recorded in a dry run, kept)" in out
    assert sorted(line.split(None, 3)[3] for line in out.splitlines()[-2:]) == [
        "https://e.example/dry (dry run, kept)",
        "https://f.example/real",
    ]
    code, out, _ = cli(capsys, "explain", path, "https://a.example/story", "--json")
    copies = {c["url"]: c.get("record", {}) for c in json.loads(out)["dropped_copies"]}
    assert copies == {"https://e.example/dry": {"dry_run": True}, "https://f.example/real": {}}
    code, out, _ = cli(capsys, "clusters", path)
    assert [line.split()[2:] for line in out.splitlines()[1:]] == [
        ["kept", "https://a.example/story"],
        ["dry", "run", "1", "https://e.example/dry"],
        ["dropped", "1", "https://f.example/real"],
    ]


def test_a_drop_after_a_damaged_last_drop_number_is_damage_not_a_bare_value_error(tmp_path):
    """meta's drops_seq not a number: the next drop record cannot be numbered, and the check
    that would write it fails as a damaged index (which a crawl counts and passes, as for
    any damaged record), not with int()'s ValueError; nothing of it is written."""
    path = tmp_path / "ix"
    with SimhashIndex(path, drop_records=10) as ix:
        ix.insert(A, "a")
        ix.check_and_insert(flip(A, 1), "c1")
        env = ix._tx.storage.env
        with env.begin(write=True) as txn:
            txn.put(b"drops_seq", b"x2", db=env.open_db(b"meta", txn=txn))
        with pytest.raises(DamagedIndexError, match=r"index damaged: .*drop sequence"):
            ix.check_and_insert(flip(A, 2), "c2")
        assert ix.dropped("c2") is None and ix.drop_count() == 1
        assert ix.check_and_insert(B, "b") is None  # pages that drop nothing are stored
