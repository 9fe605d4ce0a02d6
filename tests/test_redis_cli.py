"""``scrapy-simhash`` on an index on a real Redis server: INDEX a redis:// URL, ``--key``."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid

import pytest

from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.records import doc_id
from scrapy_simhash.index.redis_index import RedisIndex
from scrapy_simhash.index.redis_meta import REDIS_FORMAT_VERSION
from scrapy_simhash.text.fingerprint import FINGERPRINT_VERSION

from ._redis_server import RedisServer
from .test_cli import DAY, NOW, A, B, C, _info, _scrapy_simhash, make_project, run, run_json


@pytest.fixture
def key(redis_server):
    """An index of three entries (A, A within 1 bit, C; one old) under a new key, and the
    drop record of a copy of C."""
    name = f"cli:{uuid.uuid4().hex}"
    with RedisIndex(redis_server.url, name, drop_records=10) as index:
        index.insert(A, "https://a.example/1", seen=NOW - 40 * DAY)
        index.insert(A ^ 1, "https://a.example/copy", seen=NOW)
        index.insert(C, "https://c.example/", seen=NOW)
        copy = index.check_and_insert(C ^ 6, "https://d.example/c", seen=NOW, title="Copy of C")
        assert copy.key == "https://c.example/"
        yield name
        index.drop()


def test_info_lookup_explain_dump_clusters(capsys, redis_server, key):
    url = redis_server.url
    info = run_json(capsys, "info", "--key", key, url)
    assert (info["entries"], info["fingerprints"], info["k"]) == (3, 3, 3)
    assert info["key"] == key and info["maxmemory_policy"] == "noeviction"
    assert info["tables_memory"] > 0
    code, out, _ = run(capsys, "info", "--key", key, url)
    assert code == 0 and f"{url} key {key}" in out
    found = run_json(capsys, "lookup", "--key", key, url, f"{A:016x}")
    assert [m["url"] for m in found] == ["https://a.example/1", "https://a.example/copy"]
    explained = run_json(capsys, "explain", "--key", key, url, "https://a.example/copy")
    assert explained["matches"][0]["url"] == "https://a.example/1"
    assert len(run_json(capsys, "dump", "--key", key, url)) == 3
    clusters = run_json(capsys, "clusters", "--key", key, url)
    assert [c["urls"] for c in clusters] == [
        ["https://a.example/1", "https://a.example/copy"],
        ["https://c.example/"],  # with its dropped copy
    ]


def _utc(seen: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seen))


def test_info_of_a_redis_index_line_by_line(capsys, redis_server, key):
    """Every line of ``info`` on the fixture's index (A and a copy within 1 bit, the old
    one 40 days ago; C and the drop record of its copy), its numbers read from the JSON
    output and the fixture."""
    url = redis_server.url
    info = run_json(capsys, "info", "--key", key, url)
    assert (info["url"], info["key"], info["cluster"]) == (url, key, False)
    assert (info["entries"], info["fingerprints"], info["drop_records"]) == (3, 3, 1)
    assert (info["layout_name"], info["tables"], info["prefix_bits"]) == ("4x16", 4, [16] * 4)
    assert (info["fingerprint_version"], info["format_version"]) == (
        FINGERPRINT_VERSION,
        REDIS_FORMAT_VERSION,
    )
    assert info["numbers"] is True and info["repeated_sentences"] == 0
    memory = {name: info[f"{name}_memory"] for name in ("tables", "docs", "links", "drops")}
    assert all(size > 0 for size in memory.values()), memory
    assert info["signatures_memory"] == 0  # no page signed by the sentence rule
    assert info["oldest_seen"] == pytest.approx(NOW - 40 * DAY)
    assert info["newest_seen"] == pytest.approx(NOW)
    code, out, _ = run(capsys, "info", "--key", key, url)
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 0
    assert {name: value.strip() for name, value in lines.items()} == {
        "index": f"{url} key {key}",
        "entries": "3",
        "fingerprints": "3 distinct",
        "k": "3",
        "layout": f"4x16: {info['layout']}",
        "bucket fields": f"{info['field_bits']} bits",
        "fingerprint version": str(FINGERPRINT_VERSION),
        "numbers": "features",
        "format version": f"{REDIS_FORMAT_VERSION} (Redis)",
        "server memory": (
            f"tables {memory['tables']:,} B ({memory['tables'] / 3:.1f} B/fingerprint), "
            f"records {memory['docs'] + memory['links']:,} B, signatures 0 B, "
            f"drop records {memory['drops']:,} B"
        ),
        "drop records": "1 pages dropped as near duplicates",
        "repeated sentences": (
            "0 (a long sentence and a site whose pages were dropped through it)"
        ),
        "maxmemory-policy": "noeviction",
        "oldest": f"{_utc(NOW - 40 * DAY)}  https://a.example/1",
        "newest": lines["newest"].strip(),
    }
    newest_time, newest_url = lines["newest"].split()
    assert newest_time == _utc(NOW)
    assert newest_url in ("https://a.example/copy", "https://c.example/")


def test_info_of_an_index_on_a_cluster(capsys, redis_cluster):
    """On the cluster, ``info`` says so; an index without numbers says that too; an empty
    index has no oldest entry and no bytes a fingerprint."""
    name = f"cli:{uuid.uuid4().hex}"
    with RedisIndex(redis_cluster.url, name, numbers=False) as index:
        try:
            info = run_json(capsys, "info", "--key", name, redis_cluster.url)
            assert (info["cluster"], info["entries"], info["numbers"]) == (True, 0, False)
            assert info["oldest_seen"] is info["newest_seen"] is None
            code, out, _ = run(capsys, "info", "--key", name, redis_cluster.url)
            assert code == 0
            lines = {k: v.strip() for k, v in (ln.split(": ", 1) for ln in out.splitlines())}
            assert lines["index"] == f"{redis_cluster.url} key {name} (cluster)"
            assert lines["numbers"] == "left out (SIMHASH_NUMBERS)"
            assert lines["server memory"].startswith(
                f"tables {info['tables_memory']:,} B (0.0 B/fingerprint), "
            )
            assert lines["fingerprints"] == "0 distinct"
            assert lines["oldest"] == lines["newest"] == "-"
        finally:
            index.drop()


def test_drop_records_on_redis_explain_clusters_info_remove(capsys, redis_server, key):
    url = redis_server.url
    code, out, _ = run(capsys, "explain", "--key", key, url, "https://d.example/c")
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 0
    assert lines["dropped"].strip().endswith(": duplicate of https://c.example/ at distance 2")
    assert lines["title"].strip() == "Copy of C"
    kept = run_json(capsys, "explain", "--key", key, url, "https://c.example/")
    assert [d["url"] for d in kept["dropped_copies"]] == ["https://d.example/c"]
    code, out, _ = run(capsys, "clusters", "--key", key, url)
    assert ["2", "2", "dropped", "2", "https://d.example/c"] in [
        ln.split() for ln in out.splitlines()
    ]
    assert run_json(capsys, "info", "--key", key, url)["drop_records"] == 1
    assert run_json(capsys, "verify", "--key", key, url)["drop_records"] == 1
    found = run_json(capsys, "lookup", "--key", key, url, "--url", "https://d.example/c")
    assert found[0]["url"] == "https://c.example/"
    removed = run_json(capsys, "remove", "--key", key, url, "--url", "https://c.example/")
    assert removed["drop_records_removed"] == ["https://d.example/c"]
    with RedisIndex(url, key) as index:
        assert index.drop_count() == 0 and index.verify() == []


def test_remove_and_verify(capsys, redis_server, key):
    url = redis_server.url
    assert run_json(capsys, "remove", "--key", key, url, "--older-than", "30")["count"] == 1
    assert run_json(capsys, "verify", "--key", key, url)["ok"] is True
    with RedisIndex(url, key) as index:
        assert len(index) == 2 and B not in index.probe(B)


def test_writes_to_a_server_that_may_evict_are_refused(capsys, redis_server, key, tmp_path):
    """As a crawl is: ``remove`` and ``compact`` into Redis are refused, in one line naming
    the policy, by a server whose ``maxmemory-policy`` may evict the index's keys; nothing
    is written. Reading (``remove --dry-run``, ``info``) is not refused."""
    url = redis_server.url
    copy = str(tmp_path / "copy")
    assert run_json(capsys, "compact", "--key", key, url, copy)["entries"] == 3
    with redis_server.client() as client:
        client.config_set("maxmemory-policy", "allkeys-lru")
        try:
            for argv in (
                ["remove", "--key", key, url, "--older-than", "30"],
                ["compact", "--key", f"{key}:new", copy, url],
            ):
                code, out, err = run(capsys, *argv)
                assert (code, out) == (1, ""), argv
                assert "has maxmemory-policy allkeys-lru, which may evict" in err
            assert client.keys(f"{{{key}:new}}*") == []
            assert run_json(capsys, "remove", "--key", key, url, "--older-than", "30",
                            "--dry-run")["count"] == 1  # fmt: skip
        finally:
            client.config_set("maxmemory-policy", "noeviction")
    assert run_json(capsys, "info", "--key", key, url)["entries"] == 3


def test_a_damaged_repeated_sentence_entry_stops_a_compact_in_one_line(
    capsys, redis_server, key, tmp_path
):
    """What the guard learned cut short on the server: ``compact`` into LMDB says the damage
    and the command that lists it, in one line (an "unexpected ValueError" of the copy's
    write), and leaves no copy."""
    url, dest = redis_server.url, tmp_path / "copy"
    with redis_server.client() as client:
        client.hset(f"{{{key}}}:reps", b"s" * 16, b"id-cut-short")
    code, out, err = run(capsys, "compact", "--key", key, url, str(dest))
    assert (code, out) == (1, "")
    assert "index damaged: a repeated sentence's entry of 16 and 12 bytes" in err
    assert err.endswith(f"'scrapy-simhash verify {url} --key {key}' checks it whole\n")
    assert not dest.exists()


def test_compact_copies_between_redis_and_lmdb(capsys, redis_server, key, tmp_path):
    url = redis_server.url
    copied = run_json(capsys, "compact", "--key", key, url, str(tmp_path / "copy"))
    assert copied["entries"] == 3
    with SimhashIndex(tmp_path / "copy") as index:
        assert len(index) == 3 and index.verify() == []
        drop = index.dropped("https://d.example/c")
        assert (drop.kept, drop.distance, drop.record) == (
            "https://c.example/",
            2,
            {"title": "Copy of C"},
        )
    back = f"{key}:back"
    copied = run_json(capsys, "compact", "--key", back, str(tmp_path / "copy"), url)
    assert copied["entries"] == 3
    with RedisIndex(url, back) as index:
        assert len(index) == 3 and index.verify() == []
        assert index.dropped("https://d.example/c").seen == pytest.approx(NOW)
        assert index.get("https://a.example/1").record["seen"] == pytest.approx(NOW - 40 * DAY)
        index.drop()


def test_compact_between_redis_and_lmdb_says_what_it_copied(capsys, redis_server, key, tmp_path):
    """``compact``'s line and JSON name both ends; a destination directory must be empty (an
    empty one is taken); an LMDB index is copied with its layout and its numbers setting, and
    never onto an index already on the server."""
    url = redis_server.url
    (tmp_path / "empty").mkdir()
    code, out, _ = run(capsys, "compact", "--key", key, url, str(tmp_path / "empty"))
    assert (code, out) == (0, f"copied: 3 entries: {url} key {key} -> {tmp_path / 'empty'}\n")
    copied = run_json(capsys, "compact", "--key", key, url, str(tmp_path / "json"))
    assert copied == {"source": f"{url} key {key}", "dest": str(tmp_path / "json"), "entries": 3}
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("mine")
    for dest in ("full", "file"):
        code, _, err = run(capsys, "compact", "--key", key, url, str(tmp_path / dest))
        said = f"scrapy-simhash: error: {tmp_path / dest} exists and is not an empty directory\n"
        assert (code, err) == (1, said)
    assert (tmp_path / "file").read_text() == "mine"
    assert os.listdir(tmp_path / "full") == ["notes.txt"]

    source = tmp_path / "wide"
    with SimhashIndex(source, expected_size=50_000_000, numbers=False) as index:
        index.insert(A, "https://a.example/")
        layout = index.layout
    assert layout.tables == 10  # not the default layout
    back = f"{key}:wide"
    try:
        copied = run_json(capsys, "compact", "--key", back, str(source), url)
        assert copied == {"source": str(source), "dest": f"{url} key {back}", "entries": 1}
        code, out, err = run(capsys, "compact", "--key", back, str(source), url)
        assert (code, out) == (1, "")
        assert err == f"scrapy-simhash: error: {url} key {back} holds an index already\n"
        with RedisIndex(url, back) as index:
            assert (index.layout, index.numbers, list(index.keys())) == (
                layout,
                False,
                ["https://a.example/"],
            )
    finally:
        with RedisIndex(url, back) as index:
            index.drop()
    code, _, err = run(capsys, "compact", "--key", f"{key}:none", str(tmp_path / "no"), url)
    assert code == 1 and "no index" in err
    assert not (tmp_path / "no").exists()


def test_errors_are_one_line(capsys, redis_server, key):
    url = redis_server.url
    code, _, err = run(capsys, "info", url)
    assert (code, err) == (
        1,
        f"scrapy-simhash: error: INDEX {url} is a Redis server: give the index's --key\n",
    )
    code, _, err = run(capsys, "info", "redis://:pw@127.0.0.1:1/0")  # named, password hidden
    assert (code, err) == (
        1,
        "scrapy-simhash: error: INDEX redis://:***@127.0.0.1:1/0 is a Redis server:"
        " give the index's --key\n",
    )
    code, _, err = run(capsys, "info", "--key", "missing", url)
    assert code == 1 and "no index 'missing'" in err
    code, _, err = run(capsys, "info", "--key", key, "redis://:pw@127.0.0.1:1/0")
    assert code == 1 and "cannot use the Redis server at redis://:***@127.0.0.1:1/0" in err
    assert "pw@" not in err


def test_a_damaged_document_is_a_problem_to_verify_and_one_line_to_the_others(
    capsys, redis_server, key, tmp_path
):
    """A document record that fails its checksum: ``verify`` lists it among the problems
    (as on LMDB), and the commands that read it say so in one line naming ``verify``, as on
    LMDB, not "unexpected DamagedIndexError"."""
    url = redis_server.url
    docid = doc_id("https://c.example/")
    with redis_server.client() as client:
        docs = f"{{{key}}}:docs"
        data = client.hget(docs, docid)
        client.hset(docs, docid, data[:-1] + bytes([data[-1] ^ 1]))  # a bit of its CRC flipped
    why = "index damaged: a document record fails its checksum"
    code, out, err = run(capsys, "verify", "--key", key, url)
    assert (code, out) == (1, f"problem: document {docid.hex()}: {why}\n")
    assert err == f"scrapy-simhash: error: {url} is damaged: 1 problem(s) found\n"
    said = (
        f"scrapy-simhash: error: {url} key {key}: {why};"
        f" 'scrapy-simhash verify {url} --key {key}' checks it whole\n"
    )
    report = str(tmp_path / "report.html")
    for command in (["info"], ["dump"], ["clusters"], ["report", "-o", report]):
        code, _, err = run(capsys, *command, "--key", key, url)  # dump streams up to it
        assert (code, err) == (1, said), command


def test_report_of_a_redis_index(capsys, redis_server, key, tmp_path):
    """The report reads a Redis index as it reads an LMDB one, with its drop records."""
    import lxml.html

    out = tmp_path / "report.html"
    code, printed, _ = run(capsys, "report", "--key", key, redis_server.url, "-o", str(out))
    assert (code, printed) == (0, f"report: {out}\n")
    page = lxml.html.fromstring(out.read_bytes())
    cards = [(c.findtext("b"), c.findtext("span")) for c in page.cssselect(".card")]
    assert cards[:2] == [("3", "pages kept (entries)"), ("1", "drops recorded")]
    groups = page.cssselect("#groups .group")
    assert [g.findtext("h3") for g in groups] == ["Group 1: 2 pages", "Group 2: 2 pages"]


def test_scrapy_simhash_takes_a_spider_name_for_its_redis_index(redis_server, tmp_path):
    """In a project whose crawls keep their index on Redis (SIMHASH_REDIS_URL), a spider's
    name opens that spider's index on the server, under SIMHASH_REDIS_KEY."""
    project = make_project(tmp_path)
    with RedisIndex(redis_server.url, "news:simhash") as index:
        index.insert(A, "https://n/on-redis")
        index.insert(B, "https://n/also-on-redis")
    try:
        redis_option = f"SIMHASH_REDIS_URL={redis_server.url}"
        info = _info(_scrapy_simhash(project, "-s", redis_option, "info", "news", "--json"))
        assert (info["key"], info["entries"]) == ("news:simhash", 2)  # not the LMDB index
        done = _scrapy_simhash(
            project, "-s", redis_option, "-s", "SIMHASH_REDIS_KEY=crawl:%(spider)s", "info", "news"
        )
        assert done.returncode == 1 and "crawl:news" in done.stderr  # another key: no index
        done = _scrapy_simhash(project, "-s", "SIMHASH_REDIS_URL=http://x", "info", "news")
        assert done.stderr == (
            "scrapy simhash: error: SIMHASH_REDIS_URL must be a redis://, rediss:// or unix://"
            " URL, got a http:// URL\n"
        )
    finally:
        with RedisIndex(redis_server.url, "news:simhash") as index:
            index.drop()


def test_a_spiders_redis_index_is_opened_with_the_projects_connection_options(tmp_path):
    """``scrapy simhash info SPIDER`` connects as the spider's crawl does: with the password
    (or TLS options) given in SIMHASH_REDIS_PARAMS rather than in the URL."""
    project = make_project(tmp_path)
    with RedisServer(tmp_path / "redis") as server:
        with RedisIndex(server.url, "news:simhash") as index:
            index.insert(A, "https://n/on-redis")
        with server.client() as client:
            client.config_set("requirepass", "s3cret-pw")
        options = [
            *("-s", f"SIMHASH_REDIS_URL={server.url}"),
            *("-s", 'SIMHASH_REDIS_PARAMS={"password": "s3cret-pw"}'),
        ]
        done = _scrapy_simhash(project, *options, "info", "news", "--json")
        assert (done.returncode, done.stderr) == (0, "")
        assert _info(done)["entries"] == 1
        assert "s3cret-pw" not in done.stdout


def test_a_password_in_the_url_is_never_printed(capsys, tmp_path):
    """README: a password in INDEX's URL shows as ``***`` in what the commands print: an LMDB
    index copied onto a server that asks for one, read, checked and copied back, and an
    error about a key that holds no index."""
    folder = str(tmp_path / "lmdb")
    with SimhashIndex(folder, max_distance=3) as index:
        index.insert_many([(A, "https://a.example/1", {}), (C, "https://c.example/", {})])
    with RedisServer(tmp_path / "redis") as server, server.client() as client:
        client.config_set("requirepass", "s3cret-pw")
        url = f"redis://:s3cret-pw@127.0.0.1:{server.port}/0"
        shown = f"redis://:***@127.0.0.1:{server.port}/0"
        printed = []
        for argv, status in [
            (["compact", folder, url, "--key", "pw"], 0),
            (["info", url, "--key", "pw"], 0),
            (["info", url, "--key", "pw", "--json"], 0),
            (["dump", url, "--key", "pw", "--jsonl"], 0),
            (["verify", url, "--key", "pw", "--json"], 0),
            (["compact", url, "--key", "pw", str(tmp_path / "back")], 0),
            (["info", url, "--key", "none"], 1),
        ]:
            code, out, err = run(capsys, *argv)
            assert code == status, (argv, err)
            printed.append(out + err)
    assert all(shown in text for text in printed[:3])
    assert "s3cret-pw" not in "".join(printed)


def _terminate_when(command: list[str], ready) -> subprocess.CompletedProcess[str]:
    """Run ``scrapy-simhash`` with ``command``, send it SIGTERM once ``ready()`` holds (its
    copy has begun), and return how it ended."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_simhash", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_compact_stopped_midway_leaves_no_partial_index(redis_server, tmp_path):
    """SIGTERM in the middle of a copy, either way: the command says so in one line (exit
    143), and no index of fewer entries is left where the copy went, to be taken for whole."""
    source = tmp_path / "source"
    rng = random.Random(5)
    with SimhashIndex(source, 3, 10**6) as index:
        items = ((rng.getrandbits(64), f"https://a.example/{i}", {}) for i in range(200_000))
        index.insert_many(items)
    client = redis_server.client()
    key = f"cli:{uuid.uuid4().hex}"

    def loading() -> bool:  # the load is writing its staging keys (over 1 s of the copy)
        return next(client.scan_iter(match=f"{{{key}}}:load:*", count=1000), None) is not None

    done = _terminate_when(["compact", str(source), redis_server.url, "--key", key], loading)
    assert (done.returncode, done.stdout) == (143, "")
    assert done.stderr == "scrapy-simhash: error: terminated\n"
    # no index left under the key (the load's staging keys expire on their own)
    assert not client.exists(f"{{{key}}}:meta", f"{{{key}}}:docs", f"{{{key}}}:fps")

    whole = f"{key}-whole"
    copied = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "compact", str(source), redis_server.url,
         "--key", whole],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    dest = tmp_path / "dest"

    def copying() -> bool:  # the copy, in its staging folder in DEST, past a megabyte
        return any(
            (staging / "data.mdb").exists() and (staging / "data.mdb").stat().st_size > 1 << 20
            for staging in dest.glob(".partial-*")
        )

    done = _terminate_when(["compact", redis_server.url, str(dest), "--key", whole], copying)
    assert (done.returncode, done.stdout, done.stderr) == (
        143,
        "",
        "scrapy-simhash: error: terminated\n",
    )
    assert not dest.exists()
