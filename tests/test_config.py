import os
from pathlib import Path

import pytest
from scrapy.settings import Settings

from scrapy_simhash.crawl.config import MAX_DISTANCE_LIMIT, SimhashConfig, default_workers


def test_defaults():
    assert SimhashConfig.from_settings(Settings()) == SimhashConfig(
        enabled=True,
        dir="simhash",
        max_distance=3,
        expected_size=1_000_000,
        min_text_length=20,
        max_body_size=10 * 1024 * 1024,
        html_field="html",
        text_field="text",
        url_field="url",
        reset=False,
        dry_run=False,
        workers=default_workers(),
        timeout=30.0,
        commit_every=1000,
        commit_interval=1.0,
        fsync=True,
        fast=False,
        on_index_error="stop",
    )


def test_default_workers_follow_the_cpus_available():
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    expected = 0 if os.name != "posix" or cpus < 2 else min(cpus, 4)
    assert default_workers() == expected


@pytest.mark.parametrize(("cpus", "workers"), [(1, 0), (2, 2), (4, 4), (16, 4)])
def test_default_workers_for_a_number_of_cpus(monkeypatch, cpus, workers):
    """None on one CPU (work inline), else one a CPU, at most 4."""
    if os.name != "posix":
        pytest.skip("workers need socket pairs passed to the child (POSIX)")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    assert default_workers() == workers


def test_values_from_the_command_line_are_strings():
    config = SimhashConfig.from_settings(
        Settings(
            {
                "SIMHASH_ENABLED": "false",
                "SIMHASH_DIR": "/tmp/idx",
                "SIMHASH_MAX_DISTANCE": "5",
                "SIMHASH_EXPECTED_SIZE": "10_000",
                "SIMHASH_MIN_TEXT_LENGTH": " 8 ",
                "SIMHASH_MAX_BODY_SIZE": "0",
                "SIMHASH_HTML_FIELD": "body",
                "SIMHASH_TEXT_FIELD": "content",
                "SIMHASH_URL_FIELD": "link",
                "SIMHASH_RESET": "1",
                "SIMHASH_DRY_RUN": "True",
                "SIMHASH_WORKERS": "3",
                "SIMHASH_TIMEOUT": " 2.5 ",
                "SIMHASH_COMMIT_EVERY": "50",
                "SIMHASH_COMMIT_INTERVAL": "0",
                "SIMHASH_FSYNC": "false",
                "SIMHASH_FAST": "yes",
                "SIMHASH_NUMBERS": "no",
                "SIMHASH_SKIP_LISTINGS": "0",
                "SIMHASH_ON_INDEX_ERROR": " Skip ",
                "SIMHASH_DROP_RECORDS": "off",
                "SIMHASH_DROP_RECORDS_MAX": "5_000",
            }
        )
    )
    assert config == SimhashConfig(
        enabled=False,
        dir="/tmp/idx",
        max_distance=5,
        expected_size=10_000,
        min_text_length=8,
        max_body_size=0,
        html_field="body",
        text_field="content",
        url_field="link",
        reset=True,
        dry_run=True,
        workers=3,
        timeout=2.5,
        commit_every=50,
        commit_interval=0.0,
        fsync=False,
        fast=True,
        numbers=False,
        skip_listings=False,
        drop_records=False,
        drop_records_max=5000,
        on_index_error="skip",
    )


def test_typed_values_and_limits_are_accepted():
    config = SimhashConfig.from_settings(
        Settings({"SIMHASH_MAX_DISTANCE": MAX_DISTANCE_LIMIT, "SIMHASH_RESET": True})
    )
    assert (config.max_distance, config.reset) == (MAX_DISTANCE_LIMIT, True)
    assert SimhashConfig.from_settings(Settings({"SIMHASH_MAX_DISTANCE": 0})).max_distance == 0
    # booleans as the integers 0 and 1
    config = SimhashConfig.from_settings(Settings({"SIMHASH_FSYNC": 0, "SIMHASH_FAST": 1}))
    assert (config.fsync, config.fast) == (False, True)


def test_simhash_dir_may_be_a_path():
    """As HTTPCACHE_DIR (Scrapy's data_path), a settings module's ``BASE_DIR / "simhash"``."""
    settings = Settings({"SIMHASH_DIR": Path("/var/lib/crawls") / "simhash"})
    assert SimhashConfig.from_settings(settings).dir == "/var/lib/crawls/simhash"
    assert SimhashConfig.from_settings(Settings({"SIMHASH_DIR": Path("idx")})).dir == "idx"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "SIMHASH_MAX_DISTANCE",
            70,
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got 70",
        ),
        (
            "SIMHASH_MAX_DISTANCE",
            "abc",
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got 'abc'",
        ),
        (
            "SIMHASH_MAX_DISTANCE",
            -1,
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got -1",
        ),
        (
            "SIMHASH_MAX_DISTANCE",
            2.5,
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got 2.5",
        ),
        (
            "SIMHASH_MAX_DISTANCE",
            True,
            "SIMHASH_MAX_DISTANCE must be an integer between 0 and 8, got True",
        ),
        ("SIMHASH_EXPECTED_SIZE", 0, "SIMHASH_EXPECTED_SIZE must be an integer >= 1, got 0"),
        (
            "SIMHASH_MIN_TEXT_LENGTH",
            "ten",
            "SIMHASH_MIN_TEXT_LENGTH must be an integer >= 1, got 'ten'",
        ),
        ("SIMHASH_MAX_BODY_SIZE", "-5", "SIMHASH_MAX_BODY_SIZE must be an integer >= 0, got '-5'"),
        (
            "SIMHASH_RESET",
            "maybe",
            "SIMHASH_RESET must be a boolean (True/False, 1/0), got 'maybe'",
        ),
        ("SIMHASH_DRY_RUN", 2, "SIMHASH_DRY_RUN must be a boolean (True/False, 1/0), got 2"),
        ("SIMHASH_HTML_FIELD", "", "SIMHASH_HTML_FIELD must be a non-empty string, got ''"),
        ("SIMHASH_DIR", 5, "SIMHASH_DIR must be a non-empty string, got 5"),
        (
            "SIMHASH_DIR",
            "idx\0x",
            "SIMHASH_DIR must be a folder's path, got one with a NUL: 'idx\\x00x'",
        ),
        ("SIMHASH_WORKERS", -1, "SIMHASH_WORKERS must be an integer between 0 and 64, got -1"),
        ("SIMHASH_TIMEOUT", 0, "SIMHASH_TIMEOUT must be a number > 0 and <= 86400, got 0"),
        (
            "SIMHASH_TIMEOUT",
            "soon",
            "SIMHASH_TIMEOUT must be a number > 0 and <= 86400, got 'soon'",
        ),
        ("SIMHASH_TIMEOUT", "nan", "SIMHASH_TIMEOUT must be a number > 0 and <= 86400, got 'nan'"),
        # meant as no timeout: past what a socket's wait takes, it killed the worker's thread
        ("SIMHASH_TIMEOUT", "1e7", "SIMHASH_TIMEOUT must be a number > 0 and <= 86400, got '1e7'"),
        ("SIMHASH_COMMIT_EVERY", 0, "SIMHASH_COMMIT_EVERY must be an integer >= 1, got 0"),
        (
            "SIMHASH_COMMIT_INTERVAL",
            -1,
            "SIMHASH_COMMIT_INTERVAL must be a number >= 0, got -1",
        ),
        (
            "SIMHASH_FSYNC",
            "sometimes",
            "SIMHASH_FSYNC must be a boolean (True/False, 1/0), got 'sometimes'",
        ),
        (
            "SIMHASH_ON_INDEX_ERROR",
            "ignore",
            "SIMHASH_ON_INDEX_ERROR must be one of 'stop', 'skip', got 'ignore'",
        ),
        (
            "SIMHASH_DROP_RECORDS",
            "some",
            "SIMHASH_DROP_RECORDS must be a boolean (True/False, 1/0), got 'some'",
        ),
        (
            "SIMHASH_SKIP_LISTINGS",
            "listings",
            "SIMHASH_SKIP_LISTINGS must be a boolean (True/False, 1/0), got 'listings'",
        ),
        (
            "SIMHASH_DROP_RECORDS_MAX",
            0,
            "SIMHASH_DROP_RECORDS_MAX must be an integer >= 1, got 0",
        ),
        (
            "SIMHASH_SKIP_URLS",
            ["/page/(\\d+"],
            "SIMHASH_SKIP_URLS: '/page/(\\\\d+' is no regular expression "
            "(missing ), unterminated subpattern at position 6)",
        ),
        (
            "SIMHASH_SKIP_URLS",
            '["/tag/", ',
            "SIMHASH_SKIP_URLS must be a JSON list of strings or one regular expression, got "
            "'[\"/tag/\", ': Expecting value: line 1 column 10 (char 9)",
        ),
        (
            "SIMHASH_SKIP_URLS",
            ["/tag/", 5],
            "SIMHASH_SKIP_URLS must be a list of regular expressions, got ['/tag/', 5]",
        ),
        ("SIMHASH_SKIP_URLS", 5, "SIMHASH_SKIP_URLS must be a list of regular expressions, got 5"),
    ],
)
def test_a_bad_value_names_the_setting(name, value, message):
    with pytest.raises(ValueError) as info:
        SimhashConfig.from_settings(Settings({name: value}))
    assert str(info.value) == message


def test_urls_to_skip_are_regular_expressions_from_a_list_or_the_command_line():
    """SIMHASH_SKIP_URLS: a list (settings.py), a JSON list or one expression (``-s``)."""
    patterns = [r"/page/\d+", r"/(tag|label)/", r"/$"]
    from_list = SimhashConfig.from_settings(Settings({"SIMHASH_SKIP_URLS": patterns}))
    assert [p.pattern for p in from_list.skip_urls] == patterns
    from_json = SimhashConfig.from_settings(
        Settings({"SIMHASH_SKIP_URLS": '["/page/\\\\d+", "/(tag|label)/", "/$"]'})
    )
    assert from_json == from_list
    one = SimhashConfig.from_settings(Settings({"SIMHASH_SKIP_URLS": r"/archive/\d{4}/"}))
    assert [p.pattern for p in one.skip_urls] == [r"/archive/\d{4}/"]
    # one expression opening with a character class, not a JSON list: it was refused
    print_pages = SimhashConfig.from_settings(Settings({"SIMHASH_SKIP_URLS": "[a-z]+/print/"}))
    assert [p.pattern for p in print_pages.skip_urls] == ["[a-z]+/print/"]
    assert SimhashConfig.from_settings(Settings({"SIMHASH_SKIP_URLS": ""})).skip_urls == ()
    assert SimhashConfig.from_settings(Settings()).skip_urls == ()
