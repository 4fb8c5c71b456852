"""Two weftd processes on one PostgreSQL (a schema of their own) with Redis
leases (a Redis database and wake channel of their own): a run submitted to
one is worked through the other by a Python worker."""

import os
import subprocess
import urllib.parse
import uuid

import pytest

import weft
from weft.v1 import run_pb2
from support import ThreadWorker, Weftd, step, unique

PG_URL = os.environ.get("WEFT_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
REDIS_URL = os.environ.get("WEFT_TEST_REDIS_URL", "redis://127.0.0.1:6379")
#: The Redis database the Python SDK's tests use, so that nothing they write
#: meets another suite's keys.
REDIS_DB = os.environ.get("WEFT_TEST_PYTHON_REDIS_DB", "9")


def _missing(what: str) -> None:
    msg = f"the cluster test needs {what}"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


def _psql(sql: str) -> None:
    r = subprocess.run(["psql", PG_URL, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], capture_output=True, text=True)
    if r.returncode != 0:
        _missing(f"PostgreSQL at {PG_URL} ({r.stderr.strip()})")


def _redis_ok() -> None:
    u = urllib.parse.urlparse(REDIS_URL)
    r = subprocess.run(["redis-cli", "-h", u.hostname or "127.0.0.1", "-p", str(u.port or 6379), "ping"],
                       capture_output=True, text=True)
    if r.returncode != 0 or "PONG" not in r.stdout:
        _missing(f"Redis at {REDIS_URL}")


@pytest.fixture(scope="module")
def cluster():
    _redis_ok()
    schema = "weft_py_" + uuid.uuid4().hex[:12]
    _psql(f"CREATE SCHEMA {schema}")
    u = urllib.parse.urlparse(PG_URL)
    q = dict(urllib.parse.parse_qsl(u.query), search_path=schema)
    store = urllib.parse.urlunparse(u._replace(query=urllib.parse.urlencode(q)))
    redis = urllib.parse.urlunparse(urllib.parse.urlparse(REDIS_URL)._replace(path="/" + REDIS_DB))
    flags = ("--store", store, "--redis", redis, "--wake-channel", f"{schema}:wake", "--lease-ttl", "2s")
    a = Weftd(*flags)
    b = None
    try:
        b = Weftd(*flags)
        yield a, b
    finally:
        for d in (a, b):
            if d is not None:
                d.stop()
        _psql(f"DROP SCHEMA {schema} CASCADE")


def test_a_run_submitted_to_one_weftd_is_worked_through_the_other_to_completed(cluster):
    a, b = cluster
    act = unique("cluster")

    def register(w):
        @w.activity(act)
        async def work(n, ctx):
            return {"doubled": n * 2, "worker": ctx.info.worker_id}

    w = ThreadWorker(b.url, register, worker_id="py-cluster")
    try:
        with weft.Client(a.url) as ca, weft.Client(b.url, http2=True) as cb:
            d = {"plan_id": unique("py-cluster"), "plan_version": "1",
                 "actions": [{"id": f"s{i}", "order": i + 1, "activity": act, "input": i} for i in range(3)]}
            runs = [ca.submit(d, input=i, run_request_id=f"r{i}").run for i in range(4)]
            for r in runs:
                done = cb.await_run(r.run_id, timeout=60)
                assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
                assert weft.from_value(step(done, "s2").output) == {"doubled": 4, "worker": "py-cluster"}
            again = ca.submit(d, input=0, run_request_id="r0")
            assert again.existing and again.run.run_id == runs[0].run_id
    finally:
        w.stop()
