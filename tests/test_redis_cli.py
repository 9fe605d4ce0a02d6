"""``scrapy-simhash`` on an index on a real Redis server: INDEX a redis:// URL, ``--key``."""

from __future__ import annotations

import uuid

import pytest

from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.redis_index import RedisIndex

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


def test_errors_are_one_line(capsys, redis_server, key):
    url = redis_server.url
    code, _, err = run(capsys, "info", url)
    assert code == 1 and "give the index's --key" in err
    code, _, err = run(capsys, "info", "--key", "missing", url)
    assert code == 1 and "no index 'missing'" in err
    code, _, err = run(capsys, "info", "--key", key, "redis://:pw@127.0.0.1:1/0")
    assert code == 1 and "cannot use the Redis server at redis://:***@127.0.0.1:1/0" in err
    assert "pw@" not in err


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
