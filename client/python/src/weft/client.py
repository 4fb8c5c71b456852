"""The synchronous client: every weft.v1 service over Connect, plus the
higher-level calls (submit, await, signal, watch, list, complete).

    with weft.Client("http://127.0.0.1:7400", token="...") as c:
        run = c.runs.get_run(run_id=run_id).run

Every service's methods are made from the generated descriptors (snake_case
names: ``c.runs.submit_run``, ``c.workers.poll_tasks``, ``c.events.watch_events``),
so a new RPC in proto/ needs no edit here. Each takes the request message, or
its fields as keywords, or its proto JSON form as a dict, and
``timeout=`` (seconds), ``headers=`` and ``retry=``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Union

import httpx
from google.protobuf import json_format
from google.protobuf.message import Message

from . import _connect, values
from .errors import DeadlineExceeded
from .tls import TLS
from .retry import DEFAULT_RETRY, RetryPolicy, call_sync, is_transient
from weft.v1 import audit_pb2, definition_pb2, event_pb2, identity_pb2, run_pb2, schedule_pb2, signal_pb2, view_pb2, worker_pb2

if TYPE_CHECKING:
    from weft.v1 import _services

#: How long one AwaitRun (and SubmitRun's await_ms) waits on the server, in ms.
AWAIT_WAIT_MS = 20000
#: What a long-poll call is given beyond the time weftd holds it, in seconds.
LONG_POLL_MARGIN = 10.0

SERVICES = {
    "runs": run_pb2.DESCRIPTOR.services_by_name["RunService"],
    "signals": signal_pb2.DESCRIPTOR.services_by_name["SignalService"],
    "events": event_pb2.DESCRIPTOR.services_by_name["EventService"],
    "workers": worker_pb2.DESCRIPTOR.services_by_name["WorkerService"],
    "schedules": schedule_pb2.DESCRIPTOR.services_by_name["ScheduleService"],
    "audit": audit_pb2.DESCRIPTOR.services_by_name["AuditService"],
    "identity": identity_pb2.DESCRIPTOR.services_by_name["IdentityService"],
    "definitions": definition_pb2.DESCRIPTOR.services_by_name["DefinitionService"],
    "views": view_pb2.DESCRIPTOR.services_by_name["ViewService"],
}

Definition = Union[definition_pb2.WorkflowDefinition, Mapping[str, Any]]

_UNSET: Any = object()


def build_request(method: _connect.Method, request: Any, fields: Mapping[str, Any]) -> Message:
    """The request message from a message, a proto JSON dict, or keyword fields."""
    if request is None:
        return method.input(**fields)
    if fields:
        raise TypeError(f"{method.name}: pass a request or keyword fields, not both")
    if isinstance(request, method.input):
        return request
    if isinstance(request, Mapping):
        return json_format.ParseDict(dict(request), method.input())
    raise TypeError(f"{method.name}: want {method.input.DESCRIPTOR.full_name}, got {type(request).__name__}")


class _Service:
    """One service's methods, bound to a transport."""

    def __init__(self, transport: _connect.SyncTransport, descriptor: Any, timeout: Optional[float],
                 retry: RetryPolicy) -> None:
        self._transport = transport
        self._timeout = timeout
        self._retry = retry
        self.methods = {m.name: m for m in _connect.methods_of(descriptor)}
        for m in self.methods.values():
            setattr(self, m.name, self._stream(m) if m.server_streaming else self._unary(m))

    def _unary(self, m: _connect.Method) -> Any:
        def call(request: Any = None, *, timeout: Any = _UNSET, headers: Optional[Mapping[str, str]] = None,
                 retry: Optional[RetryPolicy] = None, **fields: Any) -> Message:
            req = build_request(m, request, fields)
            t = self._timeout if timeout is _UNSET else timeout
            policy = (retry or self._retry) if m.safe_to_retry(req) else RetryPolicy(max_attempts=1)
            return call_sync(policy, lambda: self._transport.unary(m, req, t, headers))

        call.__name__ = m.name
        call.__doc__ = f"Calls {m.full_name}; answers {m.output.DESCRIPTOR.full_name}."
        return call

    def _stream(self, m: _connect.Method) -> Any:
        def call(request: Any = None, *, timeout: Optional[float] = None,
                 headers: Optional[Mapping[str, str]] = None, **fields: Any) -> Iterator[Message]:
            return self._transport.stream(m, build_request(m, request, fields), timeout, headers)

        call.__name__ = m.name
        call.__doc__ = f"Opens the server stream {m.full_name}; yields {m.output.DESCRIPTOR.full_name}."
        return call


def submit_request(definition: Optional[Definition], input: Any, start: bool, run_request_id: str, project_id: str,
                   environment_id: str, await_ms: int = 0, *, plan: str = "", version: str = "",
                   priority: Optional[int] = None,
                   search_attributes: Optional[Mapping[str, values.SearchValue]] = None) -> run_pb2.SubmitRunRequest:
    """The SubmitRunRequest of an inline definition, or of a stored one by
    plan id (and version; the plan's latest without one)."""
    if (definition is None) == (not plan):
        raise TypeError("submit: pass a definition or plan=, not both and not neither")
    req = run_pb2.SubmitRunRequest(
        start=start, run_request_id=run_request_id,
        project_id=project_id, environment_id=environment_id, await_ms=await_ms,
    )
    if definition is not None:
        req.definition.CopyFrom(values.definition(definition))
    else:
        req.definition_ref.CopyFrom(definition_pb2.DefinitionRef(plan_id=plan, plan_version=version))
    if input is not None:
        req.input.CopyFrom(values.to_value(input))
    if priority is not None:
        req.priority = priority
    for name, value in (search_attributes or {}).items():
        req.search_attributes[name].CopyFrom(values.search_attribute(value))
    return req


def signal_request(run_id: str, signal_name: str, payload: Any, signal_id: Optional[str]) -> signal_pb2.SignalRunRequest:
    req = signal_pb2.SignalRunRequest(run_id=run_id, signal_name=signal_name, signal_id=signal_id or values.new_id())
    if payload is not None:
        req.payload.CopyFrom(values.to_value(payload))
    return req


def manual_request(run_id: str, action_id: str, completion_token: str, actor_user_id: str, outcome: int,
                   output: Any, notes: str, evidence_refs: tuple[str, ...]) -> signal_pb2.CompleteManualActionRequest:
    req = signal_pb2.CompleteManualActionRequest(
        schema_version=1, run_id=run_id, action_id=action_id, completion_token=completion_token,
        actor_user_id=actor_user_id, outcome=outcome, notes=notes, evidence_refs=list(evidence_refs),
        completed_at=values.timestamp(),
    )
    if output is not None:
        req.output.CopyFrom(values.to_value(output))
    return req


def await_ms_within(deadline: Optional[float]) -> int:
    """One wait's length in ms: AWAIT_WAIT_MS, or less when the deadline is nearer."""
    if deadline is None:
        return AWAIT_WAIT_MS
    return max(0, min(AWAIT_WAIT_MS, int((deadline - time.monotonic()) * 1000)))


def still_going(run: run_pb2.Run, timeout: Optional[float]) -> DeadlineExceeded:
    return DeadlineExceeded("deadline_exceeded",
                            f"run {run.run_id} still {values.run_status_name(run.status)} after {timeout} s")


class Client:
    """A synchronous client of a weftd.

    Args:
        base_url: weftd's address, e.g. ``http://127.0.0.1:7400``.
        token: a bearer token, or a function answering one per call.
        json: send and read JSON instead of binary proto (default False).
        http2: HTTP/2 with prior knowledge (h2c, or TLS with ``https://``)
            instead of HTTP/1.1; needs the ``h2`` package.
        timeout: the default deadline of each call in seconds (None: none).
            The waits weftd holds open (await, long polls, streams) are given
            their own.
        retry: how calls that are safe to repeat are retried.
        http_client: an ``httpx.Client`` to use instead (its base_url set).
        tls: a private CA and a client certificate (:class:`weft.TLS`), with
            an ``https://`` base_url; without it, ``https://`` trusts the
            system's CAs.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:7400", *, token: _connect.TokenSource = None,
                 json: bool = False, http2: bool = False, timeout: Optional[float] = 30.0,
                 retry: RetryPolicy = DEFAULT_RETRY, http_client: Optional[httpx.Client] = None,
                 tls: Optional[TLS] = None) -> None:
        self.transport = _connect.SyncTransport(base_url, token=token, json=json, http2=http2, http_client=http_client,
                                                tls=tls)
        self.retry = retry
        self.runs: "_services.RunService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["runs"], timeout, retry)
        self.signals: "_services.SignalService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["signals"], timeout, retry)
        self.events: "_services.EventService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["events"], timeout, retry)
        self.workers: "_services.WorkerService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["workers"], timeout, retry)
        self.schedules: "_services.ScheduleService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["schedules"], timeout, retry)
        self.audit: "_services.AuditService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["audit"], timeout, retry)
        self.identity: "_services.IdentityService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["identity"], timeout, retry)
        self.definitions: "_services.DefinitionService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["definitions"], timeout, retry)
        self.views: "_services.ViewService" = _Service(  # type: ignore[assignment]
            self.transport, SERVICES["views"], timeout, retry)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections."""
        self.transport.close()

    def submit(self, definition: Optional[Definition] = None, *, input: Any = None, start: bool = True,
               run_request_id: str = "", project_id: str = "", environment_id: str = "", plan: str = "",
               version: str = "", priority: Optional[int] = None,
               search_attributes: Optional[Mapping[str, values.SearchValue]] = None) -> run_pb2.SubmitRunResponse:
        """Persists (and by default starts) a run; answers SubmitRunResponse
        (``.run``, ``.existing``). Retried on transient faults only with a
        ``run_request_id``: without one a repeat would make a second run.

        ``definition`` is inline; or ``plan`` (and ``version``, default the
        plan's latest) runs a stored one (``weft definition put``).
        ``priority`` (1 first … 5) overrides the definition's
        (docs/semantics.md#priority); ``search_attributes`` are by name, a str
        a keyword, then bool, int, float, datetime
        (docs/semantics.md#search-attributes)."""
        req = submit_request(definition, input, start, run_request_id, project_id, environment_id, plan=plan,
                             version=version, priority=priority, search_attributes=search_attributes)
        return self.runs.submit_run(req)

    def submit_and_await(self, definition: Optional[Definition] = None, *, input: Any = None,
                         run_request_id: str = "", project_id: str = "", environment_id: str = "",
                         timeout: Optional[float] = None, plan: str = "", version: str = "",
                         priority: Optional[int] = None,
                         search_attributes: Optional[Mapping[str, values.SearchValue]] = None) -> run_pb2.Run:
        """Submits and starts a run and answers it once terminal; one call
        when it ends within SubmitRun's own wait. ``timeout`` (seconds) gives
        up with DeadlineExceeded. The other arguments are :meth:`submit`'s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        wait = await_ms_within(deadline)
        req = submit_request(definition, input, True, run_request_id, project_id, environment_id, wait, plan=plan,
                             version=version, priority=priority, search_attributes=search_attributes)
        run = self.runs.submit_run(req, timeout=wait / 1000 + LONG_POLL_MARGIN).run
        if values.is_terminal(run.status):
            return run
        return self._await(run.run_id, deadline, timeout)

    def parse_definition(self, text: str) -> definition_pb2.WorkflowDefinition:
        """The WorkflowDefinition a YAML (or JSON) document describes, read by
        weftd's own loader (ParseDefinition; docs/definitions.md), so the
        client and ``weft submit`` read a file alike. A document that is not
        a definition raises InvalidArgument naming each problem by its YAML
        path (``steps[1].when``); nothing is stored."""
        return self.definitions.parse_definition(yaml=text).definition

    def await_run(self, run_id: str, *, timeout: Optional[float] = None) -> run_pb2.Run:
        """Answers the run once it is terminal; ``timeout`` (seconds) gives up with DeadlineExceeded."""
        return self._await(run_id, None if timeout is None else time.monotonic() + timeout, timeout)

    def _await(self, run_id: str, deadline: Optional[float], timeout: Optional[float]) -> run_pb2.Run:
        while True:
            wait = await_ms_within(deadline)
            run = self.runs.await_run(run_id=run_id, wait_ms=wait, timeout=wait / 1000 + LONG_POLL_MARGIN).run
            if values.is_terminal(run.status):
                return run
            if deadline is not None and time.monotonic() >= deadline:
                raise still_going(run, timeout)

    def signal_run(self, run_id: str, signal_name: str, payload: Any = None, *, signal_id: Optional[str] = None,
                   retry: Optional[RetryPolicy] = None) -> signal_pb2.SignalRunResponse:
        """Sends a signal with one signal id (a new UUID unless given), reused
        across retries, so a retry after a lost answer is answered with the
        original result (``duplicate`` set) rather than a second signal."""
        req = signal_request(run_id, signal_name, payload, signal_id)
        return self.signals.signal_run(req, retry=retry)

    def complete_manual_action(self, run_id: str, action_id: str, completion_token: str, actor_user_id: str, *,
                               outcome: int = signal_pb2.MANUAL_OUTCOME_SUCCEEDED, output: Any = None,
                               notes: str = "", evidence_refs: tuple[str, ...] = ()) -> signal_pb2.CompleteManualActionResponse:
        """Completes a step waiting for a person; idempotent by its completion token, so retried."""
        req = manual_request(run_id, action_id, completion_token, actor_user_id, outcome, output, notes, evidence_refs)
        return self.signals.complete_manual_action(req)

    def list_runs(self, **filter: Any) -> Iterator[run_pb2.Run]:
        """Yields every run the filter (ListRunsRequest's fields) matches, page after page."""
        token = ""
        while True:
            res = self.runs.list_runs(run_pb2.ListRunsRequest(page_token=token, **filter))
            yield from res.runs
            token = res.next_page_token
            if not token:
                return

    def watch_events(self, run_id: str, *, after_seq: int = 0,
                     retry: Optional[RetryPolicy] = None) -> Iterator[event_pb2.Event]:
        """Yields a run's events after ``after_seq`` in order, then each new
        one as it is appended, until the run ends. A stream broken by a
        transient fault is reopened after the last event yielded, so none is
        yielded twice."""
        policy = retry or self.retry
        failures = 0
        while True:
            try:
                for res in self.events.watch_events(run_id=run_id, after_seq=after_seq):
                    failures = 0
                    if res.HasField("event") and res.event.run_seq > after_seq:
                        after_seq = res.event.run_seq
                        yield res.event
                return
            except Exception as e:
                failures += 1
                if not is_transient(e) or failures >= policy.max_attempts:
                    raise
                time.sleep(policy.backoff(failures))
