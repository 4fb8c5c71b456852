"""The client against a real weftd: every protocol variant, typed faults,
tokens, deadlines, and retries only where a repeat is safe."""

import asyncio
import base64
import json

import pytest
from google.protobuf import json_format

import weft
from weft import errors
from weft.retry import RetryPolicy
from weft.v1 import definition_pb2, fault_pb2, run_pb2, signal_pb2
from lossy_proxy import LossyProxy
from support import ThreadWorker, Weftd, step, unique

ECHO = unique("py-echo")


def one_step(activity: str, **action: object) -> dict:
    return {"plan_id": unique("py-plan"), "plan_version": "1",
            "actions": [{"id": "work", "order": 1, "activity": activity, **action}]}


def wait_for_signal() -> dict:
    return {"plan_id": unique("py-sig"), "plan_version": "1",
            "actions": [{"id": "wait", "order": 1, "wait_for_signal": {"signal_name": "go"}}]}


@pytest.fixture(scope="module")
def echo_worker(weftd):
    def register(w):
        @w.activity(ECHO)
        async def echo(value, ctx):
            return {"echo": value, "action": ctx.info.action_id}

    tw = ThreadWorker(weftd.url, register)
    yield tw
    tw.stop()


@pytest.mark.parametrize("json_", [False, True], ids=["proto", "json"])
@pytest.mark.parametrize("http2", [False, True], ids=["http1", "h2c"])
def test_a_submitted_run_is_awaited_to_completed_over_every_protocol_variant(weftd, echo_worker, json_, http2):
    with weft.Client(weftd.url, json=json_, http2=http2) as c:
        run = c.submit_and_await(one_step(ECHO, input={"n": 1}), timeout=30)
        assert weft.run_status_name(run.status) == "COMPLETED", run.message
        assert weft.from_value(step(run, "work").output) == {"echo": {"n": 1}, "action": "work"}
        events = [e.event_type for e in c.watch_events(run.run_id)]
        assert events[0] == "RunSubmitted" and events[-1] == "RunCompleted"


def test_the_asyncio_client_submits_awaits_and_watches_events(weftd, echo_worker):
    async def main():
        async with weft.AsyncClient(weftd.url) as c:
            sub = await c.submit(one_step(ECHO, input="hi"))
            run = await c.await_run(sub.run.run_id, timeout=30)
            seqs = [e.run_seq async for e in c.watch_events(run.run_id)]
            listed = [r.run_id async for r in c.list_runs(plan_id=run.plan_id)]
            return run, seqs, listed

    run, seqs, listed = asyncio.run(main())
    assert run.status == run_pb2.RUN_STATUS_COMPLETED
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)) > 2
    assert listed == [run.run_id]


def test_an_invalid_request_raises_InvalidArgument_naming_the_field_and_rule(client):
    with pytest.raises(weft.InvalidArgument) as e:
        client.runs.get_run(run_id="")
    assert e.value.code == "InvalidArgument" and e.value.connect_code == "invalid_argument"
    assert [(v.field, v.rule_id) for v in e.value.violations] == [("run_id", "string.min_len")]
    assert e.value.correlation_id


def test_an_unknown_run_raises_NotFound(client):
    with pytest.raises(weft.NotFound) as e:
        client.runs.get_run(run_id="run-does-not-exist")
    assert e.value.fault_code == fault_pb2.FAULT_CODE_NOT_FOUND


def test_cancelling_a_completed_run_raises_IllegalTransition(client, echo_worker):
    run = client.submit_and_await(one_step(ECHO), timeout=30)
    with pytest.raises(weft.IllegalTransition) as e:
        client.runs.cancel_run(run_id=run.run_id)
    assert e.value.fault.run_status == run_pb2.RUN_STATUS_COMPLETED


def test_a_run_request_id_reused_with_another_definition_raises_OperationConflict(client):
    rid = unique("rid")
    d = one_step(unique("never"))
    client.submit(d, run_request_id=rid, start=False)
    d["actions"][0]["activity"] = unique("other")
    with pytest.raises(weft.OperationConflict):
        client.submit(d, run_request_id=rid, start=False)


def test_deleting_a_run_that_has_not_finished_raises_FailedPrecondition(client):
    run = client.submit(one_step(unique("never")), start=False).run
    with pytest.raises(weft.FailedPrecondition):
        client.runs.delete_run(run_id=run.run_id)


def test_a_report_on_a_claim_already_reported_differently_raises_TaskClaimLost(client):
    a = unique("claim")
    client.submit(one_step(a))
    res = client.workers.poll_tasks(worker_id="w", activities=[{"name": a}], max_tasks=1, wait_ms=5000)
    token = res.tasks[0].task_token
    client.workers.complete_task(task_token=token, worker_id="w")
    with pytest.raises(weft.TaskClaimLost):
        client.workers.fail_task(task_token=token, worker_id="w", error_class=1)


def _connect_error(code: str, fault: fault_pb2.Fault) -> bytes:
    value = base64.b64encode(fault.SerializeToString()).decode().rstrip("=")
    return json.dumps({"code": code, "message": "m", "details": [{"type": "weft.v1.Fault", "value": value}]}).encode()


@pytest.mark.parametrize("number", [v.number for v in fault_pb2.FaultCode.DESCRIPTOR.values if v.number])
def test_every_fault_code_raises_the_class_named_after_it(number):
    name = fault_pb2.FaultCode.Name(number).removeprefix("FAULT_CODE_")
    err = errors.from_http(409, _connect_error("aborted", fault_pb2.Fault(code=number, correlation_id="c")), {})
    cls = getattr(weft, errors.pascal(name), None) or errors.FAULT_CLASSES[errors.pascal(name)]
    assert type(err) is cls and isinstance(err, weft.WeftError)
    assert err.code == errors.pascal(name) and err.fault_code == number and err.correlation_id == "c"


def test_a_fault_code_this_client_does_not_know_takes_the_connect_codes_name():
    err = errors.from_http(409, _connect_error("aborted", fault_pb2.Fault(code=999)), {})
    assert type(err) is errors.FAULT_CLASSES["Aborted"] and err.code == "Aborted" and err.fault_code == 999


@pytest.fixture(scope="module")
def secured():
    d = Weftd("--max-runs-per-tenant", "1", "--backpressure", "reject",
              env={"WEFT_AUTH_TOKENS": "alice-secret-token-1234=acme:alice,bob-secret-token-12345=acme:bob"})
    yield d
    d.stop()


def test_a_bearer_token_authenticates_and_a_missing_one_raises_Unauthenticated(secured):
    with weft.Client(secured.url) as anon, pytest.raises(weft.Unauthenticated):
        anon.runs.list_runs()
    with weft.Client(secured.url, token=lambda: "alice-secret-token-1234") as alice:
        alice.runs.list_runs()


def test_who_am_i_answers_the_callers_principal_tenant_and_roles(secured):
    with weft.Client(secured.url, token="alice-secret-token-1234") as alice:
        me = alice.identity.who_am_i()
    assert (me.principal, me.tenant_id) == ("alice", "acme")
    assert me.roles and "runs.read" in me.permissions


def test_the_clients_serve_every_service_of_the_api():
    import importlib
    import pkgutil
    import weft.v1
    api = set()
    for m in pkgutil.iter_modules(weft.v1.__path__):
        if m.name.endswith("_pb2"):
            api |= {s.full_name for s in importlib.import_module(f"weft.v1.{m.name}").DESCRIPTOR.services_by_name.values()}
    assert api == {s.full_name for s in weft.client.SERVICES.values()}
    with weft.Client() as c:
        assert all(hasattr(c, name) for name in weft.client.SERVICES)

    async def served_async() -> bool:
        async with weft.AsyncClient() as c:
            return all(hasattr(c, name) for name in weft.client.SERVICES)
    assert asyncio.run(served_async())


def test_separation_of_duties_raises_PermissionDenied_and_a_tenant_limit_ResourceExhausted(secured):
    manual = {"plan_id": unique("py-manual"), "plan_version": "1",
              "actions": [{"id": "approve", "order": 1, "completion_mode": "COMPLETION_MODE_MANUAL"}]}
    with weft.Client(secured.url, token="alice-secret-token-1234") as alice:
        run = alice.submit(manual).run
        blocked = _until_blocked(alice, run.run_id)
        with pytest.raises(weft.PermissionDenied):
            alice.complete_manual_action(run.run_id, "approve", step(blocked, "approve").completion_token, "alice")
        with pytest.raises(weft.ResourceExhausted) as e:
            alice.submit(manual)
        assert e.value.retry_after and e.value.retry_after > 0
    with weft.Client(secured.url, token="bob-secret-token-12345") as bob:
        bob.complete_manual_action(run.run_id, "approve", step(blocked, "approve").completion_token, "bob")
        assert bob.await_run(run.run_id, timeout=30).status == run_pb2.RUN_STATUS_COMPLETED


def _until_blocked(c, run_id):
    from support import until
    return until("the run to block", lambda: (lambda r: r if r.status == run_pb2.RUN_STATUS_BLOCKED else None)(
        c.runs.get_run(run_id=run_id).run))


def test_a_signal_whose_answer_is_lost_is_retried_with_its_id_and_answered_with_the_original_result(weftd, client):
    run = client.submit(wait_for_signal()).run
    proxy = LossyProxy(weftd.url, "SignalRun", drops=1)
    try:
        with weft.Client(proxy.url) as c:
            res = c.signal_run(run.run_id, "go", {"ok": True})
        assert proxy.seen == 2, "the signal was not retried"
        assert res.duplicate, "the retry was not answered as the original signal"
        again = client.signal_run(run.run_id, "go", {"ok": True}, signal_id=res.result.signal_id)
        assert again.duplicate and again.result == res.result
    finally:
        proxy.close()
    assert client.await_run(run.run_id, timeout=30).status == run_pb2.RUN_STATUS_COMPLETED
    received = [e for e in client.events.list_events(run_id=run.run_id).events if e.event_type == "SignalAccepted"]
    assert len(received) == 1


def test_a_submission_without_a_run_request_id_is_not_retried_and_one_with_it_is(weftd, client):
    d = one_step(unique("never"))
    proxy = LossyProxy(weftd.url, "SubmitRun", drops=1)
    try:
        with weft.Client(proxy.url) as c:
            with pytest.raises(weft.Unavailable) as e:
                c.submit(d, start=False)
            assert e.value.is_network_error and proxy.seen == 1
            proxy.seen, proxy.drops = 0, 1
            res = c.submit(d, start=False, run_request_id="once")
            assert proxy.seen == 2 and res.existing
    finally:
        proxy.close()
    assert len(list(client.list_runs(plan_id=d["plan_id"]))) == 2


def test_a_deadline_shorter_than_the_wait_raises_DeadlineExceeded(client):
    run = client.submit(wait_for_signal()).run
    with pytest.raises(weft.DeadlineExceeded):
        client.runs.await_run(run_id=run.run_id, wait_ms=10000, timeout=0.3)
    with pytest.raises(weft.DeadlineExceeded):
        client.await_run(run.run_id, timeout=0.3)


def test_an_unreachable_server_raises_Unavailable_after_the_retries_of_a_safe_call():
    with weft.Client("http://127.0.0.1:9", retry=RetryPolicy(max_attempts=2, initial_backoff=0.01)) as c:
        with pytest.raises(weft.Unavailable) as e:
            c.runs.get_run(run_id="x")
    assert e.value.is_network_error


def test_backoff_grows_by_the_multiplier_up_to_the_cap_with_at_most_20_percent_jitter():
    p = RetryPolicy(max_attempts=6, initial_backoff=0.1, max_backoff=0.5, multiplier=2)
    assert [p.backoff(n, rand=lambda: 0) for n in range(1, 6)] == [0.1, 0.2, 0.4, 0.5, 0.5]
    assert p.backoff(2, rand=lambda: 0.999) == pytest.approx(0.2 * 1.1998)


def test_requests_are_built_from_messages_dicts_or_fields_alike(client):
    m = client.runs.methods["get_run"]
    from weft.client import build_request
    a = build_request(m, run_pb2.GetRunRequest(run_id="x"), {})
    b = build_request(m, {"runId": "x"}, {})
    c = build_request(m, None, {"run_id": "x"})
    assert a == b == c
    with pytest.raises(TypeError):
        build_request(m, signal_pb2.SignalRunRequest(), {})


def test_a_stream_of_an_unknown_run_raises_NotFound_over_both_formats(weftd):
    for json_ in (False, True):
        with weft.Client(weftd.url, json=json_) as c, pytest.raises(weft.NotFound):
            list(c.watch_events("run-that-does-not-exist"))


def test_a_runs_result_is_the_named_actions_output_and_a_run_without_one_raises_NoResult(client, echo_worker):
    d = one_step(ECHO, input={"n": 2})
    d["result_action_id"] = "work"
    run = client.submit_and_await(d, timeout=30)
    assert weft.result(run) == {"echo": {"n": 2}, "action": "work"}
    with pytest.raises(weft.NoResult):
        weft.result(client.submit(one_step(unique("never")), start=False).run)


def test_the_generated_service_protocols_name_every_method_the_clients_make(weftd):
    from weft.v1 import _services

    with weft.Client(weftd.url) as c:
        for attr in ("runs", "signals", "events", "workers", "schedules"):
            svc = getattr(c, attr)
            name = {"runs": "RunService", "signals": "SignalService", "events": "EventService",
                                           "workers": "WorkerService", "schedules": "ScheduleService"}[attr]
            for proto in (getattr(_services, name), getattr(_services, "Async" + name)):
                declared = {n for n in vars(proto) if not n.startswith("_")}
                assert declared == set(svc.methods), (name, declared ^ set(svc.methods))
