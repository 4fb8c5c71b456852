"""The asyncio worker runtime against a real weftd, some workers in their own
processes (frozen with SIGSTOP, killed with SIGKILL, stopped with SIGTERM)."""

import asyncio
import json
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import weft
from weft.v1 import common_pb2, run_pb2
from weft.worker import (
    COMPLETED_WITH_RESULT,
    ActivityContext,
    ActivityError,
    NonRetryable,
    VerifyResult,
    Worker,
    heartbeat_every,
)
from weft.values import convert as _convert
from support import ChildWorker, ThreadWorker, step, unique, until


def plan(*actions: dict) -> dict:
    return {"plan_id": unique("py-w"), "plan_version": "1",
            "actions": [{"order": i + 1, **a} for i, a in enumerate(actions)]}


@dataclass
class Order:
    order_id: str
    cents: int


def test_a_worker_runs_a_workflow_with_typed_inputs_a_retried_step_upstream_outputs_and_a_thread(weftd, client):
    a, b = unique("reserve"), unique("charge")
    attempts = []

    def register(w: Worker) -> None:
        @w.activity(a)
        async def reserve(order: Order, ctx: ActivityContext) -> dict:
            assert isinstance(order, Order)
            attempts.append(ctx.info.engine_attempt)
            if ctx.info.engine_attempt == 1:
                raise ActivityError("the stock service is down", error_class=common_pb2.ERROR_CLASS_TRANSIENT,
                                    code="stock_down")
            return {"reservation": f"r-{order.order_id}"}

        @w.activity(b)
        def charge(order: Order, ctx: ActivityContext) -> Order:  # a plain function: run in a thread
            assert threading.current_thread() is not threading.main_thread()
            ctx.heartbeat_sync({"progress": 0.5})
            assert ctx.info.upstream_outputs["reserve"] == {"reservation": f"r-{order.order_id}"}
            return Order(order.order_id, order.cents * 2)

    w = ThreadWorker(weftd.url, register)
    try:
        order = {"order_id": "o1", "cents": 21}
        retry = {"max_attempts": 3, "initial_backoff_ms": 300, "strategy": "BACKOFF_STRATEGY_CONSTANT"}
        run = client.submit_and_await(plan({"id": "reserve", "activity": a, "input": order, "retry": retry},
                                           {"id": "charge", "activity": b, "input": order}), timeout=60)
    finally:
        w.stop()
    assert run.status == run_pb2.RUN_STATUS_COMPLETED, run.message
    assert attempts == [1, 2]
    first, second = step(run, "reserve").attempts
    assert first.outcome == run_pb2.ATTEMPT_OUTCOME_FAILED and first.error.code == "stock_down"
    assert second.outcome == run_pb2.ATTEMPT_OUTCOME_SUCCEEDED
    waited = second.started_at.ToMilliseconds() - first.completed_at.ToMilliseconds()
    assert waited >= 300, f"the retry did not wait its backoff ({waited} ms)"
    assert weft.from_value(step(run, "charge").output) == {"order_id": "o1", "cents": 42}


def test_NonRetryable_fails_the_step_at_once_with_its_class_and_code(weftd, client):
    a = unique("refuse")

    def register(w: Worker) -> None:
        @w.activity(a)
        async def refuse(_):
            raise NonRetryable("the card was declined", code="declined")

    w = ThreadWorker(weftd.url, register)
    try:
        run = client.submit_and_await(plan({"id": "pay", "activity": a, "on_failure": "ON_FAILURE_ABORT"}), timeout=60)
    finally:
        w.stop()
    assert run.status == run_pb2.RUN_STATUS_FAILED
    (attempt,) = step(run, "pay").attempts
    assert attempt.error.error_class == common_pb2.ERROR_CLASS_BUSINESS_CONFLICT
    assert attempt.error.code == "declined"


def test_a_worker_never_runs_more_tasks_at_once_than_its_concurrency_and_takes_next_tasks_eagerly(weftd, client):
    a = unique("conc")
    running, peak, lock = [0], [0], threading.Lock()

    def register(w: Worker) -> None:
        @w.activity(a)
        async def work(_):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            await asyncio.sleep(0.05)
            with lock:
                running[0] -= 1
            return "ok"

    w = ThreadWorker(weftd.url, register, concurrency=2)
    try:
        seq = plan(*({"id": f"s{i}", "activity": a} for i in range(3)))
        runs = [client.submit(dict(seq, plan_id=unique("conc"))).run for _ in range(5)]
        for r in runs:
            assert client.await_run(r.run_id, timeout=60).status == run_pb2.RUN_STATUS_COMPLETED
    finally:
        w.stop()
    assert peak[0] == 2
    assert w.worker.eager_tasks > 0, "no next task came with a completion"


def test_cancelling_a_run_cancels_the_running_activity_which_reports_CANCELLED(weftd, client):
    a = unique("cancel")
    started, reasons = threading.Event(), []

    def register(w: Worker) -> None:
        @w.activity(a)
        async def wait_forever(_, ctx: ActivityContext):
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                reasons.append(ctx.cancel_reason)
                raise

    w = ThreadWorker(weftd.url, register, heartbeat_interval=0.2)
    try:
        run = client.submit(plan({"id": "work", "activity": a})).run
        assert started.wait(30)
        client.runs.cancel_run(run_id=run.run_id)
        done = client.await_run(run.run_id, timeout=60)
        until("the activity to be cancelled", lambda: reasons)
    finally:
        w.stop()
    assert done.status == run_pb2.RUN_STATUS_CANCELLED
    assert reasons == ["cancel-requested"]


def test_a_worker_frozen_past_its_heartbeat_timeout_loses_the_task_to_another_worker_which_resumes_from_its_details(
        weftd, client):
    a = unique("frozen")
    child = ChildWorker(weftd.url, WORKER_ID="frozen-child", ACTIVITY=a, MODE="hang", DETAILS='{"page": 3}')
    try:
        run = client.submit(plan({"id": "charge", "activity": a, "heartbeat_timeout_ms": 1500,
                                  "input": {"order_id": "x", "cents": 1},
                                  "retry": {"max_attempts": 3, "initial_backoff_ms": 10}})).run
        child.wait_for("started", lambda l: l.get("started") == "charge")
        child.proc.send_signal(19)  # SIGSTOP: no more heartbeats

        def register(w: Worker) -> None:
            @w.activity(a)
            async def rescue(_, ctx: ActivityContext):
                assert ctx.heartbeat_details == ctx.info.heartbeat_details
                return {"receipt": "second-worker", "resumed_from": ctx.info.heartbeat_details}

        w = ThreadWorker(weftd.url, register, worker_id="rescuer")
        try:
            done = client.await_run(run.run_id, timeout=60)
        finally:
            w.stop()
        assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
        s = step(done, "charge")
        assert weft.from_value(s.output) == {"receipt": "second-worker", "resumed_from": {"page": 3}}
        assert (s.attempts[0].worker_id, s.attempts[0].outcome) == ("frozen-child", run_pb2.ATTEMPT_OUTCOME_TIMED_OUT)
        assert s.attempts[-1].worker_id == "rescuer"
        child.proc.send_signal(18)  # SIGCONT: its next heartbeat learns the claim is gone
        aborted = child.wait_for("aborted", lambda l: "aborted" in l)
        assert aborted["aborted"] in ("claim-lost", "cancel-requested")
    finally:
        child.kill()


def test_after_a_worker_is_killed_mid_task_verify_reconciles_the_step_without_running_it_again(weftd, client):
    a = unique("killed")
    ledger = tempfile.mkdtemp(prefix="py-ledger-")
    order_id = unique("order")
    child = ChildWorker(weftd.url, WORKER_ID="doomed-child", ACTIVITY=a, MODE="effect-then-hang", LEDGER=ledger)
    try:
        run = client.submit(plan({"id": "charge", "activity": a, "heartbeat_timeout_ms": 1500,
                                  "input": {"order_id": order_id, "cents": 4200},
                                  "retry": {"max_attempts": 3, "initial_backoff_ms": 10}})).run
        child.wait_for("the side effect", lambda l: l.get("effect") == order_id)
        child.proc.kill()
        assert child.proc.wait() == -9
        runs, verified = [], []

        def register(w: Worker) -> None:
            @w.activity(a, idempotency_key=lambda o: o.order_id)
            async def charge(o: Order):
                runs.append(o)
                return {"receipt": "charged-twice"}

            @charge.verify
            async def check(key: str, ctx: ActivityContext) -> VerifyResult:
                verified.append(key)
                return VerifyResult(COMPLETED_WITH_RESULT, result=json.loads((Path(ledger) / key).read_text()))

        w = ThreadWorker(weftd.url, register, worker_id="reconciler")
        try:
            done = client.await_run(run.run_id, timeout=60)
        finally:
            w.stop()
        assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
        assert verified == [order_id]
        assert runs == [], "the activity ran again after its side effect happened"
        s = step(done, "charge")
        assert weft.from_value(s.output) == {"receipt": f"R-{order_id}"}
        assert [(x.worker_id, x.outcome) for x in s.attempts] == [("doomed-child", run_pb2.ATTEMPT_OUTCOME_TIMED_OUT)]
        events = client.events.list_events(run_id=run.run_id).events
        assert any(e.event_type == "StepVerified" and e.step_id == "charge" for e in events)
    finally:
        child.kill()
        shutil.rmtree(ledger, ignore_errors=True)


def test_SIGTERM_drains_the_in_flight_task_reports_it_claims_no_new_one_and_exits_0(weftd, client):
    a = unique("drain")
    ledger = tempfile.mkdtemp(prefix="py-drain-")
    child = ChildWorker(weftd.url, WORKER_ID="draining-child", ACTIVITY=a, MODE="finish-on-release", LEDGER=ledger)
    try:
        first = client.submit(plan({"id": "work", "activity": a, "input": {"order_id": "1", "cents": 1}})).run
        child.wait_for("started", lambda l: l.get("started") == "work")
        child.proc.terminate()
        child.wait_for("shutting down", lambda l: l.get("log") == "worker shutting down")

        def not_polling():
            q = client.workers.describe_queue(queue="default").queue
            return all(not p.polling for p in q.pollers if p.worker_id == "draining-child")

        until("the draining worker's poll to close", not_polling)
        second = client.submit(plan({"id": "work", "activity": a, "input": {"order_id": "2", "cents": 1}})).run
        (Path(ledger) / "release").touch()
        assert child.proc.wait(30) == 0, child.lines
        assert {"stopped": "clean"} in child.lines
        done = client.await_run(first.run_id, timeout=30)
        assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
        assert weft.from_value(step(done, "work").output) == {"receipt": "drained"}
        assert len(step(done, "work").attempts) == 1
        later = client.runs.get_run(run_id=second.run_id).run
        assert list(step(later, "work").attempts) == [], "the draining worker claimed a new task"
    finally:
        child.kill()
        shutil.rmtree(ledger, ignore_errors=True)


def test_heartbeat_every_is_a_third_of_the_timeout_or_the_interval_when_shorter():
    assert heartbeat_every(900, 10.0) == pytest.approx(0.3)
    assert heartbeat_every(90000, 10.0) == 10.0
    assert heartbeat_every(0, 10.0) == 10.0
    assert heartbeat_every(0, 0) == 0


def test_registration_refuses_an_empty_or_repeated_name_and_verify_without_idempotency_key():
    w = Worker(weft.AsyncClient("http://127.0.0.1:9"))
    w.activity("a")(lambda x: x)
    with pytest.raises(ValueError):
        w.activity("a")(lambda x: x)
    with pytest.raises(ValueError):
        w.activity("")(lambda x: x)
    act = w.activity("b")(lambda x: x)
    with pytest.raises(TypeError):
        act.verify(lambda k, c: None)


def test_inputs_fill_dataclasses_by_field_and_refuse_the_wrong_shape():
    assert _convert(Order, {"order_id": "a", "cents": 1, "extra": True}) == Order("a", 1)
    assert _convert(dict, {"x": 1}) == {"x": 1}
    with pytest.raises(TypeError):
        _convert(Order, ["not", "an", "object"])
    with pytest.raises(TypeError):
        _convert(Order, {"order_id": "a"})


def test_a_completion_whose_answer_is_lost_is_retried_with_the_same_task_token(weftd, client):
    from lossy_proxy import LossyProxy

    a = unique("lost")
    runs = []
    proxy = LossyProxy(weftd.url, "CompleteTask", drops=1)

    def register(w: Worker) -> None:
        @w.activity(a)
        async def work(_):
            runs.append(1)
            return {"once": True}

    w = ThreadWorker(proxy.url, register)
    try:
        done = client.submit_and_await(plan({"id": "work", "activity": a}), timeout=60)
    finally:
        w.stop()
        proxy.close()
    assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
    assert proxy.seen == 2, "the completion was not retried"
    assert runs == [1] and len(step(done, "work").attempts) == 1
    assert weft.from_value(step(done, "work").output) == {"once": True}


def test_RateLimited_retry_after_reaches_weftd_as_the_next_attempts_recorded_due_time(weftd, client):
    from weft.worker import RateLimited

    a = unique("limited")
    failed_after: list[int] = []

    def register(w: Worker) -> None:
        @w.activity(a)
        async def call_api(_, ctx: ActivityContext):
            failed_after.append(int(time.time() * 1000))  # the API answers milliseconds
            raise RateLimited("the API said 429", retry_after=3600)

    w = ThreadWorker(weftd.url, register)
    try:
        run = client.submit(plan({"id": "api", "activity": a,
                                  "retry": {"max_attempts": 2, "initial_backoff_ms": 10}})).run
        failed = until("the first attempt to fail", lambda: (lambda r: r if step(r, "api").attempts else None)(
            client.runs.get_run(run_id=run.run_id).run))
    finally:
        w.stop()
    s = step(failed, "api")
    assert len(s.attempts) == 1 and failed_after, "no second attempt before the hour"
    assert s.attempts[0].error.error_class == common_pb2.ERROR_CLASS_RATE_LIMIT
    assert s.attempts[0].error.code == "rate_limited"
    assert s.next_attempt_at.ToMilliseconds() >= failed_after[0] + 3_600_000


def test_retry_after_ms_is_whole_milliseconds_rounded_up_within_a_day():
    from weft.worker.failure import retry_after_ms

    assert [retry_after_ms(x) for x in (None, 0, -1, 0.0001, 1.5, 10 ** 9)] == [0, 0, 0, 1, 1500, 86_400_000]


def test_a_step_failing_for_good_runs_the_compensations_registered_by_decorator(weftd, client):
    a, undo = unique("book"), unique("unbook")
    undone = []

    def register(w: Worker) -> None:
        @w.activity(a)
        def book(what: str) -> dict:
            if what == "flight":
                raise NonRetryable("no seats", code="full")
            return {"booked": what}

        @w.activity(a + "-noop")
        def takes_nothing() -> str:  # an activity may take no parameter at all
            return "done"

        @w.compensation(undo)
        async def unbook(what: str, ctx: ActivityContext) -> None:
            undone.append((what, ctx.info.action_id))

    w = ThreadWorker(weftd.url, register)
    try:
        run = client.submit_and_await(plan(
            {"id": "noop", "activity": a + "-noop"},
            {"id": "hotel", "activity": a, "input": "hotel", "compensation": {"operation": undo, "input": "hotel"}},
            {"id": "flight", "activity": a, "input": "flight"}), timeout=60)
    finally:
        w.stop()
    assert run.status == run_pb2.RUN_STATUS_FAILED
    assert run.compensation_outcome == run_pb2.COMPENSATION_OUTCOME_ROLLED_BACK
    assert undone == [("hotel", "hotel")]
    assert weft.from_value(step(run, "noop").output) == "done"


def test_a_lost_completion_answer_does_not_strand_the_next_task_eager_dispatch_claimed_with_it(weftd, client):
    from lossy_proxy import LossyProxy

    a = unique("eager-lost")
    proxy = LossyProxy(weftd.url, "CompleteTask", drops=1)

    def register(w: Worker) -> None:
        @w.activity(a)
        async def work(_, ctx: ActivityContext):
            return {"step": ctx.info.action_id}

    w = ThreadWorker(proxy.url, register, concurrency=1)
    try:
        # The first completion claims "second" for the worker in its own commit;
        # its answer is lost. The attempt timeout (10 min) is far beyond the
        # test's wait: only a claim given back lets "second" run.
        done = client.submit_and_await(plan(
            {"id": "first", "activity": a},
            {"id": "second", "activity": a, "timeout_ms": 600_000}), timeout=30)
    finally:
        w.stop()
        proxy.close()
    assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
    assert proxy.seen >= 2, "the completion was not retried"
    second = step(done, "second")
    assert [x.outcome for x in second.attempts] == [run_pb2.ATTEMPT_OUTCOME_SUCCEEDED]


def test_an_activity_run_for_an_item_of_a_fan_out_reads_its_item_and_index_from_its_info(weftd, client):
    a = unique("fan")
    seen = {}

    def register(w: Worker) -> None:
        @w.activity(a)
        async def ship(_, ctx: ActivityContext):
            seen[ctx.info.action_id] = (ctx.info.item, ctx.info.index, ctx.info.is_item)
            return ctx.info.index * 10

    w = ThreadWorker(weftd.url, register)
    try:
        run = client.submit_and_await(plan({"id": "first", "activity": a},
                                           {"id": "lines", "activity": a, "for_each": '["a", {"sku": "b"}]',
                                            "max_concurrency": 1}), timeout=60)
    finally:
        w.stop()
    assert run.status == run_pb2.RUN_STATUS_COMPLETED, run.message
    assert seen["first"] == (None, 0, False)
    assert seen["lines[0]"] == ("a", 0, True)
    assert seen["lines[1]"] == ({"sku": "b"}, 1, True)
    assert step(run, "lines[1]").parent_step == "lines"
    assert weft.from_value(step(run, "lines").output) == [0, 10]
