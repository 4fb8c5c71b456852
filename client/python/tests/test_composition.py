"""The composition fields of the API through the Python client, against a
real weftd: a YAML document read by weftd's own loader (parse_definition),
a stored definition run by reference, a submission's priority and search
attributes, a sub-workflow step's child run and a sleep's wake time."""

import datetime as dt
import time

import pytest

import weft
from weft.v1 import run_pb2
from support import step, unique


def composed_yaml(plan: str) -> str:
    return f"""planId: {plan}
planVersion: "1"
steps:
  - name: nap
    sleep: 1h
  - name: child
    workflow:
      input: {{order: '${{{{ input.order }}}}'}}
      steps:
        - name: wait
          sleep: 2h
  - name: after
    dependsOn: [nap, child]
    when: input.amount > 0
"""


def test_parse_definition_reads_a_yaml_document_with_weftds_own_loader(client):
    plan = unique("py-yaml")
    d = client.parse_definition(composed_yaml(plan))
    assert d.plan_id == plan and d.plan_version == "1"
    by_id = {a.id: a for a in d.actions}
    assert by_id["nap"].sleep_ms == 3_600_000
    assert by_id["child"].workflow.definition.actions[0].id == "wait"
    assert weft.from_value(by_id["child"].workflow.input) == {"order": "${{ input.order }}"}
    assert by_id["after"].when == "input.amount > 0"
    assert list(by_id["after"].depends_on) == ["nap", "child"]
    assert list(client.list_runs(plan_id=plan)) == [], "nothing is run"


def test_parse_definition_refuses_a_mistake_by_its_yaml_path(client):
    with pytest.raises(weft.InvalidArgument) as e:
        client.parse_definition("planId: p\nsteps:\n  - name: a\n    when: input.amount +\n")
    assert any(v.field == "steps[0].when" for v in e.value.violations), e.value.violations


def test_the_asyncio_client_parses_a_definition_too(weftd):
    import asyncio

    async def main():
        async with weft.AsyncClient(weftd.url) as c:
            return await c.parse_definition(composed_yaml("py-async"))

    assert asyncio.run(main()).plan_id == "py-async"


def test_a_submission_carries_its_priority_and_search_attributes(client):
    at = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)
    attrs = {"customer": "acme", "attempts": 3, "vip": True, "score": 1.5, "due": at}
    d = client.parse_definition(composed_yaml(unique("py-prio")))
    run = client.submit(d, input={"order": "o-1", "amount": 0}, start=False, priority=1,
                        search_attributes=attrs).run
    got = client.runs.get_run(run_id=run.run_id).run
    assert got.priority == 1
    assert weft.search_attributes(got) == attrs
    assert got.search_attributes["vip"].WhichOneof("value") == "bool_value", "a bool is not an int"
    default = client.submit(d, start=False).run
    assert default.priority == 3, "the definition's, else 3"
    with pytest.raises(weft.InvalidArgument) as e:
        client.submit(d, start=False, priority=6)
    assert any(v.field == "priority" for v in e.value.violations)


def test_a_stored_definition_is_submitted_by_reference(client):
    plan = unique("py-ref")
    client.definitions.put_definition(definition=client.parse_definition(composed_yaml(plan)))
    run = client.submit(plan=plan, input={"order": "o-2", "amount": 0}, start=False).run
    assert run.plan_id == plan and run.plan_version == "1", "without a version: the latest"
    pinned = client.submit(plan=plan, version="1", start=False).run
    assert pinned.plan_version == "1"
    with pytest.raises(TypeError):
        client.submit(client.parse_definition(composed_yaml(plan)), plan=plan)


def test_getrun_shows_a_steps_child_run_and_a_sleeps_wake_time(client):
    d = client.parse_definition(composed_yaml(unique("py-child")))
    before = dt.datetime.now(dt.timezone.utc)
    run = client.submit(d, input={"order": "o-3", "amount": 5}).run
    deadline = time.monotonic() + 30
    while True:  # the child is started by weftd's timer loop (docs/semantics.md#sub-workflows)
        got = client.runs.get_run(run_id=run.run_id).run
        if step(got, "child").child_run_id or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    child_id = step(got, "child").child_run_id
    assert child_id, "the sub-workflow step shows its child run"
    nap = weft.wake_at(step(got, "nap"))
    assert nap is not None and before + dt.timedelta(minutes=59) < nap < before + dt.timedelta(minutes=61)
    assert weft.wake_at(step(got, "after")) is None
    child = client.runs.get_run(run_id=child_id).run
    assert child.parent_run_id == run.run_id and child.parent_step == "child"
    assert child.priority == got.priority, "a child runs at its parent's priority"
    assert weft.from_value(child.input) == {"order": "o-3"}
    client.runs.cancel_run(run_id=run.run_id)
    assert client.await_run(child_id, timeout=30).status == run_pb2.RUN_STATUS_CANCELLED, "parentClose: cancel"
