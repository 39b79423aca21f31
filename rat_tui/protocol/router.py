"""Provides Connection: JSON-RPC 2.0 ids, pending futures and inbound dispatch over an AgentProcess."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .. import priority
from .aside import NOT_PARSED
from .lines import decode_line
from .rpc_log import RpcLog
from .sanitize import clean, vouch
from .traffic import TrafficLog
from .transport import AgentProcess

log = logging.getLogger("rat.rpc")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
CANCEL_REQUEST = "$/cancel_request"

# Requests whose answers may be big (a file's text, a terminal's output) are served this many at a time: an agent
# asking for a large file forty times at once had every copy read and held before the first answer was queued,
# and an agent that stopped reading its input never takes any of them (issue 45).
BULKY_METHODS = frozenset({"fs/read_text_file", "terminal/output"})
BULKY_AT_ONCE = 2

# A pause this long between two of the agent's lines ends a burst (`burst_began`; the transcript's BURST_QUIET).
BURST_GAP = 0.008

# Limits on what one message may be (checked at the edge, before anything else looks at it).
MAX_DEPTH = 200  # nesting of objects and arrays; json.loads itself dies of RecursionError near 1,000
INT_LIMIT = 2**63  # integers beyond a signed 64-bit one are clamped: a float of them overflows
RequestHandler = Callable[[dict[str, Any]], Awaitable[Any]]
NotificationHandler = Callable[[str, dict[str, Any]], None]


class Recorder(Protocol):
    """Hears every message in and out (RpcLog, TrafficLog, the history journal): `method` and `latency`
    are set on responses; `raw` is the line as it crossed the wire (without its newline), so a recorder
    that stores JSON text need not encode the message again. A recorder with a `sync()` method has it
    called by the reader before the loop runs anything else (a store delivery, a frame): the history
    journal commits there, so nothing is shown before it is journaled."""

    def record(
        self, direction: str, message: Any, size: int, *, method: str | None = None, latency: float | None = None,
        raw: bytes | None = None,
    ) -> Any: ...


class Codec(Protocol):
    """Maps another ACP version's wire shapes onto v1's (protocol/v2.py V2Codec)."""

    version: int

    def outgoing(self, method: str, params: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]: ...
    def result(self, method: str, result: Any) -> Any: ...
    def serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...
    def notification(self, method: str, params: dict[str, Any]) -> None: ...
    def closed(self) -> None: ...


class _VersionedLog:
    """The --rpc-log seen through one connection: its lines carry the ACP version the agent speaks."""

    def __init__(self, log: Any, version: int) -> None:
        self.log = log
        self.version = version

    def record(self, direction: str, message: Any, size: int, **kwargs: Any) -> Any:
        return self.log.record(direction, message, size, protocol=self.version, **kwargs)

    def sync(self) -> None:
        sync = getattr(self.log, "sync", None)
        if sync is not None:
            sync()


class RpcError(Exception):
    """A JSON-RPC error: raised by our requests when the agent answers with one, and by handlers."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __str__(self) -> str:
        detail = ""
        if isinstance(self.data, dict) and self.data.get("details"):
            detail = f": {self.data['details']}"
        elif isinstance(self.data, str):
            detail = f": {self.data}"
        return clean(f"{self.message} ({self.code}){detail}")


class ConnectionClosed(Exception):
    """The agent's pipes closed (it exited or crashed) while we waited on it."""


class Connection:
    """JSON-RPC over one agent process.

    One reader task routes every line: responses resolve our futures, agent requests run as
    concurrent tasks (a permission request may wait minutes on the user), and notifications are
    handed to `on_notification` synchronously, so `session/update`s apply strictly in arrival order.
    """

    def __init__(
        self,
        process: AgentProcess,
        on_notification: NotificationHandler,
        handlers: dict[str, RequestHandler] | None = None,
        rpc_log: RpcLog | None = None,
        traffic: TrafficLog | None = None,
    ) -> None:
        self.process = process
        self.on_notification = on_notification
        self.handlers: dict[str, RequestHandler] = dict(handlers or {})
        self.rpc_log = rpc_log
        self.traffic = traffic
        # Every message in and out goes to each of these; empty (the usual case) costs one test.
        self.recorders: list[Recorder] = [r for r in (rpc_log, traffic) if r is not None]
        self._ids = itertools.count(0)
        self._pending: dict[int, tuple[asyncio.Future[Any], str, float]] = {}
        self._asked: dict[int, str] = {}  # request id -> the method asked for, when the codec renamed it
        self._serving: dict[Any, asyncio.Task[None]] = {}
        self._bulky = asyncio.Semaphore(BULKY_AT_ONCE)
        self._closed = False
        self.malformed_lines = 0
        # When the agent last sent anything (monotonic): a silent agent during a turn looks hung.
        self.last_inbound = time.monotonic()
        self.idle_at = 0.0  # when the reader last found every line the agent wrote routed (its pipe drained)
        # When the burst being read began: its first line after a pause of BURST_GAP or more, the reader idle
        # then (`_route_line`).
        self.burst_began = 0.0
        # Hears every error answer to our requests (method, error) before the waiter does.
        self.on_error: Callable[[str, RpcError], None] | None = None
        # The ACP version the agent answered `initialize` with (None before); `codec` maps a protocol
        # other than v1 onto the v1 shapes the client uses (protocol/v2.py), None for v1 itself.
        self.protocol_version: int | None = None
        self.codec: Codec | None = None
        # Hears what the user should know about the connection (a message dropped, the agent not
        # reading): one sentence, said once per kind of problem.
        self.on_problem: Callable[[str, str], None] | None = None
        # Hears that everything the agent has written so far is routed and the reader waits for more:
        # the end of a burst (SessionStore.reader_idle).
        self.on_idle: Callable[[], None] | None = None
        # AgentProcess's back-pressure check (stand-ins used by benchmarks may lack it).
        self._refuse: Callable[[int], None] | None = getattr(process, "refuse_if_backed_up", None)
        self._problems_said: set[str] = set()
        process.on_oversized = lambda size: self._problem(
            "oversized", f"The agent sent a message of {size // (1024 * 1024)} MB, over rat-tui's limit of "
            f"{process.max_line_bytes // (1024 * 1024)} MB; it was skipped.")
        process.on_stalled = lambda waited, queued: self._problem(
            "stalled", f"The agent has not read its input for {waited:.0f} s ({queued // 1024} KiB of messages wait "
            "for it): it looks stuck. Answers beyond the limit are dropped; Alt+R restarts it.")

    def set_protocol(self, version: int, codec: Codec | None = None) -> None:
        """The version `initialize` settled on: --rpc-log lines say it from now on; `codec` maps its wire shapes."""
        self.protocol_version = version
        self.codec = codec
        if self.rpc_log is not None:
            self.recorders = [_VersionedLog(r, version) if r is self.rpc_log else r for r in self.recorders]
        if self.traffic is not None:
            self.traffic.protocol_version = version

    # -- outgoing -----------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and wait for its result; raises RpcError or ConnectionClosed."""
        if self._closed:
            raise ConnectionClosed(f"agent is gone; cannot send {method}")
        asked = method
        if self.codec is not None:
            method, params = self.codec.outgoing(method, params)
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (future, method, time.monotonic())
        if asked != method:
            self._asked[request_id] = asked
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
        except ConnectionError as error:
            self._pending.pop(request_id, None)
            self._asked.pop(request_id, None)
            raise ConnectionClosed(f"agent is gone; cannot send {method}") from error
        try:
            return await future
        except asyncio.CancelledError:
            self._asked.pop(request_id, None)
            if self._pending.pop(request_id, None) is not None and not self._closed:
                await self.notify(CANCEL_REQUEST, {"requestId": request_id})
            raise

    def pending_requests(self) -> list[tuple[int, str, float]]:
        """(id, method, monotonic start) of every request still waiting on the agent; in v2 a running turn
        counts as a `session/prompt` (id -1), its answer having come at once."""
        pending = [(request_id, method, started) for request_id, (_, method, started) in self._pending.items()]
        waiting = getattr(self.codec, "waiting", None)
        return pending + waiting() if waiting is not None else pending

    async def cancel_request(self, request_id: int) -> bool:
        """Give up on one of our requests: `$/cancel_request` to the agent, and the waiter gets -32800 now.

        The agent may still answer later; that answer is logged as one for an unknown id.
        """
        pending = self._pending.pop(request_id, None)
        self._asked.pop(request_id, None)
        if pending is None:
            return False
        future, method, _ = pending
        if not future.done():
            future.set_exception(RpcError(REQUEST_CANCELLED, f"Request cancelled: {method}"))
        if not self._closed:
            await self.notify(CANCEL_REQUEST, {"requestId": request_id})
        return True

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.codec is not None:
            method, params = self.codec.outgoing(method, params)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
        except ConnectionError:
            log.info("dropped notification %s: agent stdin closed", method)

    async def _send(self, message: dict[str, Any], *, method: str | None = None, latency: float | None = None) -> None:
        line = _encode(message)
        if self._refuse is not None:
            self._refuse(len(line) + 1)  # before recording: a refused message is not kept
        if self.recorders:
            self._record("out", message, len(line) + 1, method, latency, line)
        await self.process.write_line(line)

    def _record(
        self, direction: str, message: Any, size: int, method: str | None = None, latency: float | None = None,
        raw: bytes | None = None,
    ) -> None:
        """Hand one message to every recorder; a failing recorder must not break the connection."""
        for recorder in self.recorders:
            try:
                recorder.record(direction, message, size, method=method, latency=latency, raw=raw)
            except Exception:
                log.exception("recording a message failed")

    def close(self) -> None:
        """We are stopping the agent: stop serving its requests now (their answers could not go out)."""
        self._closed = True
        for task in list(self._serving.values()):
            task.cancel()

    # -- incoming -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read until the agent closes stdout; then fail whatever still waits on it."""
        try:
            await self.process.read_lines(self._route_line, self._sync_recorders, self._idle)
        finally:
            self._closed = True
            if self.codec is not None:
                self.codec.closed()
            for future, method, _ in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionClosed(f"agent exited before answering {method}"))
            self._pending.clear()
            for task in self._serving.values():
                task.cancel()

    def _idle(self) -> None:
        self.idle_at = time.monotonic()
        if self.on_idle is not None:
            try:
                self.on_idle()
            except Exception:
                log.exception("the idle listener failed")

    def _sync_recorders(self) -> None:
        """The reader is about to give the loop a turn: recorders that write in batches write now."""
        for recorder in self.recorders:
            sync = getattr(recorder, "sync", None)
            if sync is not None:
                try:
                    sync()
                except Exception:
                    log.exception("a recorder failed to write")

    def _route_line(self, line: bytes, value: Any = NOT_PARSED) -> None:
        """Route one line (`value`: its JSON value when parsed already, see AsideParser); a malformed
        message is logged, answered where it is a request, and dropped."""
        now = time.monotonic()
        if self.idle_at >= self.last_inbound and now - self.last_inbound >= BURST_GAP:
            # Not at every line the reader found drained before it: an agent writing a line every few ms is drained
            # after each, and a burst begun anew at each line held the transcript's drawing until the agent paused.
            self.burst_began = now
        self.last_inbound = now
        message = self._parse(line, value)
        if message is None:
            return
        method = message.get("method")
        has_id = "id" in message and message["id"] is not None
        if has_id and not _valid_id(message["id"]):
            self._invalid_request(line, None, "its id is neither a string nor a number")
            return
        if isinstance(method, str):
            if self.recorders:
                self._record("in", message, len(line) + 1, raw=line)
            params = message.get("params")
            if params is None:
                params = {}
            if has_id:
                self._start_serving(message["id"], method, params)
            elif method == CANCEL_REQUEST:
                self._cancel_serving(params)
            else:
                try:
                    if self.codec is not None and isinstance(params, dict):
                        self.codec.notification(method, params)
                        self.on_notification(method, params)
                    elif method == "session/update" and isinstance(params, dict):
                        vouch(params.get("update"), line)  # (sanitize.clean_update)
                        try:
                            self.on_notification(method, params)
                        finally:
                            vouch(None, b"")
                    else:
                        self.on_notification(method, params if isinstance(params, dict) else {})
                except Exception:
                    log.exception("handling notification %s failed", method)
                    self._problem("handler", f"rat-tui could not handle a {clean(method)[:80]} message from the "
                                  "agent; it was skipped (details in the log).")
        elif has_id and ("result" in message or "error" in message) and "method" not in message:
            self._resolve(message, line)
        elif has_id:
            # JSON-RPC: a request without a valid method is answered -32600 (Invalid Request).
            self._invalid_request(line, message["id"], "it has no method (and is not a response)")
        else:
            self._malformed(line, "neither a request, a notification nor a response")

    def _parse(self, line: bytes, value: Any = NOT_PARSED) -> dict[str, Any] | None:
        """The message as a dict, or None (logged and noticed) when it cannot be one."""
        try:
            # not UTF-8 or a lone surrogate: U+FFFD; recorders get the exact bytes
            message = decode_line(line, WIRE_DECODER) if value is NOT_PARSED else value
        except RecursionError:
            self._malformed(line, "nested too deep to parse")
            return None
        except (ValueError, UnicodeDecodeError) as error:
            self._malformed(line, f"not JSON ({error})")
            return None
        if not isinstance(message, dict):
            self._malformed(line, "not a JSON object")
            return None
        # Only a line with many brackets can be deep; counting them is cheap, walking is not.
        if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _depth_exceeds(message, MAX_DEPTH):
            if "id" in message and "method" in message and _valid_id(message["id"]):
                self._invalid_request(line, message["id"], f"it is nested more than {MAX_DEPTH} levels deep")
            else:
                self._malformed(line, f"nested more than {MAX_DEPTH} levels deep")
            return None
        return message

    def _invalid_request(self, line: bytes, request_id: Any, why: str) -> None:
        self._malformed(line, why)
        if self._closed:
            return
        response = {"jsonrpc": "2.0", "id": request_id, "error": RpcError(INVALID_REQUEST, f"Invalid Request: {why}").to_json()}
        task = asyncio.get_running_loop().create_task(self._send_quietly(response), name="answer invalid request")
        self._serving[f"invalid {id(task)}"] = task
        task.add_done_callback(lambda _: self._serving.pop(f"invalid {id(task)}", None))

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        try:
            await self._send(message)
        except ConnectionError:
            log.info("could not send an error answer: agent stdin closed")

    def _malformed(self, line: bytes, why: str) -> None:
        self.malformed_lines += 1
        preview = clean(line[:200].decode("utf-8", "replace"))
        log.warning("skipped a line from the agent: %s: %r", why, preview)
        if self.recorders:
            self._record("in", preview, len(line) + 1)
        self._problem("malformed", f"The agent sent a message rat-tui cannot use ({why}); it was skipped. "
                      "Later ones are only logged.")

    def _problem(self, kind: str, text: str) -> None:
        """Tell the user once per kind of problem (the log has every occurrence): `on_problem(kind, text)`."""
        if kind in self._problems_said or self.on_problem is None:
            return
        self._problems_said.add(kind)
        try:
            self.on_problem(kind, text)
        except Exception:
            log.exception("problem listener failed")

    def _resolve(self, message: dict[str, Any], line: bytes) -> None:
        size = len(line) + 1
        request_id = message["id"]
        pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            log.warning("response for unknown request id %r", request_id)
            if self.recorders:
                self._record("in", message, size, raw=line)
            return
        future, method, started = pending
        asked = self._asked.pop(request_id, method)
        if self.recorders:
            self._record("in", message, size, method, time.monotonic() - started, line)
        if future.done():
            return
        if "error" in message:
            failure = _error_from_wire(message["error"])
            if self.on_error is not None:
                try:
                    self.on_error(asked, failure)
                except Exception:
                    log.exception("error listener failed")
            future.set_exception(failure)
        elif self.codec is not None:
            future.set_result(self.codec.result(method, message.get("result")))
        else:
            future.set_result(message.get("result"))

    def _start_serving(self, request_id: Any, method: str, params: Any) -> None:
        key = json.dumps(request_id)
        task = asyncio.create_task(self._serve(request_id, method, params), name=f"serve {method}")
        self._serving[key] = task
        task.add_done_callback(lambda _: self._serving.pop(key, None))

    async def _serve(self, request_id: Any, method: str, params: Any) -> None:
        started = time.monotonic()
        handler = self.handlers.get(method)
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        bulky = method in BULKY_METHODS
        if bulky:
            await self._bulky.acquire()
        try:
            await self._serve_one(request_id, method, params, handler, response, started, bulky)
        finally:
            if bulky:
                self._bulky.release()

    def _not_reading(self, bulky: bool) -> bool:
        """Whether an answer could not be sent now: the queue is full (or, for a big answer, the agent is stalled)."""
        process = self.process
        return getattr(process, "backed_up", False) or (bulky and getattr(process, "stalled", False))

    async def _serve_one(self, request_id: Any, method: str, params: Any, handler: RequestHandler | None,
                         response: dict[str, Any], started: float, bulky: bool) -> None:
        if self._not_reading(bulky):  # its answer could not be sent: skip the work (a big read)
            log.warning("dropped the agent's %s request: it is not reading its input", method)
            return
        try:
            if wait := priority.input_wait():
                # A key on its way to the screen goes first (protocol/priority): serving a request may take
                # milliseconds on the loop (a form of 1,000 fields built: 9-19 ms), and it ran between the key's
                # hops; a key typed as the form arrived echoed after 56 ms (bench/stress.py `form`).
                await priority.input_passed(wait)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            if self.codec is not None:
                params = self.codec.serve(method, params)
            response["result"] = await handler(params)
        except asyncio.CancelledError:
            response["error"] = RpcError(REQUEST_CANCELLED, "Request cancelled").to_json()
        except RpcError as error:
            response["error"] = error.to_json()
        except Exception as error:
            log.exception("handler for %s failed", method)
            response["error"] = RpcError(INTERNAL_ERROR, f"Internal error: {error}").to_json()
        if self._closed or getattr(self.process, "backed_up", False):
            if not self._closed:
                log.warning("dropped the answer to %s: the agent is not reading its input", method)
            return
        try:
            await self._send(response, method=method, latency=time.monotonic() - started)
        except ConnectionError:
            log.info("could not answer %s: agent stdin closed", method)

    def _cancel_serving(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        task = self._serving.get(json.dumps(request_id))
        if task is not None:
            log.info("agent cancelled its request %r", request_id)
            task.cancel()


def _valid_id(value: Any) -> bool:
    """JSON-RPC ids are strings or numbers (a fraction, a 70-bit integer: answered with that same id); null,
    booleans, objects and arrays are not."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class _Clamped(int):
    """An integer beyond 64 bits, clamped (`_bounded_int`), that remembers how it was written: an answer to a
    request with such an id carries the id as the agent wrote it (`Connection._send`)."""

    text: str


def _bounded_int(text: str) -> int:
    """json's parse_int: integers beyond 64 bits are clamped, so that no float() of them overflows later."""
    value = int(text)
    if -INT_LIMIT <= value < INT_LIMIT:
        return value
    clamped = _Clamped(INT_LIMIT - 1 if value > 0 else -INT_LIMIT)
    clamped.text = text
    return clamped


def _encode(message: dict[str, Any]) -> bytes:
    line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    request_id = message.get("id")
    if isinstance(request_id, _Clamped):  # the id as the agent wrote it (it comes before result and error)
        line = line.replace(b'"id":%d' % int(request_id), b'"id":' + request_id.text.encode(), 1)
    return line


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not a JSON value")


WIRE_DECODER = json.JSONDecoder(parse_int=_bounded_int, parse_constant=_no_constant)


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether objects and arrays nest deeper than `limit` (iterative: no recursion to run out of)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values() if isinstance(child, (dict, list)))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


def _error_from_wire(raw: Any) -> RpcError:
    """An agent's `error` object as an RpcError, whatever its shape (a code that is a string, null, a float)."""
    error = raw if isinstance(raw, dict) else {}
    code = error.get("code")
    if isinstance(code, float) and code.is_integer():
        code = int(code)
    if isinstance(code, bool) or not isinstance(code, int) or not -(2**31) <= code < 2**31:
        log.warning("error answer with an invalid code %r", code)
        code = INTERNAL_ERROR
    message = error.get("message")
    if not isinstance(message, str):
        message = "error" if message is None else json.dumps(message)[:500]
    return RpcError(code, clean(message), error.get("data"))
