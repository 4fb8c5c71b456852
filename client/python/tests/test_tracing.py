"""Trace continuation in the Python worker, against a real weftd with
tracing on, exporting to an OTLP/HTTP receiver in this process: the
activity gets its attempt's traceparent, the worker sends it on the task's
heartbeats and reports (seen by a real proxy in between), and weftd's span
of the worker's CompleteTask lands in the run's trace."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import weft
from weft.v1 import run_pb2
from weft.worker import ActivityContext, Worker
from lossy_proxy import LossyProxy
from support import ThreadWorker, Weftd, step, unique, until

TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$")


def _fields(b: bytes):
    """The (number, wire type, value) of each field of a protobuf message:
    bytes for length-delimited fields, an int for varints; fixed-width
    fields are skipped over."""
    i = 0

    def varint() -> int:
        nonlocal i
        shift = out = 0
        while True:
            c = b[i]
            i += 1
            out |= (c & 0x7F) << shift
            if c < 0x80:
                return out
            shift += 7

    while i < len(b):
        key = varint()
        n, wt = key >> 3, key & 7
        if wt == 0:
            yield n, wt, varint()
        elif wt == 2:
            size = varint()
            yield n, wt, b[i:i + size]
            i += size
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wt}")


def spans_of(export: bytes) -> list[tuple[str, str]]:
    """(trace id in hex, name) of each span of an OTLP ExportTraceServiceRequest:
    resource_spans (1) → scope_spans (2) → spans (2) → trace_id (1), name (5)."""
    out = []
    for n, _, rs in _fields(export):
        if n != 1:
            continue
        for m, _, ss in _fields(rs):
            if m != 2:
                continue
            for k, _, span in _fields(ss):
                if k != 2:
                    continue
                f = {num: v for num, _, v in _fields(span) if num in (1, 5)}
                out.append((f.get(1, b"").hex(), f.get(5, b"").decode()))
    return out


class OTLPReceiver:
    """An OTLP/HTTP trace receiver: keeps every span weftd exports to /v1/traces."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.path == "/v1/traces":
                    receiver.spans.extend(spans_of(body))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_traced_task_hands_its_traceparent_to_the_activity_and_sends_it_on_its_heartbeats_and_reports():
    otlp = OTLPReceiver()
    d = Weftd("--otlp-endpoint", otlp.url, env={"OTEL_BSP_SCHEDULE_DELAY": "100"})
    proxy = LossyProxy(d.url, "none", drops=0)
    a = unique("traced")
    seen: list[tuple[int, str]] = []

    def register(w: Worker) -> None:
        @w.activity(a)
        async def act(_, ctx: ActivityContext):
            seen.append((ctx.info.engine_attempt, ctx.info.traceparent))
            assert await ctx.heartbeat({"at": ctx.info.engine_attempt})
            if ctx.info.engine_attempt == 1:
                raise RuntimeError("first attempt fails")
            return "ok"

    try:
        with weft.Client(d.url) as c:
            w = ThreadWorker(proxy.url, register)
            try:
                run = c.submit_and_await({"plan_id": unique("tr"), "plan_version": "1", "actions": [
                    {"id": "a", "order": 1, "activity": a, "retry": {"max_attempts": 2, "initial_backoff_ms": 1}}]},
                    timeout=60)
            finally:
                w.stop()
        assert run.status == run_pb2.RUN_STATUS_COMPLETED, run.message
        assert [n for n, _ in seen] == [1, 2]
        (_, first), (_, second) = seen
        m1, m2 = TRACEPARENT.match(first), TRACEPARENT.match(second)
        assert m1 and m2, f"not W3C traceparents: {seen}"
        assert m1.group(1) == m2.group(1), "one trace per run"
        assert m1.group(2) != m2.group(2), "each attempt its own span"
        sent = [(method, tp) for method, tp in proxy.calls if method in ("HeartbeatTask", "FailTask", "CompleteTask")]
        assert sent == [("HeartbeatTask", first), ("FailTask", first), ("HeartbeatTask", second),
                        ("CompleteTask", second)], sent
        assert all(tp == "" for method, tp in proxy.calls if method == "PollTasks"), "a poll belongs to no task"
        trace_id = m1.group(1)
        until("weftd's span of the CompleteTask in the run's trace",
              lambda: any(t == trace_id and "CompleteTask" in name for t, name in otlp.spans))
        assert step(run, "a").attempts[0].outcome == run_pb2.ATTEMPT_OUTCOME_FAILED
    finally:
        proxy.close()
        d.stop()
        otlp.close()
