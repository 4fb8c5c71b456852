"""The Connect protocol (connectrpc.com/docs/protocol) over httpx, for the
synchronous and the asyncio client alike: unary calls (binary proto by
default, JSON on request) and server streams, with bearer tokens, deadlines
(``Connect-Timeout-Ms``) and errors converted into :class:`~weft.errors.WeftError`.

Everything here that does not touch a socket is shared; the two transports
differ only in how they send a request and read its answer.
"""

from __future__ import annotations

import importlib
import json
import re
import struct
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Iterator, Mapping, Optional, Union

import httpx
from google.protobuf import descriptor_pb2, json_format
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from . import errors
from .tls import TLS, check_scheme

#: A bearer token, or a function answering one per call (e.g. a refresher).
TokenSource = Union[str, Callable[[], str], None]

# Requests that carry their own idempotency key: repeating one with the same
# key answers the original result (docs/semantics.md), so it is safe to retry
# when the key is set. Worker reports are keyed by their claim's task token.
_KEYED_METHODS = {
    "weft.v1.RunService.SubmitRun": "run_request_id",
    "weft.v1.SignalService.SignalRun": "signal_id",
    "weft.v1.SignalService.CompleteManualAction": "completion_token",
    "weft.v1.ScheduleService.TriggerSchedule": "request_id",
    "weft.v1.WorkerService.CompleteTask": "task_token",
    "weft.v1.WorkerService.FailTask": "task_token",
    "weft.v1.WorkerService.HeartbeatTask": "task_token",
    "weft.v1.WorkerService.ReportVerification": "task_token",
}

_SAFE_LEVELS = (
    descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS,
    descriptor_pb2.MethodOptions.IDEMPOTENT,
)

_END_STREAM = 0x02
_COMPRESSED = 0x01


@dataclass(frozen=True)
class Method:
    """One RPC of a service, read from the generated descriptors."""

    full_name: str
    path: str
    name: str
    input: type
    output: type
    server_streaming: bool
    idempotency: int

    def safe_to_retry(self, request: Message) -> bool:
        """True when repeating this request as it is cannot act twice: the
        method has no side effects or is idempotent, or the request carries
        the idempotency key the API names for it."""
        if self.idempotency in _SAFE_LEVELS:
            return True
        key = _KEYED_METHODS.get(self.full_name)
        return bool(key and getattr(request, key, ""))


def snake(name: str) -> str:
    """``GetRun`` -> ``get_run``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _message_class(desc: Any) -> type:
    module = importlib.import_module(desc.file.name.removesuffix(".proto").replace("/", ".") + "_pb2")
    cls: Any = module
    for part in desc.full_name.removeprefix(desc.file.package + ".").split("."):
        cls = getattr(cls, part)
    return cls


def methods_of(service: ServiceDescriptor) -> list[Method]:
    """The service's methods with their message classes."""
    out = []
    for m in service.methods:
        md: MethodDescriptor = m
        opts = md.GetOptions()
        out.append(
            Method(
                full_name=md.full_name,
                path=f"/{service.full_name}/{md.name}",
                name=snake(md.name),
                input=_message_class(md.input_type),
                output=_message_class(md.output_type),
                server_streaming=md.server_streaming if hasattr(md, "server_streaming") else False,
                idempotency=opts.idempotency_level,
            )
        )
    return out


class Codec:
    """How messages are written on the wire: ``proto`` (binary) or ``json``."""

    def __init__(self, json_format_: bool) -> None:
        self.name = "json" if json_format_ else "proto"

    @property
    def unary_type(self) -> str:
        return f"application/{self.name}"

    @property
    def stream_type(self) -> str:
        return f"application/connect+{self.name}"

    def encode(self, msg: Message) -> bytes:
        if self.name == "json":
            return json_format.MessageToJson(msg, indent=None).encode()
        return msg.SerializeToString()

    def decode(self, cls: type, data: bytes) -> Message:
        try:
            if self.name == "json":
                return json_format.Parse(data or b"{}", cls(), ignore_unknown_fields=True)
            return cls.FromString(data)
        except (DecodeError, json_format.ParseError, ValueError) as e:
            raise errors.new_error("internal", f"the answer did not decode as {cls.DESCRIPTOR.full_name}: {e}") from None


def resolve_token(token: TokenSource) -> str:
    return token() if callable(token) else (token or "")


def request_headers(codec: Codec, token: TokenSource, timeout: Optional[float], streaming: bool,
                    extra: Optional[Mapping[str, str]]) -> dict[str, str]:
    """The headers of a Connect call."""
    h = {
        "content-type": codec.stream_type if streaming else codec.unary_type,
        "connect-protocol-version": "1",
        "user-agent": "weft-python/0.1",
    }
    if timeout is not None:
        h["connect-timeout-ms"] = str(max(1, int(timeout * 1000)))
    t = resolve_token(token)
    if t:
        h["authorization"] = f"Bearer {t}"
    if extra:
        h.update({k.lower(): v for k, v in extra.items()})
    return h


def envelope(data: bytes, flags: int = 0) -> bytes:
    """A Connect streaming frame: flags, big-endian length, payload."""
    return struct.pack(">BI", flags, len(data)) + data


class FrameReader:
    """Splits a streamed body into Connect frames as its bytes arrive."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> Iterator[tuple[int, bytes]]:
        self._buf += chunk
        while len(self._buf) >= 5:
            flags, n = struct.unpack(">BI", self._buf[:5])
            if len(self._buf) < 5 + n:
                return
            payload = bytes(self._buf[5 : 5 + n])
            del self._buf[: 5 + n]
            if flags & _COMPRESSED:
                raise errors.new_error("internal", "the server sent a compressed frame this client did not ask for")
            yield flags, payload

    @property
    def pending(self) -> int:
        return len(self._buf)


def unary_answer(method: Method, codec: Codec, resp: httpx.Response) -> Message:
    """The message of a unary answer, or its error raised."""
    headers = {k.lower(): v for k, v in resp.headers.items()}
    if resp.status_code != 200:
        raise errors.from_http(resp.status_code, resp.content, headers)
    return codec.decode(method.output, resp.content)


def end_of_stream(payload: bytes, headers: Mapping[str, str]) -> None:
    """Raises the error an end-of-stream frame carries, if any."""
    try:
        end = json.loads(payload or b"{}")
    except ValueError:
        raise errors.new_error("internal", "the end of the stream did not decode") from None
    err = end.get("error") if isinstance(end, dict) else None
    if err:
        raise errors.from_end_of_stream(err, headers)


def _transport_error(e: Exception) -> errors.WeftError:
    """A failure of httpx itself: a deadline, or a server not reached."""
    if isinstance(e, httpx.TimeoutException):
        return errors.new_error("deadline_exceeded", f"the call's deadline passed ({type(e).__name__})")
    if isinstance(e, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError,
                      httpx.CloseError, httpx.NetworkError)):
        return errors.network_error(f"weftd was not reached: {type(e).__name__}: {e}")
    return errors.new_error("unknown", f"{type(e).__name__}: {e}")


def _timeout(timeout: Optional[float]) -> httpx.Timeout:
    # The server ends the call at Connect-Timeout-Ms; the socket waits a
    # little longer so that its answer (deadline_exceeded) arrives.
    return httpx.Timeout(10.0, read=None if timeout is None else timeout + 2.0)


def _tls_options(base_url: str, tls: Optional[TLS]) -> dict:
    """httpx's options for tls (none without it)."""
    check_scheme(base_url, tls)
    return tls.httpx_options() if tls is not None else {}


class SyncTransport:
    """Connect over a blocking ``httpx.Client``."""

    def __init__(self, base_url: str, *, token: TokenSource, json: bool, http2: bool,
                 http_client: Optional[httpx.Client] = None, tls: Optional[TLS] = None) -> None:
        self.codec = Codec(json)
        self.token = token
        self.http = http_client or httpx.Client(base_url=base_url.rstrip("/"), http1=not http2, http2=http2,
                                                **_tls_options(base_url, tls))

    def unary(self, method: Method, request: Message, timeout: Optional[float],
              headers: Optional[Mapping[str, str]] = None) -> Message:
        h = request_headers(self.codec, self.token, timeout, False, headers)
        try:
            resp = self.http.post(method.path, content=self.codec.encode(request), headers=h, timeout=_timeout(timeout))
        except httpx.HTTPError as e:
            raise _transport_error(e) from None
        return unary_answer(method, self.codec, resp)

    def stream(self, method: Method, request: Message, timeout: Optional[float],
               headers: Optional[Mapping[str, str]] = None) -> Iterator[Message]:
        h = request_headers(self.codec, self.token, timeout, True, headers)
        body = envelope(self.codec.encode(request))
        try:
            with self.http.stream("POST", method.path, content=body, headers=h, timeout=_timeout(timeout)) as resp:
                rh = {k.lower(): v for k, v in resp.headers.items()}
                if resp.status_code != 200:
                    raise errors.from_http(resp.status_code, resp.read(), rh)
                frames = FrameReader()
                for chunk in resp.iter_raw():
                    for flags, payload in frames.feed(chunk):
                        if flags & _END_STREAM:
                            end_of_stream(payload, rh)
                            return
                        yield self.codec.decode(method.output, payload)
        except httpx.HTTPError as e:
            raise _transport_error(e) from None
        raise errors.network_error("the stream ended without its end-of-stream frame")

    def close(self) -> None:
        self.http.close()


class AsyncTransport:
    """Connect over an ``httpx.AsyncClient``."""

    def __init__(self, base_url: str, *, token: TokenSource, json: bool, http2: bool,
                 http_client: Optional[httpx.AsyncClient] = None, tls: Optional[TLS] = None) -> None:
        self.codec = Codec(json)
        self.token = token
        self.http = http_client or httpx.AsyncClient(base_url=base_url.rstrip("/"), http1=not http2, http2=http2,
                                                     **_tls_options(base_url, tls))

    async def unary(self, method: Method, request: Message, timeout: Optional[float],
                    headers: Optional[Mapping[str, str]] = None) -> Message:
        h = request_headers(self.codec, self.token, timeout, False, headers)
        try:
            resp = await self.http.post(method.path, content=self.codec.encode(request), headers=h,
                                        timeout=_timeout(timeout))
        except httpx.HTTPError as e:
            raise _transport_error(e) from None
        return unary_answer(method, self.codec, resp)

    async def stream(self, method: Method, request: Message, timeout: Optional[float],
                     headers: Optional[Mapping[str, str]] = None) -> AsyncIterator[Message]:
        h = request_headers(self.codec, self.token, timeout, True, headers)
        body = envelope(self.codec.encode(request))
        try:
            async with self.http.stream("POST", method.path, content=body, headers=h,
                                        timeout=_timeout(timeout)) as resp:
                rh = {k.lower(): v for k, v in resp.headers.items()}
                if resp.status_code != 200:
                    raise errors.from_http(resp.status_code, await resp.aread(), rh)
                frames = FrameReader()
                async for chunk in resp.aiter_raw():
                    for flags, payload in frames.feed(chunk):
                        if flags & _END_STREAM:
                            end_of_stream(payload, rh)
                            return
                        yield self.codec.decode(method.output, payload)
        except httpx.HTTPError as e:
            raise _transport_error(e) from None
        raise errors.network_error("the stream ended without its end-of-stream frame")

    async def aclose(self) -> None:
        await self.http.aclose()
