"""A loopback HTTP server for real crawls: ``tests/site/`` plus routes for bad inputs."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import scrapy.settings.default_settings as scrapy_defaults

# The in-process crawls never use Scrapy's telnet console, which binds a port of 6023-6073:
# when another process holds one of them, Twisted leaves the socket of the failed attempt
# unclosed, and its ResourceWarning fails the test (warnings are errors here). Seen once,
# with another crawl running beside the suite. `scrapy crawl` subprocesses are unaffected.
scrapy_defaults.TELNETCONSOLE_ENABLED = False

#: The articles, their copies and the start page: the example project's bundled site.
SITE = Path(__file__).parents[1] / "example_project" / "site"
#: Pages for bad inputs, served under /bad/.
BAD = Path(__file__).parent / "site" / "bad"

#: Bytes of the page served as /bad/huge.html (20 MB of one repeated paragraph).
HUGE_SIZE = 20 * 1024 * 1024


def _huge_page() -> bytes:
    paragraph = (
        b"<p>The archive keeps every council minute since 1911, scanned page by page, "
        b"with handwritten notes in the margins and stamps from the records office.</p>\n"
    )
    head = b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Archive</title></head><body>"
    count = (HUGE_SIZE - len(head)) // len(paragraph)
    return head + paragraph * count + b"</body></html>"


def _bad_routes() -> dict[str, tuple[int, str, bytes]]:
    rng = random.Random(4)
    return {
        "/bad/binary.html": (200, "text/html", rng.randbytes(64 * 1024)),
        "/bad/huge.html": (200, "text/html; charset=utf-8", _huge_page()),
        "/bad/empty.html": (200, "text/html", b""),
        "/bad/wrong-charset.html": (
            200,
            "text/html; charset=utf-8",  # the file is windows-1252
            (BAD / "wrong-charset.html").read_bytes(),
        ),
        "/bad/logo.png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + rng.randbytes(2048)),
        "/bad/data.json": (200, "application/json", b'{"stories": [1, 2, 3]}'),
    }


class SiteServer:
    """Serves the example project's site, and ``tests/site/bad/`` as /bad/, on 127.0.0.1 (a
    free port) from a daemon thread. ``routes`` maps a path to ``(status, content type, body)``
    (and optionally a dict of more headers) served instead of a file; tests may change it."""

    def __init__(self, root: Path = SITE) -> None:
        self.routes: dict[str, tuple[int, str, bytes]] = {}
        handler = partial(_Handler, self, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def __enter__(self) -> SiteServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class _Handler(SimpleHTTPRequestHandler):
    def __init__(self, server_: SiteServer, *args, **kwargs) -> None:
        self.site = server_
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        route = self.site.routes.get(urlsplit(self.path).path)
        if route is None:
            super().do_GET()
            return
        status, content_type, body, *more = route
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (more[0] if more else {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def translate_path(self, path: str) -> str:
        if path.startswith("/bad/"):
            return str(BAD / urlsplit(path).path.removeprefix("/bad/"))
        return super().translate_path(path)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def bad_routes() -> dict[str, tuple[int, str, bytes]]:
    return _bad_routes()


@pytest.fixture(scope="session")
def site(bad_routes) -> Iterator[SiteServer]:
    with SiteServer() as server:
        server.routes.update(bad_routes)
        yield server


@pytest.fixture
def routes(site: SiteServer) -> Iterator[dict[str, tuple[int, str, bytes]]]:
    """The server's routes, restored after the test."""
    saved = dict(site.routes)
    yield site.routes
    site.routes.clear()
    site.routes.update(saved)


# Real redis-server processes (one server, a 3-master cluster) for the Redis index's tests.
from ._redis_server import key, redis_cluster, redis_server  # noqa: E402, F401
