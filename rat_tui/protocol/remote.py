"""Provides RemoteProcess: a RemoteLink (a socket to an agent elsewhere) in the shape of AgentProcess, so the
router reads and writes it as it does a pipe; and `make_link`, which picks the link by the URL's scheme.

What differs from a pipe, and how it is kept from the layers above:
- Reading: a pump task takes the link's messages into a bounded queue; the reader hands them to `route` in
  the same shared time slice as the local agents' readers (`transport.turn_used` / `pass_turn`), so a flood
  over the network leaves keys echoing as a local one does. The queue being empty is "drained" (`on_idle`).
- Writing: `send_line` queues and returns at once, with AgentProcess's back-pressure (`refuse_if_backed_up`,
  `WriteBackedUp`) and stall report; a writer task sends in order.
- A drop: the reason goes to the stderr ring (the session's "last lines" show it) and to `on_disconnected`;
  the link is reopened with backoff. Resumed with nothing lost (`reopen()` True), reading goes on. A new
  connection (False) ends this process's reading like an agent's exit, with `renewed` set: the session builds
  the next RemoteProcess on the same, already open, link (`handed_over`) and resumes its agent-side session.
  A message refused or lost while the link is down is never sent again by the transport (a prompt must not
  run twice); the request it carried fails or is reported unanswered as any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import priority
from .aside import HUGE_LINE, AsideParser
from .remote_link import Endpoint, RemoteError, RemoteLink
from .transport import (
    LONG_LINE, TURN_CHECK_LINES, Outbox, StderrRing, pass_turn, turn_used,
)

log = logging.getLogger("rat.remote")

# Seconds between reconnection attempts after a drop: quick at first (a blip), then no faster than this cap.
BACKOFF = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0)
# Batches read ahead of the router (a WebSocket's hold one message, a Streamable HTTP one a network read's);
# past it the pump waits (the socket then pushes back).
PUMP_QUEUE = 4096
_DROPPED = object()  # in the queue: the link dropped (the error is in `_drop`)
# The JSON-RPC error code of the answer given for a request the server refused before its agent saw it
# (-32000..-32099: implementation-defined server errors).
REFUSED_BY_SERVER = -32001

LINKS = {
    "ws": ("rat_tui.protocol.remote_ws", "WebSocketLink"),
    "wss": ("rat_tui.protocol.remote_ws", "WebSocketLink"),
    "http": ("rat_tui.protocol.remote_http", "StreamableHttpLink"),
    "https": ("rat_tui.protocol.remote_http", "StreamableHttpLink"),
}


class MessageTooLarge(ConnectionError):
    """A message over the server's size limit: refused before it is sent (the link stays up)."""


def make_link(endpoint: Endpoint) -> RemoteLink:
    """The RFD profile for the URL's scheme: WebSocket for ws/wss, Streamable HTTP for http/https."""
    scheme = endpoint.url.split(":", 1)[0].lower()
    if scheme not in LINKS:
        raise RemoteError(f"{endpoint.url!r} is not a remote agent's URL (ws://, wss://, http:// or https://).",
                          retry=False)
    module_name, class_name = LINKS[scheme]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise RemoteError("Streamable HTTP is not available in this build of rat-tui; a ws:// or wss:// URL "
                          "connects over WebSocket.", retry=False) from None
    return getattr(module, class_name)(endpoint)


class RemoteProcess(Outbox):
    """One connection to a remote agent with AgentProcess's surface (start, send_line/write_line, read_lines,
    wait, close, returncode, stderr, on_stalled/on_oversized); `pid` is None."""

    pid = None

    def __init__(self, link: RemoteLink, *, opened: bool = False, backoff: tuple[float, ...] = BACKOFF) -> None:
        self.link = link
        self.host = link.endpoint.host
        self.stderr = StderrRing()  # connection events, shown as a local agent's stderr is
        self.backoff = backoff
        self.aside = AsideParser()
        self._init_outbox()
        # Told of a drop and each attempt to come back: (reason, seconds to the next attempt or None: given up).
        self.on_disconnected: Callable[[str, float | None], None] | None = None
        self.on_reconnected: Callable[[], None] | None = None  # the link resumed with nothing lost
        self.on_refused: Callable[[str], None] | None = None  # a message not sent (over the server's limit)
        self.renewed = False  # the link came back as a new connection: the session starts over on it
        self.ending = ""  # why reading ended, for the user, when it was not our close
        self._opened = opened
        self._closed = asyncio.Event()
        self._outbox: deque[bytes] = deque()
        self._outbox_ready = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._pump: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[Any] = asyncio.Queue(PUMP_QUEUE)
        self._drop: RemoteError | None = None
        self._returncode: int | None = None
        self._done = asyncio.Event()

    @property
    def returncode(self) -> int | None:
        return self._returncode

    def _event(self, text: str) -> None:
        self.stderr.add(f"[{time.strftime('%H:%M:%S')}] {text}\n".encode())
        log.info("%s", text)

    async def start(self) -> None:
        """Open the link (unless it was handed over open); raises RemoteError with the reason."""
        if not self._opened:
            await self.link.open()
            self._opened = True
        self._event(f"connected to {self.host}")
        self._pump = asyncio.get_running_loop().create_task(self._read_link(), name="remote-pump")

    async def _read_link(self) -> None:
        """The pump: the link's batches of messages into the queue, in order, until it closes or drops."""
        inbox = self._inbox
        try:
            while True:
                # A key on its way to the screen goes first: the socket is not read meanwhile (as a local
                # agent's pipe is paused, transport.pass_turn), so its frames wait in the kernel, not here. A
                # link's receive_batch() returns without yielding while it holds frames: the pump takes its
                # part of the readers' shared slice as the reader does.
                if priority.input_wait() or turn_used(time.monotonic()):
                    await pass_turn(None)
                batch = await self.link.receive_batch()
                if batch is None:
                    break
                await inbox.put(batch)
        except RemoteError as error:
            self._drop = error
            await inbox.put(_DROPPED)
            return
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a link's bug is a drop, not a frozen tab
            log.exception("the link to %s failed", self.host)
            self._drop = RemoteError(f"The connection to {self.host} failed: {error}.")
            await inbox.put(_DROPPED)
            return
        await inbox.put(None)

    # -- writing ------------------------------------------------------------------------------------

    def _not_reading(self) -> str:
        return f"{self.host} is not taking our messages"

    def send_line(self, line: bytes) -> None:
        if self._closed.is_set() or self._done.is_set() or not self._opened:
            raise ConnectionError(f"the connection to {self.host} is closed")
        size = len(line)
        limit = self.link.max_message_bytes
        if limit is not None and size > limit:
            self._refused(f"A message of {size // 1024} KiB is over {self.host}'s limit of {limit // 1024} KiB; "
                          "it was not sent.")
            raise MessageTooLarge(f"over {self.host}'s message size limit")
        self.refuse_if_backed_up(size)
        self.queued_bytes += size
        self._outbox.append(line)
        self._outbox_ready.set()
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_out(), name="remote-writer")

    async def write_line(self, line: bytes) -> None:
        self.send_line(line)

    async def _write_out(self) -> None:
        outbox = self._outbox
        while True:
            if not outbox:
                self._outbox_ready.clear()
                await self._outbox_ready.wait()
                continue
            message = outbox.popleft()
            started = time.monotonic()
            send = asyncio.ensure_future(self.link.send(message))
            try:
                done, _ = await asyncio.wait({send}, timeout=self.write_stall_seconds)
                if not done:
                    self._report_stall(time.monotonic() - started)
                send.result() if done else await send
                self.stalled = False
            except RemoteError as error:
                # Not sent again: the message may have reached the agent (a prompt must not run twice).
                self._event(f"a message to {self.host} was not sent: {error}")
                # Refused by the server (a status, or for good): the agent never had it. A request is answered
                # with the reason (its turn says it); anything else is told on its own.
                refused = error.status is not None or not error.retry
                if not (refused and await self._answer_refused(message, error)) and not error.retry:
                    self._refused(str(error))
            finally:
                self.queued_bytes -= len(message)

    async def _answer_refused(self, message: bytes, error: RemoteError) -> bool:
        """A request the server refused (403, 413, 503...) is answered here with that error, as the agent's
        answer would be: its waiter (a prompt's turn) ends with the reason instead of waiting forever. Whether
        it was a request (and answered)."""
        try:
            request = json.loads(message)
        except ValueError:
            return False
        if not isinstance(request, dict) or "method" not in request or "id" not in request or self._done.is_set():
            return False
        answer = {"jsonrpc": "2.0", "id": request["id"],
                  "error": {"code": REFUSED_BY_SERVER, "message": str(error), "data": {"refusedBy": self.host}}}
        await self._inbox.put([json.dumps(answer).encode()])
        return True

    def _refused(self, text: str) -> None:
        self._event(text)
        if self.on_refused is not None:
            try:
                self.on_refused(text)
            except Exception:
                log.exception("refusal listener failed")

    async def flushed(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.queued_bytes and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return not self.queued_bytes

    # -- reading ------------------------------------------------------------------------------------

    async def read_lines(self, route: Callable[..., None], before_wait: Callable[[], None] | None = None,
                         on_idle: Callable[[], None] | None = None) -> None:
        """Hand `route` each message until the link closes, ends in a new connection, or we give up on it;
        the loop gets its turn as AgentProcess.read_lines gives it (one shared slice, keys first)."""
        inbox = self._inbox
        routed = fresh = False
        count = 0
        try:
            while True:
                if inbox.empty():
                    if routed and before_wait is not None:
                        before_wait()
                    routed = False
                    if fresh and on_idle is not None:
                        fresh = False
                        on_idle()
                batch = await inbox.get()
                if batch is None:
                    self.ending = f"{self.host} closed the connection."
                    return
                if batch is _DROPPED:
                    if await self._come_back():
                        continue
                    return
                for message in batch:
                    size = len(message)
                    if size > self.max_line_bytes:
                        self._oversized(size)
                        continue
                    if size >= HUGE_LINE:
                        if routed and before_wait is not None:
                            before_wait()  # the loop runs on while the message is parsed aside
                        routed = fresh = True
                        route(message, await self.aside.parse(message))
                    else:
                        routed = fresh = True
                        route(message)
                    count += 1
                    if (priority.input_wait() or (((count & (TURN_CHECK_LINES - 1)) == 0 or size > LONG_LINE)
                                                  and turn_used(time.monotonic()))) \
                            and await pass_turn(before_wait if routed else None):
                        routed = False
        finally:
            self._returncode = 0 if self._drop is None else 1
            self._done.set()

    def _oversized(self, size: int) -> None:
        if self.on_oversized is not None:
            try:
                self.on_oversized(size)
            except Exception:
                log.exception("oversized-line listener failed")

    async def _come_back(self) -> bool:
        """After a drop: reopen with backoff. True when the link resumed with nothing lost (read on); False when
        reading ends (a new connection: `renewed`; or we gave up, or were closed: `ending` says why)."""
        error = self._drop
        assert error is not None
        self._event(str(error))
        attempt = 0
        while not self._closed.is_set():
            if not error.retry:
                self.ending = str(error)
                self._tell_disconnected(str(error), None)
                return False
            delay = self.backoff[min(attempt, len(self.backoff) - 1)]
            self._tell_disconnected(str(error), delay)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._closed.wait(), delay)
            if self._closed.is_set():
                break
            attempt += 1
            try:
                resumed = await self.link.reopen()
            except RemoteError as failed:
                error = failed
                self._event(f"reconnecting to {self.host} failed: {failed}")
                continue
            self._drop = None
            if resumed:
                self._event(f"reconnected to {self.host}: the connection resumed")
                self._pump = asyncio.get_running_loop().create_task(self._read_link(), name="remote-pump")
                if self.on_reconnected is not None:
                    self.on_reconnected()
                return True
            self._event(f"reconnected to {self.host}: a new connection")
            self.renewed = True
            return False
        self.ending = f"The connection to {self.host} was closed."
        return False

    def _tell_disconnected(self, reason: str, retry_in: float | None) -> None:
        if self.on_disconnected is not None:
            try:
                self.on_disconnected(reason, retry_in)
            except Exception:
                log.exception("disconnect listener failed")

    # -- the end ------------------------------------------------------------------------------------

    def _wake_reader(self) -> None:
        """The reader waiting on the queue reads its end now (what is queued is dropped: we are closing)."""
        inbox = self._inbox
        while not inbox.empty():
            inbox.get_nowait()
        inbox.put_nowait(None)

    def handed_over(self) -> RemoteLink:
        """The link, open on a new connection, for the next RemoteProcess (this one no longer closes it)."""
        self.renewed = False
        link, self._owns_link = self.link, False
        return link

    _owns_link = True

    async def wait(self) -> int:
        await self._done.wait()
        return self._returncode or 0

    async def close(self, grace: float = 2.0) -> int | None:
        """Close the link (not one handed over to the next connection); idempotent, never raises."""
        self._closed.set()
        await self.aside.close()
        if self.queued_bytes and not self.stalled:
            await self.flushed(min(grace, 0.2))  # the last messages (session/close)
        for task in (self._writer, self._pump):
            if task is not None and not task.done():
                task.cancel()
        if self._owns_link and not self.renewed:
            with contextlib.suppress(Exception):
                await self.link.close()
        self._wake_reader()
        if self._returncode is None:
            self._returncode = 0
        self._done.set()
        return self._returncode
