"""The asyncio worker runtime: activities and compensations registered by
decorator, a slot-limited long poll, eager next tasks, heartbeats,
cancellation delivered to the activity, verify tasks, reports retried with
the same task token, and a drain on SIGTERM. Its behaviour is the Go and TS
workers' (client/worker, client/ts/src/worker)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import datetime as _dt
import inspect
import logging
import os
import signal
import socket
import threading
import typing
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional

from .. import values
from ..aio import AsyncClient
from ..errors import WeftError
from ..retry import DEFAULT_RETRY, RetryPolicy
from .failure import (
    MAX_CODE_CHARS,
    MAX_MESSAGE_CHARS,
    ActivityError,
    Classified,
    classify,
    message_of,
    retry_after_ms,
    truncate,
)
from weft.v1 import common_pb2, event_pb2, worker_pb2

log = logging.getLogger("weft.worker")

NOT_COMPLETED = event_pb2.VERIFY_STATE_NOT_COMPLETED
COMPLETED_WITH_RESULT = event_pb2.VERIFY_STATE_COMPLETED_WITH_RESULT
COMPLETED_RESULT_UNAVAILABLE = event_pb2.VERIFY_STATE_COMPLETED_RESULT_UNAVAILABLE
INDETERMINATE = event_pb2.VERIFY_STATE_INDETERMINATE

_current: contextvars.ContextVar["ActivityContext"] = contextvars.ContextVar("weft_activity_context")


def context() -> "ActivityContext":
    """The context of the activity running in this task or thread."""
    return _current.get()


@dataclass(frozen=True)
class ActivityInfo:
    """What an activity knows about the task it runs."""

    task_type: int
    task_id: str
    run_id: str
    action_id: str
    tenant_id: str
    activity: str
    operation_id: str
    #: Weft's key for the action, stable across retries: pass it to external systems.
    idempotency_key: str
    logical_attempt: int
    engine_attempt: int
    deadline: Optional[_dt.datetime]
    run_input: Any
    #: The outputs of the actions this one depends on, by action id, as JSON.
    upstream_outputs: dict
    worker_id: str
    #: The details of the last heartbeat an earlier engine attempt of this
    #: logical attempt sent (None: none did), so a retried activity can
    #: resume (docs/semantics.md#heartbeat-details).
    heartbeat_details: Any = None
    #: The W3C traceparent of the attempt's span in the run's trace ("" when
    #: the run is not traced): start the activity's span as its child. The
    #: worker sends it on the task's reports and heartbeats, so weftd's spans
    #: of them join the trace (docs/observability.md).
    traceparent: str = ""
    #: For an item of a fan-out (docs/semantics.md#for-each): the list's
    #: element the item runs with, as JSON (None for any other task), and its
    #: position from 0; ``action_id`` is then the step's id and ``[index]``.
    item: Any = None
    index: int = 0
    is_item: bool = False


@dataclass
class VerifyResult:
    """What a verify function found: NOT_COMPLETED, COMPLETED_WITH_RESULT
    (with ``result``, the activity's output), COMPLETED_RESULT_UNAVAILABLE or INDETERMINATE."""

    state: int
    result: Any = None
    diagnostic: str = ""


class ShutdownTimeout(Exception):
    """Tasks were still running at the shutdown timeout and were abandoned
    unreported; their claims time out on the server."""

    def __init__(self, abandoned: int) -> None:
        super().__init__(f"worker: {abandoned} task(s) still running at the shutdown timeout were abandoned")
        self.abandoned = abandoned


class ActivityContext:
    """The second argument of an activity (when it takes two), also
    :func:`context`. ``cancelled`` is set when the task must stop: its
    deadline passed, weftd asked (the run was cancelled), the claim was lost,
    or the worker abandoned it at the shutdown timeout; ``cancel_reason`` says
    which. An async activity is also cancelled (``asyncio.CancelledError``);
    a sync one, run in a thread, should check ``is_cancelled()``."""

    def __init__(self, info: ActivityInfo, beat: Callable[[], Awaitable[bool]],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.info = info
        self.cancelled = threading.Event()
        self.cancel_reason: Optional[str] = None
        #: The activity's latest progress: the details it last heartbeated,
        #: else those of the earlier attempt (``info.heartbeat_details``).
        self.heartbeat_details: Any = info.heartbeat_details
        #: Details not yet delivered to weftd (sent with the next heartbeat).
        self._pending: Any = None
        self._beat = beat
        self._loop = loop
        self._task: Optional[asyncio.Task] = None

    def is_cancelled(self) -> bool:
        """True once the task must stop (see the class)."""
        return self.cancelled.is_set()

    async def heartbeat(self, details: Any = None) -> bool:
        """Sends a heartbeat now (the runtime also sends them on its own),
        with ``details`` (JSON, or a dataclass) as the activity's progress;
        None sends none and keeps those sent before. weftd keeps the latest;
        when the attempt fails or times out, the next attempt reads them as
        ``info.heartbeat_details`` (docs/semantics.md#heartbeat-details).
        Answers whether weftd took it; details not delivered go with the
        next heartbeat."""
        if details is not None:
            self._pending = values.to_value(details)  # refuses what JSON cannot carry, here
            self.heartbeat_details = details
        return await self._beat()

    def heartbeat_sync(self, details: Any = None) -> bool:
        """:meth:`heartbeat` from a sync activity's thread."""
        if details is not None:
            self._pending = values.to_value(details)
            self.heartbeat_details = details
        return asyncio.run_coroutine_threadsafe(self._beat(), self._loop).result()

    def _abort(self, kind: str) -> None:
        if self.cancelled.is_set():
            return
        self.cancel_reason = kind
        self.cancelled.set()
        if self._task is not None and not self._task.done():
            self._task.cancel()


@dataclass
class _Handler:
    name: str
    fn: Callable[..., Any]
    input_type: Any
    #: How many of (input, ctx) the function takes: 0, 1 or 2.
    arity: int
    is_async: bool
    idempotency_key: Optional[Callable[[Any], str]] = None
    verify_fn: Optional[Callable[..., Any]] = None

    @property
    def verifiable(self) -> bool:
        return self.idempotency_key is not None and self.verify_fn is not None

    def decode(self, value: Any) -> Any:
        """The task's input as the function's first parameter wants it; a
        refusal fails the task with class VALIDATION."""
        try:
            return values.convert(self.input_type, value)
        except (TypeError, ValueError, KeyError) as e:
            raise ActivityError(f"the input was refused: {message_of(e)}",
                                error_class=common_pb2.ERROR_CLASS_VALIDATION, code="invalid_input") from e

    def key_of(self, value: Any) -> str:
        return self.idempotency_key(self.decode(value)) if self.idempotency_key else ""


class Activity:
    """A registered activity: call it like the function; ``@act.verify``
    registers its verify function."""

    def __init__(self, handler: _Handler) -> None:
        self._h = handler

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self._h.fn(*args, **kw)

    def verify(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Registers ``fn(key, ctx) -> VerifyResult`` as the verify function (needs ``idempotency_key``)."""
        if self._h.idempotency_key is None:
            raise TypeError(f"worker: activity {self._h.name!r}: verify needs idempotency_key")
        self._h.verify_fn = fn
        return fn


def _signature(fn: Callable[..., Any]) -> tuple[Any, int]:
    """The first parameter's annotation, and how many of (input, ctx) fn takes."""
    params = list(inspect.signature(fn).parameters.values())
    hints = typing.get_type_hints(fn) if params else {}
    input_type = hints.get(params[0].name) if params else None
    return input_type, min(len(params), 2)


def trace_headers(t: worker_pb2.Task) -> Optional[dict]:
    """The headers that carry a traced task's traceparent on its reports and
    heartbeats, so weftd's spans of them join the run's trace under the
    attempt (as the Go and TS workers send it); None for an untraced task."""
    return {"traceparent": t.traceparent} if t.traceparent else None


def heartbeat_every(heartbeat_timeout_ms: int, interval: float) -> float:
    """How often a task heartbeats, in seconds: a third of its heartbeat
    timeout (or the interval when shorter), else the interval; 0: never."""
    if heartbeat_timeout_ms > 0:
        third = heartbeat_timeout_ms / 3000
        return min(third, interval) if interval > 0 else third
    return max(0.0, interval)


class _Slots:
    """Counts free slots; ``acquire_free`` takes every free one (at least one)."""

    def __init__(self, n: int) -> None:
        self.free = n
        self._cond = asyncio.Condition()

    async def acquire_free(self) -> int:
        async with self._cond:
            await self._cond.wait_for(lambda: self.free > 0)
            n, self.free = self.free, 0
            return n

    async def release(self, n: int) -> None:
        if n <= 0:
            return
        async with self._cond:
            self.free += n
            self._cond.notify_all()


class Worker:
    """Runs registered activities and compensations for a weftd.

        worker = Worker(AsyncClient(url), queue="default", concurrency=4)

        @worker.activity("charge-card", idempotency_key=lambda p: p.order_id)
        async def charge(p: Payment, ctx: ActivityContext) -> Receipt: ...

        @charge.verify
        async def charged(key: str, ctx) -> VerifyResult: ...

        await worker.run()      # until SIGTERM/SIGINT or worker.shutdown()

    Polls ask for as many tasks as there are free slots; a completion asks
    for the next task (eager dispatch) and runs it in the same slot; reports
    are retried on transient faults with the same task token; on shutdown
    polling stops, in-flight tasks finish and report, and tasks still running
    at ``shutdown_timeout`` are abandoned (their claims time out).
    """

    def __init__(self, client: AsyncClient, *, queue: str = "default", worker_id: str = "",
                 concurrency: int = 4, poll_wait: float = 20.0, heartbeat_interval: float = 10.0,
                 shutdown_timeout: float = 30.0, retry: RetryPolicy = DEFAULT_RETRY,
                 max_threads: Optional[int] = None) -> None:
        self.client = client
        self.queue = queue or "default"
        self.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}"
        self.concurrency = max(1, int(concurrency))
        self.poll_wait = min(max(0.0, poll_wait), 60.0)
        self.heartbeat_interval = heartbeat_interval
        self.shutdown_timeout = shutdown_timeout
        self.retry = retry
        self._threads = concurrent.futures.ThreadPoolExecutor(max_threads or self.concurrency,
                                                              thread_name_prefix="weft-activity")
        self._activities: dict[str, _Handler] = {}
        self._compensations: dict[str, _Handler] = {}
        self._started = False
        self._stop: Optional[asyncio.Event] = None
        self._stopping = False
        self._inflight: set[asyncio.Task] = set()
        self._contexts: set[ActivityContext] = set()
        #: Tasks this worker has run (reported or not), and how many of them
        #: came with a completion (eager dispatch) rather than from a poll.
        self.tasks_handled = 0
        self.eager_tasks = 0

    # Registration -------------------------------------------------------

    def activity(self, name: Optional[str] = None, *, idempotency_key: Optional[Callable[[Any], str]] = None,
                 verify: Optional[Callable[..., Any]] = None) -> Callable[[Callable[..., Any]], Activity]:
        """Registers the decorated function as an activity (named ``name``,
        default the function's name). Its first parameter receives the input:
        a dataclass annotation is filled from the JSON object, anything else
        gets the JSON as is; a second parameter receives the ActivityContext.
        Its return value (JSON, or a dataclass) is the output. ``async def``
        functions run on the loop; plain functions run in a thread pool.
        ``idempotency_key(input) -> str`` with ``verify`` makes it verifiable."""

        def register(fn: Callable[..., Any]) -> Activity:
            h = self._handler(fn.__name__ if name is None else name, fn, self._activities, "activity")
            h.idempotency_key = idempotency_key
            act = Activity(h)
            if verify is not None:
                act.verify(verify)
            return act

        return register

    def compensation(self, name: Optional[str] = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers the decorated function as a compensation operation (the
        operation of an action's compensation hook); ``ctx.info.action_id``
        names the action being rolled back."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._handler(fn.__name__ if name is None else name, fn, self._compensations, "compensation")
            return fn

        return register

    def _handler(self, name: str, fn: Callable[..., Any], into: dict, kind: str) -> _Handler:
        if self._started:
            raise RuntimeError(f"worker: {kind} {name!r} registered after run")
        if not name:
            raise ValueError(f"worker: {kind} name is empty")
        if name in into:
            raise ValueError(f"worker: {kind} {name!r} registered twice")
        input_type, arity = _signature(fn)
        h = _Handler(name, fn, input_type, arity, inspect.iscoroutinefunction(fn))
        into[name] = h
        return h

    def poll_request(self, max_tasks: int, wait_ms: int) -> worker_pb2.PollTasksRequest:
        """The PollTasks request with the registrations, sorted by name."""
        return worker_pb2.PollTasksRequest(
            worker_id=self.worker_id, queue=self.queue, max_tasks=max_tasks, wait_ms=wait_ms,
            activities=[worker_pb2.ActivityRegistration(name=n, verifiable=self._activities[n].verifiable)
                        for n in sorted(self._activities)],
            compensations=sorted(self._compensations),
        )

    # Running ------------------------------------------------------------

    def shutdown(self) -> None:
        """Begins a graceful shutdown: polling stops, in-flight tasks finish."""
        if self._stopping:
            return
        self._stopping = True
        log.info("worker shutting down", extra={"worker_id": self.worker_id})
        if self._stop is not None:
            self._stop.set()

    async def run(self, *, handle_signals: bool = True) -> None:
        """Polls and runs tasks until :meth:`shutdown` (or SIGTERM/SIGINT when
        ``handle_signals`` and running on the main thread), then drains. Raises ShutdownTimeout when tasks had
        to be abandoned."""
        if self._started:
            raise RuntimeError("worker: run called twice")
        if not self._activities and not self._compensations:
            raise RuntimeError("worker: nothing registered")
        self._started = True
        self._stop = asyncio.Event()
        if self._stopping:
            self._stop.set()
        loop = asyncio.get_running_loop()
        # Signal handlers can only be set from the main thread's loop.
        main = threading.current_thread() is threading.main_thread()
        signals = (signal.SIGTERM, signal.SIGINT) if handle_signals and main else ()
        for s in signals:
            loop.add_signal_handler(s, self.shutdown)
        log.info("worker started", extra={"worker_id": self.worker_id, "queue": self.queue})
        try:
            await self._poll_loop()
            await self._drain()
        finally:
            for s in signals:
                loop.remove_signal_handler(s)
            self._threads.shutdown(wait=False, cancel_futures=True)

    async def _until_stopped(self, aw: Awaitable[Any]) -> Any:
        """Awaits aw unless shutdown begins first (then aw is cancelled and None answered)."""
        assert self._stop is not None
        task = asyncio.ensure_future(aw)
        stop = asyncio.ensure_future(self._stop.wait())
        done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            stop.cancel()
            return task.result()
        task.cancel()
        try:
            await task
        except (asyncio.CancelledError, Exception):
            pass
        return None

    async def _poll_loop(self) -> None:
        slots = _Slots(self.concurrency)
        failures = 0
        wait_ms = int(self.poll_wait * 1000)
        while not self._stopping:
            n = await self._until_stopped(slots.acquire_free())
            if not n:
                break
            try:
                res = await self._until_stopped(self.client.workers.poll_tasks(
                    self.poll_request(n, wait_ms), timeout=self.poll_wait + 15.0))
            except WeftError as e:
                await slots.release(n)
                failures += 1
                log.warning("poll failed", extra={"worker_id": self.worker_id, "code": e.code})
                await self._until_stopped(asyncio.sleep(min(failures * 0.2, 5.0)))
                continue
            if res is None:
                await slots.release(n)
                break
            failures = 0
            await slots.release(n - len(res.tasks))
            for t in res.tasks:
                task = asyncio.create_task(self._run_slot(t))
                self._inflight.add(task)
                task.add_done_callback(lambda tk: (self._inflight.discard(tk),
                                                   asyncio.ensure_future(slots.release(1))))

    async def _drain(self) -> None:
        if not self._inflight:
            log.info("worker stopped", extra={"worker_id": self.worker_id})
            return
        _, pending = await asyncio.wait(set(self._inflight), timeout=self.shutdown_timeout)
        if pending:
            for ctx in list(self._contexts):
                ctx._abort("abandoned")
            for t in pending:
                t.cancel()
            await asyncio.wait(pending, timeout=5)
            log.warning("worker stopped; abandoned tasks: their claims will time out",
                        extra={"worker_id": self.worker_id, "abandoned": len(pending)})
            raise ShutdownTimeout(len(pending))
        log.info("worker stopped", extra={"worker_id": self.worker_id})

    async def _run_slot(self, first: worker_pb2.Task) -> None:
        queue = [first]
        while queue:
            t = queue.pop(0)
            try:
                following = await self._handle(t)
                self.eager_tasks += len(following)
                queue.extend(following)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # _handle reports every outcome itself; this guards against a bug
                log.error("task handling failed", extra={"task_id": t.task_id, "error": message_of(e)})

    def _handler_for(self, t: worker_pb2.Task) -> Optional[_Handler]:
        if t.task_type == worker_pb2.TASK_TYPE_ACTIVITY:
            return self._activities.get(t.activity)
        if t.task_type == worker_pb2.TASK_TYPE_VERIFY:
            h = self._activities.get(t.activity)
            return h if h is not None and h.verify_fn is not None else None
        if t.task_type == worker_pb2.TASK_TYPE_COMPENSATION:
            return self._compensations.get(t.activity)
        return None

    def _info(self, t: worker_pb2.Task) -> ActivityInfo:
        return ActivityInfo(
            task_type=t.task_type, task_id=t.task_id, run_id=t.run_id, action_id=t.action_id,
            tenant_id=t.tenant_id, activity=t.activity, operation_id=t.operation_id,
            idempotency_key=t.idempotency_key, logical_attempt=t.logical_attempt_id,
            engine_attempt=t.engine_attempt_id,
            deadline=t.deadline.ToDatetime(_dt.timezone.utc) if t.HasField("deadline") else None,
            run_input=values.from_value_field(t, "run_input"),
            upstream_outputs={k: values.from_value(v) for k, v in t.upstream_outputs.items()},
            worker_id=self.worker_id,
            heartbeat_details=values.from_value_field(t, "heartbeat_details"),
            traceparent=t.traceparent,
            item=values.from_value_field(t, "item"),
            index=t.index,
            is_item=t.HasField("item"),
        )

    async def _handle(self, t: worker_pb2.Task) -> list:
        """Runs one claimed task and reports its outcome; answers the tasks
        eager dispatch claimed with the completion."""
        self.tasks_handled += 1
        fields = {"task_id": t.task_id, "run_id": t.run_id, "action_id": t.action_id, "activity": t.activity}
        h = self._handler_for(t)
        if h is None:
            await self._report_failure(t, Classified(common_pb2.ERROR_CLASS_AGENT_ERROR, "unsupported_task",
                                                     f"worker {self.worker_id} does not run {t.activity!r} "
                                                     f"(task type {t.task_type})"), "", fields)
            return []
        loop = asyncio.get_running_loop()
        ctx = ActivityContext(self._info(t), lambda: self._beat(t, ctx, fields), loop)
        self._contexts.add(ctx)
        deadline_timer = None
        if ctx.info.deadline is not None:
            left = (ctx.info.deadline - _dt.datetime.now(_dt.timezone.utc)).total_seconds()
            deadline_timer = loop.call_later(max(0.0, left), ctx._abort, "deadline")
        beats = self._heartbeats(t, ctx)
        try:
            if t.task_type == worker_pb2.TASK_TYPE_VERIFY:
                await self._run_verify(t, h, ctx, fields)
                return []
            ok, out, key = await self._run_activity(h, t, ctx)
            if ctx.cancel_reason in ("claim-lost", "abandoned"):
                log.info("task not reported", extra={**fields, "reason": ctx.cancel_reason})
                return []
            if not ok:
                await self._report_failure(t, classify(out, ctx.cancel_reason), key, fields)
                return []
            return await self._report_completion(t, out, key, fields)
        finally:
            if deadline_timer is not None:
                deadline_timer.cancel()
            if beats is not None:
                beats.cancel()
            self._contexts.discard(ctx)

    async def _run_activity(self, h: _Handler, t: worker_pb2.Task, ctx: ActivityContext) -> tuple[bool, Any, str]:
        """Runs the function: (True, output, key) or (False, error, key)."""
        key = ""
        raw = values.from_value_field(t, "input")
        try:
            arg = h.decode(raw)
            key = h.idempotency_key(arg) if h.idempotency_key else ""
            out = await self._invoke(h, ctx, arg)
            return True, out, key
        except asyncio.CancelledError as e:
            if ctx.cancel_reason is None:
                raise  # the worker itself is being cancelled
            return False, e, key
        except Exception as e:
            return False, e, key

    async def _invoke(self, h: _Handler, ctx: ActivityContext, *args: Any) -> Any:
        call_args = (*args, ctx)[: h.arity]
        token = _current.set(ctx)
        try:
            if h.is_async:
                ctx._task = asyncio.ensure_future(h.fn(*call_args))
                if ctx.is_cancelled():
                    ctx._task.cancel()
                return await ctx._task
            cv = contextvars.copy_context()
            fut = asyncio.get_running_loop().run_in_executor(self._threads, lambda: cv.run(h.fn, *call_args))
            # A thread cannot be interrupted: it runs until it returns (it
            # should check ctx.is_cancelled()), unless the worker abandons it.
            return await asyncio.shield(fut)
        finally:
            _current.reset(token)

    def _heartbeats(self, t: worker_pb2.Task, ctx: ActivityContext) -> Optional[asyncio.Task]:
        every = heartbeat_every(t.heartbeat_timeout_ms, self.heartbeat_interval)
        if every <= 0:
            return None

        async def loop() -> None:
            while not ctx.is_cancelled():
                await asyncio.sleep(every)
                await ctx._beat()

        return asyncio.create_task(loop())

    async def _beat(self, t: worker_pb2.Task, ctx: ActivityContext, fields: dict) -> bool:
        """One heartbeat, with the details not yet delivered: stops the task
        when weftd asks or the claim is gone; a failed heartbeat is not
        retried (the next one is the retry). Answers whether weftd took it."""
        sent = ctx._pending
        req = worker_pb2.HeartbeatTaskRequest(task_token=t.task_token, worker_id=self.worker_id)
        if sent is not None:
            req.details.CopyFrom(sent)
        try:
            res = await self.client.workers.heartbeat_task(req, timeout=10.0, retry=RetryPolicy(max_attempts=1),
                                                           headers=trace_headers(t))
        except WeftError as e:
            if e.code in ("TaskClaimLost", "NotFound"):
                log.info("claim lost; stopping the task", extra=fields)
                ctx._abort("claim-lost")
            else:
                log.warning("heartbeat failed", extra={**fields, "code": e.code})
            return False
        if ctx._pending is sent:
            ctx._pending = None
        if res.cancel_requested:
            log.info("cancel requested; stopping the task", extra=fields)
            ctx._abort("cancel-requested")
        return True

    async def _report_completion(self, t: worker_pb2.Task, out: Any, key: str, fields: dict) -> list:
        try:
            value = None if out is None else values.to_value(out)
        except Exception:
            await self._report_failure(t, Classified(common_pb2.ERROR_CLASS_AGENT_ERROR, "invalid_output",
                                                     "the output is not representable as JSON"), key, fields)
            return []
        req = worker_pb2.CompleteTaskRequest(task_token=t.task_token, worker_id=self.worker_id,
                                             reconciliation_key=key)
        if value is not None:
            req.output.CopyFrom(value)
        if not self._stopping:
            req.next_tasks.CopyFrom(self.poll_request(1, 0))
        try:
            res = await self.client.workers.complete_task(req, retry=self.retry, headers=trace_headers(t))
        except WeftError as e:
            if e.code == "TaskClaimLost":
                log.info("completion not applied: the claim was lost", extra=fields)
            elif e.code in ("PayloadTooLarge", "InvalidArgument"):
                await self._report_failure(t, Classified(common_pb2.ERROR_CLASS_AGENT_ERROR, "output_rejected",
                                                         f"weftd refused the output: {e.code}"), key, fields)
            else:
                log.warning("completion not reported; the claim will time out", extra={**fields, "code": e.code})
            return []
        return list(res.tasks)

    async def _report_failure(self, t: worker_pb2.Task, f: Classified, key: str, fields: dict) -> None:
        try:
            await self.client.workers.fail_task(
                task_token=t.task_token, worker_id=self.worker_id,
                error_class=f.error_class or common_pb2.ERROR_CLASS_UNKNOWN,
                code=truncate(f.code, MAX_CODE_CHARS), message=truncate(f.message or "failed", MAX_MESSAGE_CHARS),
                side_effect_possible=f.side_effect_possible, reconciliation_key=key,
                retry_after_ms=retry_after_ms(f.retry_after), retry=self.retry, headers=trace_headers(t))
        except WeftError as e:
            log.info("failure not reported", extra={**fields, "code": e.code})

    async def _run_verify(self, t: worker_pb2.Task, h: _Handler, ctx: ActivityContext, fields: dict) -> None:
        state, diagnostic, result = INDETERMINATE, "", None
        try:
            # The key the attempt's worker reported, or, when it died before
            # reporting, the key derived from the task's input as it would have.
            key = t.reconciliation_key or h.key_of(values.from_value_field(t, "input"))
            res = h.verify_fn(key, ctx)  # type: ignore[misc]
            if inspect.isawaitable(res):
                res = await res
            state = res.state or INDETERMINATE
            diagnostic = res.diagnostic or ""
            if state == COMPLETED_WITH_RESULT and res.result is not None:
                result = values.to_value(res.result)
        except Exception as e:
            state, diagnostic, result = INDETERMINATE, f"verify failed: {message_of(e)}", None
        req = worker_pb2.ReportVerificationRequest(task_token=t.task_token, worker_id=self.worker_id, state=state,
                                                   diagnostic=truncate(diagnostic, MAX_MESSAGE_CHARS))
        if result is not None:
            req.result.CopyFrom(result)
        try:
            await self.client.workers.report_verification(req, retry=self.retry, headers=trace_headers(t))
        except WeftError as e:
            log.warning("verification not reported", extra={**fields, "code": e.code})
