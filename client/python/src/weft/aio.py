"""The asyncio client: the same services and calls as :class:`weft.Client`, awaited.

    async with weft.AsyncClient("http://127.0.0.1:7400") as c:
        run = (await c.runs.get_run(run_id=run_id)).run
        async for event in c.watch_events(run_id):
            ...
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping, Optional

import httpx
from google.protobuf.message import Message

from . import _connect, values
from .client import (
    LONG_POLL_MARGIN,
    SERVICES,
    Definition,
    await_ms_within,
    build_request,
    manual_request,
    signal_request,
    still_going,
    submit_request,
)
from .retry import DEFAULT_RETRY, RetryPolicy, call_async, is_transient
from .tls import TLS
from weft.v1 import definition_pb2, event_pb2, run_pb2, signal_pb2

if TYPE_CHECKING:
    from weft.v1 import _services

_UNSET: Any = object()


class _AsyncService:
    """One service's methods, bound to an asyncio transport."""

    def __init__(self, transport: _connect.AsyncTransport, descriptor: Any, timeout: Optional[float],
                 retry: RetryPolicy) -> None:
        self._transport = transport
        self._timeout = timeout
        self._retry = retry
        self.methods = {m.name: m for m in _connect.methods_of(descriptor)}
        for m in self.methods.values():
            setattr(self, m.name, self._stream(m) if m.server_streaming else self._unary(m))

    def _unary(self, m: _connect.Method) -> Any:
        async def call(request: Any = None, *, timeout: Any = _UNSET, headers: Optional[Mapping[str, str]] = None,
                       retry: Optional[RetryPolicy] = None, **fields: Any) -> Message:
            req = build_request(m, request, fields)
            t = self._timeout if timeout is _UNSET else timeout
            policy = (retry or self._retry) if m.safe_to_retry(req) else RetryPolicy(max_attempts=1)
            return await call_async(policy, lambda: self._transport.unary(m, req, t, headers))

        call.__name__ = m.name
        call.__doc__ = f"Calls {m.full_name}; answers {m.output.DESCRIPTOR.full_name}."
        return call

    def _stream(self, m: _connect.Method) -> Any:
        def call(request: Any = None, *, timeout: Optional[float] = None,
                 headers: Optional[Mapping[str, str]] = None, **fields: Any) -> AsyncIterator[Message]:
            return self._transport.stream(m, build_request(m, request, fields), timeout, headers)

        call.__name__ = m.name
        call.__doc__ = f"Opens the server stream {m.full_name}; yields {m.output.DESCRIPTOR.full_name}."
        return call


class AsyncClient:
    """An asyncio client of a weftd; its arguments are :class:`weft.Client`'s."""

    def __init__(self, base_url: str = "http://127.0.0.1:7400", *, token: _connect.TokenSource = None,
                 json: bool = False, http2: bool = False, timeout: Optional[float] = 30.0,
                 retry: RetryPolicy = DEFAULT_RETRY, http_client: Optional[httpx.AsyncClient] = None,
                 tls: Optional[TLS] = None) -> None:
        self.transport = _connect.AsyncTransport(base_url, token=token, json=json, http2=http2,
                                                 http_client=http_client, tls=tls)
        self.retry = retry
        self.runs: "_services.AsyncRunService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["runs"], timeout, retry)
        self.signals: "_services.AsyncSignalService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["signals"], timeout, retry)
        self.events: "_services.AsyncEventService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["events"], timeout, retry)
        self.workers: "_services.AsyncWorkerService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["workers"], timeout, retry)
        self.schedules: "_services.AsyncScheduleService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["schedules"], timeout, retry)
        self.audit: "_services.AsyncAuditService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["audit"], timeout, retry)
        self.identity: "_services.AsyncIdentityService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["identity"], timeout, retry)
        self.definitions: "_services.AsyncDefinitionService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["definitions"], timeout, retry)
        self.views: "_services.AsyncViewService" = _AsyncService(  # type: ignore[assignment]
            self.transport, SERVICES["views"], timeout, retry)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the connections."""
        await self.transport.aclose()

    async def submit(self, definition: Optional[Definition] = None, *, input: Any = None, start: bool = True,
                     run_request_id: str = "", project_id: str = "", environment_id: str = "", plan: str = "",
                     version: str = "", priority: Optional[int] = None,
                     search_attributes: Optional[Mapping[str, values.SearchValue]] = None) -> run_pb2.SubmitRunResponse:
        """See :meth:`weft.Client.submit`."""
        req = submit_request(definition, input, start, run_request_id, project_id, environment_id, plan=plan,
                             version=version, priority=priority, search_attributes=search_attributes)
        return await self.runs.submit_run(req)

    async def submit_and_await(self, definition: Optional[Definition] = None, *, input: Any = None,
                               run_request_id: str = "", project_id: str = "", environment_id: str = "",
                               timeout: Optional[float] = None, plan: str = "", version: str = "",
                               priority: Optional[int] = None,
                               search_attributes: Optional[Mapping[str, values.SearchValue]] = None) -> run_pb2.Run:
        """See :meth:`weft.Client.submit_and_await`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        wait = await_ms_within(deadline)
        req = submit_request(definition, input, True, run_request_id, project_id, environment_id, wait, plan=plan,
                             version=version, priority=priority, search_attributes=search_attributes)
        run = (await self.runs.submit_run(req, timeout=wait / 1000 + LONG_POLL_MARGIN)).run
        if values.is_terminal(run.status):
            return run
        return await self._await(run.run_id, deadline, timeout)

    async def parse_definition(self, text: str) -> definition_pb2.WorkflowDefinition:
        """See :meth:`weft.Client.parse_definition`."""
        return (await self.definitions.parse_definition(yaml=text)).definition

    async def await_run(self, run_id: str, *, timeout: Optional[float] = None) -> run_pb2.Run:
        """See :meth:`weft.Client.await_run`."""
        return await self._await(run_id, None if timeout is None else time.monotonic() + timeout, timeout)

    async def _await(self, run_id: str, deadline: Optional[float], timeout: Optional[float]) -> run_pb2.Run:
        while True:
            wait = await_ms_within(deadline)
            res = await self.runs.await_run(run_id=run_id, wait_ms=wait, timeout=wait / 1000 + LONG_POLL_MARGIN)
            if values.is_terminal(res.run.status):
                return res.run
            if deadline is not None and time.monotonic() >= deadline:
                raise still_going(res.run, timeout)

    async def signal_run(self, run_id: str, signal_name: str, payload: Any = None, *,
                         signal_id: Optional[str] = None,
                         retry: Optional[RetryPolicy] = None) -> signal_pb2.SignalRunResponse:
        """See :meth:`weft.Client.signal_run`."""
        return await self.signals.signal_run(signal_request(run_id, signal_name, payload, signal_id), retry=retry)

    async def complete_manual_action(self, run_id: str, action_id: str, completion_token: str, actor_user_id: str, *,
                                     outcome: int = signal_pb2.MANUAL_OUTCOME_SUCCEEDED, output: Any = None,
                                     notes: str = "",
                                     evidence_refs: tuple[str, ...] = ()) -> signal_pb2.CompleteManualActionResponse:
        """See :meth:`weft.Client.complete_manual_action`."""
        req = manual_request(run_id, action_id, completion_token, actor_user_id, outcome, output, notes, evidence_refs)
        return await self.signals.complete_manual_action(req)

    async def list_runs(self, **filter: Any) -> AsyncIterator[run_pb2.Run]:
        """See :meth:`weft.Client.list_runs`."""
        token = ""
        while True:
            res = await self.runs.list_runs(run_pb2.ListRunsRequest(page_token=token, **filter))
            for r in res.runs:
                yield r
            token = res.next_page_token
            if not token:
                return

    async def watch_events(self, run_id: str, *, after_seq: int = 0,
                           retry: Optional[RetryPolicy] = None) -> AsyncIterator[event_pb2.Event]:
        """See :meth:`weft.Client.watch_events`."""
        policy = retry or self.retry
        failures = 0
        while True:
            try:
                async for res in self.events.watch_events(run_id=run_id, after_seq=after_seq):
                    failures = 0
                    if res.HasField("event") and res.event.run_seq > after_seq:
                        after_seq = res.event.run_seq
                        yield res.event
                return
            except Exception as e:
                failures += 1
                if not is_transient(e) or failures >= policy.max_attempts:
                    raise
                await asyncio.sleep(policy.backoff(failures))
