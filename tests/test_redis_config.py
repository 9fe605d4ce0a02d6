"""The SIMHASH_REDIS_* settings, and a password that never reaches the log."""

from __future__ import annotations

import logging

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash.crawl.config import REDIS_PARAMS, SimhashConfig
from scrapy_simhash.crawl.remote import open_redis_index
from scrapy_simhash.index.redis_client import redact

from ._redis_server import RedisServer
from .test_scrapy_crawl import MIDDLEWARE, SiteSpider, crawl


def config(**settings) -> SimhashConfig:
    return SimhashConfig.from_settings(Settings(settings))


def test_unset_keeps_lmdb():
    assert config().redis_url is None
    assert config(SIMHASH_REDIS_URL="").redis_url is None


def test_redis_settings_are_read():
    c = config(
        SIMHASH_REDIS_URL="rediss://user:pw@host:6380/2",
        SIMHASH_REDIS_KEY="crawls:%(spider)s",
        SIMHASH_REDIS_CLUSTER="true",
        SIMHASH_REDIS_PARAMS={"socket_timeout": 5},
    )
    assert c.redis_url == "rediss://user:pw@host:6380/2"
    assert c.redis_key == "crawls:%(spider)s"
    assert c.redis_cluster is True
    assert c.redis_params == {**REDIS_PARAMS, "socket_timeout": 5}
    assert config(SIMHASH_REDIS_URL="unix:///tmp/r.sock").redis_cluster is None  # detected


def test_redis_params_from_the_command_line_are_json():
    """``-s SIMHASH_REDIS_PARAMS='{"socket_timeout": 5}'`` gives a string: read as JSON, as
    Scrapy's dict settings and scrapy-redis's REDIS_PARAMS are (it was refused)."""
    c = config(SIMHASH_REDIS_PARAMS=' {"socket_timeout": 5, "ssl_cert_reqs": "required"} ')
    assert c.redis_params == {**REDIS_PARAMS, "socket_timeout": 5, "ssl_cert_reqs": "required"}
    for bad in ("socket_timeout=5", "[1, 2]", '"socket_timeout"'):
        with pytest.raises(ValueError) as caught:
            config(SIMHASH_REDIS_PARAMS=bad)
        assert str(caught.value) == (
            "SIMHASH_REDIS_PARAMS must be a dict of redis-py connection options, got a str"
            " that is no JSON object"
        )


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        ("password=s3cret", "a str that is no JSON object"),
        (["password", "s3cret"], "a list"),
        ({"password": "s3cret", 1: "s3cret"}, "a dict with the keys 'password', 1"),
    ],
)
def test_refused_redis_params_never_show_their_values(bad, shown):
    """The options may hold the server's password: refused, they are named, never shown."""
    with pytest.raises(ValueError) as caught:
        config(SIMHASH_REDIS_PARAMS=bad)
    said = str(caught.value)
    assert (
        said == f"SIMHASH_REDIS_PARAMS must be a dict of redis-py connection options, got {shown}"
    )
    assert "s3cret" not in said


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cr/et-pw@127.0.0.1:1/0", "redis://:***@127.0.0.1:1/0"),
        ("rediss://user:s3cr?et#pw@127.0.0.1:1/0", "rediss://user:***@127.0.0.1:1/0"),
    ],
)
def test_a_password_holding_a_slash_is_never_shown(url, shown):
    """A password holding '/', '?' or '#' not percent-encoded (a base64 one holds '/'): the
    URL's host seemed to start inside it, so it was shown whole wherever the URL is shown,
    and the crawl was refused at start with redis-py's message quoting its first part
    ('s3cr'). It is hidden as any password, and the refusal says how to write it."""
    assert redact(url) == shown
    with pytest.raises(ValueError) as caught:
        open_redis_index(config(SIMHASH_REDIS_URL=url), "news")
    said = str(caught.value)
    assert "s3cr" not in said and "et-pw" not in said
    assert said.startswith(f"SIMHASH_REDIS_URL: redis-py cannot read {shown}")
    assert "percent-encoded" in said


def test_same_as_redis_url():
    c = config(SIMHASH_REDIS_URL="REDIS_URL", REDIS_URL="redis://queue:6379/0")
    assert c.redis_url == "redis://queue:6379/0"
    for unset in ({}, {"REDIS_URL": ""}, {"REDIS_URL": 6379}):
        with pytest.raises(ValueError) as caught:
            config(SIMHASH_REDIS_URL="REDIS_URL", **unset)
        said = "SIMHASH_REDIS_URL is 'REDIS_URL', but the REDIS_URL setting is not set"
        assert str(caught.value) == said
    # a bad value in REDIS_URL is named there, not in SIMHASH_REDIS_URL
    with pytest.raises(ValueError) as caught:
        config(SIMHASH_REDIS_URL="REDIS_URL", REDIS_URL="http://:secret@queue")
    said = "REDIS_URL (which SIMHASH_REDIS_URL names) must be a redis://, rediss:// or unix:// URL"
    assert str(caught.value) == said + ", got a http:// URL"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SIMHASH_REDIS_URL": "http://:secret@host"}, "must be a redis://, rediss:// or unix://"),
        ({"SIMHASH_REDIS_URL": "host:6379"}, "got a value without a scheme"),
        ({"SIMHASH_REDIS_URL": 6379}, "SIMHASH_REDIS_URL must be"),
        ({"SIMHASH_REDIS_KEY": "{x}:%(spider)s"}, "SIMHASH_REDIS_KEY must not hold braces"),
        ({"SIMHASH_REDIS_KEY": "crawl{:%(spider)s"}, "SIMHASH_REDIS_KEY must not hold braces"),
        ({"SIMHASH_REDIS_KEY": "crawl}:%(spider)s"}, "SIMHASH_REDIS_KEY must not hold braces"),
        ({"SIMHASH_REDIS_KEY": "%(name)s"}, "SIMHASH_REDIS_KEY must be a key with"),
        ({"SIMHASH_REDIS_PARAMS": "socket_timeout=5"}, "SIMHASH_REDIS_PARAMS must be a dict"),
        ({"SIMHASH_REDIS_CLUSTER": "maybe"}, "SIMHASH_REDIS_CLUSTER must be a boolean"),
        (
            {"SIMHASH_REDIS_URL": "redis://h", "SIMHASH_RESET": True},
            "SIMHASH_RESET on a Redis index",
        ),
    ],
)
def test_bad_values_name_the_setting(settings, message):
    with pytest.raises(ValueError, match=message) as caught:
        config(**settings)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://:secret@host/?next=redis://queue", "a http:// URL"),
        ("HTTPS://host", "a https:// URL"),
        ("queue:6379", "a value without a scheme"),
    ],
)
def test_a_url_of_another_scheme_is_named_by_its_scheme_alone(url, shown):
    with pytest.raises(ValueError) as caught:
        config(SIMHASH_REDIS_URL=url)
    assert str(caught.value) == (
        f"SIMHASH_REDIS_URL must be a redis://, rediss:// or unix:// URL, got {shown}"
    )


@pytest.mark.parametrize("off", [None, False, 0, "False", " no ", "0", "off", ""])
def test_reset_off_on_redis(off):
    assert config(SIMHASH_REDIS_URL="redis://h", SIMHASH_RESET=off).reset_key is None


def test_reset_on_redis_takes_the_index_key_only():
    """A flag is not enough on a Redis index (other crawls may share it): the value must name
    the index's key, spaces around it left out; a true flag is refused in full words."""
    named = config(SIMHASH_REDIS_URL="redis://h", SIMHASH_RESET=" crawl:news ")
    assert named.reset_key == "crawl:news"
    assert named.reset is False  # the LMDB index's flag
    for flag in (True, 1, "True", " yes ", "1", "on"):
        with pytest.raises(ValueError) as caught:
            config(SIMHASH_REDIS_URL="redis://h", SIMHASH_RESET=flag)
        assert str(caught.value) == (
            "SIMHASH_RESET on a Redis index (which other crawls may share) must name the "
            "index's key, e.g. SIMHASH_RESET = 'myspider:simhash' (SIMHASH_REDIS_KEY with the "
            f"spider's name), not {flag!r}"
        )


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret-pw@127.0.0.1:{port}/0", "redis://:***@127.0.0.1:{port}/0"),
        # redis-py's other form (the only one of a unix socket's URL): it was shown whole
        (
            "redis://127.0.0.1:{port}/0?password=s3cret-pw",
            "redis://127.0.0.1:{port}/0?password=***",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_the_password_never_reaches_the_log(site, tmp_path, caplog, url, shown):
    caplog.set_level(logging.DEBUG)
    with RedisServer(tmp_path / "redis") as server, server.client() as client:
        client.config_set("requirepass", "s3cret-pw")
        url, shown = url.format(port=server.port), shown.format(port=server.port)
        settings = {**MIDDLEWARE, "SIMHASH_REDIS_URL": url, "SIMHASH_REDIS_KEY": "pw"}
        result = await crawl(settings, tmp_path, site)
        assert result.simhash["simhash/unique"] == 5
        text = caplog.text + repr(result.stats)
        assert "s3cret-pw" not in text
        assert f"Simhash index {shown} pw: 0 entries" in text


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("redis://[::1", "redis-py cannot read redis://[::1: Invalid IPv6 URL"),
        ("redis://:s3cret@127.0.0.1:99999/0",
         "redis-py cannot read redis://:***@127.0.0.1:99999/0 (its host or port cannot be read)"),
    ],
)  # fmt: skip
def test_a_url_redis_py_cannot_read_is_said_with_the_setting(url, said):
    """A URL redis-py cannot read refuses the crawl naming the setting, the URL (its password
    hidden) and why: an IPv6 host left open was a bare "Invalid IPv6 URL" (and the command
    line's "unexpected ValueError"), a port out of range was blamed on the password."""
    with pytest.raises(ValueError) as caught:
        open_redis_index(config(SIMHASH_REDIS_URL=url), "news")
    assert str(caught.value) == f"SIMHASH_REDIS_URL: {said}"


def test_a_password_in_the_query_is_hidden():
    assert redact("unix:///run/redis.sock?db=2&password=s3cret&x=1") == (
        "unix:///run/redis.sock?db=2&password=***&x=1"
    )
    assert redact("redis://u:pw@h:1/0?PASSWORD=s3cret") == "redis://u:***@h:1/0?PASSWORD=***"


def test_a_bad_value_is_put_down_to_the_setting_that_holds_it(redis_server):
    """A value refused in SIMHASH_REDIS_PARAMS names that setting (a negative timeout named
    SIMHASH_REDIS_URL), a TLS option with a redis:// URL too; a database the server refuses
    names both, when SIMHASH_REDIS_PARAMS holds options; a path that is no database's number
    in the URL is refused (redis-py read it as database 0, the index of another crawl)."""
    cases = [
        ({"SIMHASH_REDIS_PARAMS": {"socket_timeout": -1}},
         "SIMHASH_REDIS_PARAMS: socket_timeout must be a number of seconds >= 0 (or None), "
         "got -1"),
        ({"SIMHASH_REDIS_PARAMS": {"ssl_cert_reqs": "required"}},
         "SIMHASH_REDIS_PARAMS: redis-py refused them: "),
        ({"SIMHASH_REDIS_URL": redis_server.url.rsplit("/", 1)[0],
          "SIMHASH_REDIS_PARAMS": {"db": "x"}},
         "SIMHASH_REDIS_URL or SIMHASH_REDIS_PARAMS: cannot use the Redis server at "),
        ({"SIMHASH_REDIS_URL": redis_server.url.rsplit("/", 1)[0] + "/abc"},
         f"SIMHASH_REDIS_URL: {redis_server.url.rsplit('/', 1)[0]}/abc: its path must be the "
         f"database's number, not '/abc'"),
    ]  # fmt: skip
    for settings, said in cases:
        with pytest.raises(ValueError) as caught:
            open_redis_index(config(**{"SIMHASH_REDIS_URL": redis_server.url, **settings}), "x")
        assert str(caught.value).startswith(said), caught.value
    for url in (redis_server.url, redis_server.url + "/", redis_server.url.rsplit("/", 1)[0]):
        open_redis_index(config(SIMHASH_REDIS_URL=url), "x").close()


@deferred_f_from_coro_f
async def test_redis_params_reach_the_client(site, tmp_path):
    """A password given in ``SIMHASH_REDIS_PARAMS`` only (not in the URL) opens the index;
    without it the server refuses, and the crawl does not start."""
    with RedisServer(tmp_path / "redis") as server, server.client() as client:
        client.config_set("requirepass", "params-pw")
        settings = {
            **MIDDLEWARE,
            "SIMHASH_REDIS_URL": server.url,
            "SIMHASH_REDIS_KEY": "params",
            "SIMHASH_REDIS_PARAMS": {"password": "params-pw"},
        }
        result = await crawl(settings, tmp_path, site)
        assert result.simhash["simhash/unique"] == 5
        assert client.exists("{params}:meta")
        crawler = get_crawler(SiteSpider, {**settings, "SIMHASH_REDIS_PARAMS": {}})
        with pytest.raises(ValueError, match=r"cannot use the Redis server at .*Authentication"):
            await crawler.crawl_async(start_url=site.url("/index.html"))
        # an option redis-py does not know: the setting named, not a bare TypeError
        unknown = {**settings, "SIMHASH_REDIS_PARAMS": {"password": "params-pw", "bogus": 1}}
        crawler = get_crawler(SiteSpider, unknown)
        with pytest.raises(ValueError, match=r"^SIMHASH_REDIS_PARAMS: redis-py refused .*bogus"):
            await crawler.crawl_async(start_url=site.url("/index.html"))
