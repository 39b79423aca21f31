"""The RFD's Streamable HTTP profile as a `RemoteLink`: client messages POSTed to the `/acp` endpoint, server
messages read from long-lived SSE streams (one for the connection, one per session), DELETE to close.

The server names the connection in the `initialize` response's `Acp-Connection-Id` header; every later request
carries it, and a session-scoped one carries `Acp-Session-Id` too. The link learns session ids by reading the
traffic itself (the result of `session/new`, the params of `session/load` / `session/resume` once answered), and
opens that session's stream then. A POST may also be answered in its own body (JSON, or an SSE stream) as the
RFD allows (Qwen Code answers `initialize` so, and everything else with 202 and the streams). Every message, from
whichever stream, goes to one queue: `receive()` gives them in the order they arrived.

On a drop, `reopen()` reattaches the streams of the same connection, each session's with the `Last-Event-ID`
it last saw (the server replays what came after from its ring): True. When the server no longer knows the
connection (it restarted), the link forgets it and returns False: the caller initializes again and resumes.

On httpx (HTTP/1.1, and HTTP/2 when TLS's ALPN offers it); the SSE streams are parsed a network read at a time
(remote_sse.py), whose messages reach the reader as one batch (`receive_batch`). TLS is verified
unless the endpoint says `insecure`; proxies come from the environment (httpx's trust_env). No header value is
ever logged: the token is one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from typing import Any

import httpx
import orjson
from rat_tui.protocol.remote_link import Endpoint, RemoteError
from rat_tui.protocol.remote_sse import SseParser

log = logging.getLogger(__name__)
# hpack (HTTP/2's header compression) logs every header it encodes at DEBUG, values included: the bearer token.
logging.getLogger("hpack").setLevel(logging.INFO)

CONNECTION_HEADER = "Acp-Connection-Id"
SESSION_HEADER = "Acp-Session-Id"
# Qwen Code's daemon stamps each session stream with an epoch and, given it back on a reconnect, tells a
# restarted daemon's fresh ring from the one our Last-Event-ID points into.
EPOCH_HEADER = "X-Qwen-Event-Epoch"
SESSION_OPENERS = frozenset({"session/new", "session/load", "session/resume"})
# Keys under which a server's `GET /acp` metadata gives its largest message (acpremote and friends).
SIZE_KEYS = ("max_message_bytes", "maxMessageBytes", "max_message_size", "maxMessageSize")
# A POST or a stream's opening waits this long; an open stream waits for its next event forever (a turn may be
# quiet for minutes), a drop shows as the connection's end.
TIMEOUT = httpx.Timeout(30.0, read=30.0)
STREAM_TIMEOUT = httpx.Timeout(30.0, read=None)
_CLOSED = object()


class StreamableHttpLink:
    """One Streamable HTTP connection to the ACP endpoint `endpoint.url` (its `/acp` path included)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.metadata: dict[str, Any] = {}
        self.max_message_bytes: int | None = None
        self.http_version: str | None = None  # of the last exchange: "HTTP/1.1" or "HTTP/2"
        self._client: httpx.AsyncClient | None = None
        # Batches of messages (a network read's, in order), a RemoteError (the link dropped) or _CLOSED.
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._held: list[bytes] = []  # what receive() has not given out of the last batch yet
        self._connection_id: str | None = None
        self._sessions: dict[str, asyncio.Task | None] = {}  # session id -> its stream's reader
        self._conn_task: asyncio.Task | None = None
        self._last_event_id: dict[str | None, str] = {}  # stream (None: the connection's) -> last SSE id
        self._epoch: dict[str, str] = {}
        self._openers: dict[Any, str | None] = {}  # our pending session/new|load|resume ids -> known session id
        self._asked_in: dict[Any, str] = {}  # the agent's pending requests' ids -> their session
        self._closing_sessions: set[str] = set()
        self._side_tasks: set[asyncio.Task] = set()  # POST answers read as streams, session streams opening
        self._down = False
        self._closed = False

    @property
    def host(self) -> str:
        return self.endpoint.host

    # -- the contract ---------------------------------------------------------------------------------------

    async def open(self) -> None:
        self._client = self._new_client()
        await self._read_metadata()

    async def send(self, message: bytes) -> None:
        if self._closed or self._client is None:
            raise RemoteError(f"The link to {self.host} is closed.", retry=False)
        if self.max_message_bytes is not None and len(message) > self.max_message_bytes:
            raise RemoteError(f"{self.host} takes messages of at most {self.max_message_bytes} bytes; this one has "
                              f"{len(message)}.", retry=False, status=413)
        parsed = _parse(message)
        headers = self._headers({"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        session = self._note_outgoing(parsed)
        if session:
            headers[SESSION_HEADER] = session
        request = self._client.build_request("POST", self.endpoint.url, content=message, headers=headers)
        response = await self._exchange(request)
        try:
            await self._check(response, "refused the message")
            learned = response.headers.get(CONNECTION_HEADER)
            if learned and learned != self._connection_id:
                self._connection_id = learned
            await self._take_reply(response)
        finally:
            if not response.is_stream_consumed and not _is_sse(response):
                await response.aclose()
        if learned and self._conn_task is None:
            await self._attach_streams(sessions=())

    async def receive(self) -> bytes | None:
        if not self._held:
            batch = await self.receive_batch()
            if batch is None:
                return None
            self._held = batch[::-1]
        return self._held.pop()

    async def receive_batch(self) -> list[bytes] | None:
        if self._held:
            batch, self._held = self._held[::-1], []
            return batch
        item = await self._queue.get()
        if item is _CLOSED:
            self._queue.put_nowait(_CLOSED)  # every later call says closed too
            return None
        if isinstance(item, RemoteError):
            raise item
        return item

    async def reopen(self) -> bool:
        if self._closed:
            raise RemoteError(f"The link to {self.host} is closed.", retry=False)
        await self._stop_streams()
        if self._client is not None:
            await self._client.aclose()
        self._client = self._new_client()
        self._down = False
        if self._connection_id is None:
            await self._read_metadata()
            return False
        try:
            self._sessions = {s: None for s in self._sessions if s not in self._closing_sessions}
            await self._attach_streams(sessions=tuple(self._sessions))
        except RemoteError as error:
            if error.status not in (403, 404):
                raise
            log.info("remote %s no longer knows the connection (%s): starting a new one", self.host, error.status)
            await self._stop_streams()
            self._forget_connection()
            return False
        return True

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._stop_streams()
        client, self._client = self._client, None
        if client is not None:
            if self._connection_id:
                with contextlib.suppress(Exception):
                    await client.delete(self.endpoint.url, headers=self._headers({}), timeout=2.0)
            with contextlib.suppress(Exception):
                await client.aclose()
        self._queue.put_nowait(_CLOSED)

    # -- requests ---------------------------------------------------------------------------------------------

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(http2=True, verify=not self.endpoint.insecure, trust_env=True, timeout=TIMEOUT)

    def _headers(self, extra: dict[str, str]) -> dict[str, str]:
        headers = self.endpoint.request_headers()
        if self._connection_id:
            headers[CONNECTION_HEADER] = self._connection_id
        headers.update(extra)
        return headers

    async def _exchange(self, request: httpx.Request, *, stream: bool = True) -> httpx.Response:
        assert self._client is not None
        try:
            response = await self._client.send(request, stream=stream)
        except httpx.HTTPError as error:
            raise self._unreachable(error) from None
        self.http_version = response.http_version
        return response

    async def _read_metadata(self) -> None:
        """What the server says about itself (`GET /acp` asking for JSON): its metadata when it has some; a server
        that has none answers otherwise (Qwen Code: 406), which says only that it is there and lets us in."""
        assert self._client is not None
        request = self._client.build_request("GET", self.endpoint.url, headers=self._headers({"Accept": "application/json"}))
        response = await self._exchange(request, stream=False)
        if response.status_code in (401, 403):
            await self._check(response, "refused the connection")
        if response.is_success and response.headers.get("content-type", "").startswith("application/json"):
            with contextlib.suppress(ValueError):
                body = response.json()
                if isinstance(body, dict):
                    self.metadata = body
                    size = next((body[k] for k in SIZE_KEYS if isinstance(body.get(k), int)), None)
                    self.max_message_bytes = size if size and size > 0 else None

    async def _check(self, response: httpx.Response, what: str) -> None:
        """Raise the RemoteError a refusing status means (the response is closed then)."""
        status = response.status_code
        if status < 400:
            return
        reason = await _reason(response)
        if status == 401:
            raise RemoteError(f"{self.host} {what}: not authorized (401{reason}); check the token.",
                              retry=False, status=401)
        if status == 403:
            raise RemoteError(f"{self.host} {what}: forbidden (403{reason}).", retry=False, status=403)
        if status == 413:
            raise RemoteError(f"{self.host} {what}: the message is too large (413{reason}).", retry=False, status=413)
        if status == 404 and self._connection_id:
            raise RemoteError(f"{self.host} {what}: it no longer knows this connection (404{reason}).",
                              retry=True, status=404)
        if status == 503:
            raise RemoteError(f"{self.host} {what}: the server is busy or has too many sessions (503{reason}); "
                              f"try again later.", retry=True, status=503)
        if status == 429:
            raise RemoteError(f"{self.host} {what}: too many requests (429{reason}); try again later.",
                              retry=True, status=429)
        raise RemoteError(f"{self.host} {what}: HTTP {status}{reason}.", retry=status >= 500, status=status)

    def _unreachable(self, error: httpx.HTTPError) -> RemoteError:
        """A RemoteError naming the host and why a request never got an answer."""
        cause = _cause(error, ssl.SSLError)
        if isinstance(cause, ssl.SSLCertVerificationError):
            return RemoteError(f"{self.host}'s TLS certificate is not trusted ({cause.verify_message}); connect with "
                               f"the insecure switch only if you know this server.", retry=False)
        if isinstance(cause, ssl.SSLError):
            return RemoteError(f"TLS with {self.host} failed ({cause.reason or cause}).", retry=False)
        if isinstance(error, httpx.ConnectError):
            refused = _cause(error, ConnectionRefusedError) or "refused" in str(error).lower()
            why = "connection refused" if refused else _short(error)
            return RemoteError(f"Cannot reach {self.host}: {why}.", retry=True)
        if isinstance(error, httpx.TimeoutException):
            return RemoteError(f"{self.host} did not answer in time.", retry=True)
        return RemoteError(f"The connection to {self.host} dropped ({type(error).__name__}: {error}).", retry=True)

    async def _take_reply(self, response: httpx.Response) -> None:
        """A POST's own answer: JSON now (one message or a batch), an SSE stream read beside the others."""
        if response.status_code in (202, 204):
            return
        if _is_sse(response):
            self._spawn(self._read_events(response, None, "reply"))
            return
        body = await response.aread()
        if not body.strip() or not response.headers.get("content-type", "").startswith("application/json"):
            return
        parsed = _parse(body)
        self._deliver([orjson.dumps(item) for item in parsed] if isinstance(parsed, list) else [body])

    # -- streams ----------------------------------------------------------------------------------------------

    async def _attach_streams(self, sessions: tuple[str, ...]) -> None:
        """Open the connection's stream, then each session's (all awaited: a refusal raises here)."""
        self._conn_task = await self._open_stream(None)
        for session in sessions:
            self._sessions[session] = await self._open_stream(session)

    async def _open_stream(self, session: str | None) -> asyncio.Task:
        assert self._client is not None
        extra = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if session is not None:
            extra[SESSION_HEADER] = session
            if session in self._epoch:
                extra[EPOCH_HEADER] = self._epoch[session]
        if session in self._last_event_id:
            extra["Last-Event-ID"] = self._last_event_id[session]
        request = self._client.build_request("GET", self.endpoint.url, headers=self._headers(extra),
                                             timeout=STREAM_TIMEOUT)
        response = await self._exchange(request)
        what = "refused the session's event stream" if session else "refused the event stream"
        await self._check(response, what)
        if session is not None and EPOCH_HEADER in response.headers:
            self._epoch[session] = response.headers[EPOCH_HEADER]
        kind = "connection" if session is None else "session"
        return asyncio.get_running_loop().create_task(self._read_events(response, session, kind))

    async def _read_events(self, response: httpx.Response, session: str | None, kind: str) -> None:
        """Deliver every message of one SSE stream (`kind`: "connection", "session" or a POST's "reply"); its end
        or failure, unless we closed it, is a drop."""
        parser = SseParser()
        try:
            async for chunk in response.aiter_bytes():
                batch = parser.feed(chunk)
                if parser.last_id and kind != "reply":
                    self._last_event_id[session] = parser.last_id
                if batch:
                    self._deliver(batch)
            if kind == "reply":
                return  # a POST's own answer ends when it is all said
            ended = f"{self.host} closed the {kind} stream"
        except (httpx.HTTPError, OSError) as error:
            ended = f"The connection to {self.host} dropped ({_short(error)})"
        finally:
            with contextlib.suppress(Exception):
                await response.aclose()
        if not self._closed and session not in self._closing_sessions:
            self._dropped(ended)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._side_tasks.add(task)  # held: the loop keeps only a weak reference to a task
        task.add_done_callback(self._side_tasks.discard)

    def _dropped(self, why: str) -> None:
        """The first stream that ends unasked takes the link down: one error, after what already arrived."""
        if self._down or self._closed:
            return
        self._down = True
        log.warning("remote %s: %s", self.host, why)
        self._queue.put_nowait(RemoteError(f"{why}.", retry=True))

    async def _stop_streams(self) -> None:
        tasks = [t for t in (self._conn_task, *self._sessions.values(), *self._side_tasks) if t is not None]
        self._conn_task = None
        for session in self._sessions:
            self._sessions[session] = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    def _forget_connection(self) -> None:
        self._connection_id = None
        self._sessions.clear()
        self._last_event_id.clear()
        self._epoch.clear()
        self._openers.clear()
        self._asked_in.clear()
        self._closing_sessions.clear()

    # -- what the traffic says --------------------------------------------------------------------------------

    def _note_outgoing(self, message: Any) -> str | None:
        """The session an outgoing message belongs to (its Acp-Session-Id), noting what the answer will teach."""
        if not isinstance(message, dict):
            return None
        method, params = message.get("method"), message.get("params")
        session = params.get("sessionId") if isinstance(params, dict) else None
        if method in SESSION_OPENERS and "id" in message:
            self._openers[message["id"]] = session if isinstance(session, str) else None
        elif method == "session/close" and isinstance(session, str):
            self._closing_sessions.add(session)
        if method is None and "id" in message:  # our answer to the agent's request
            session = self._asked_in.pop(message["id"], None)
        return session if isinstance(session, str) else None

    def _deliver(self, batch: list[bytes]) -> None:
        # Only a message with a top-level "id" can teach something (a streamed chunk has none): the flood of
        # chunks is not parsed twice.
        for data in batch:
            if b'"id"' in data:
                self._note_incoming(data)
        self._queue.put_nowait(batch)

    def _note_incoming(self, data: bytes) -> None:
        message = _parse(data)
        if not isinstance(message, dict) or "id" not in message:
            return
        if "method" in message:  # the agent asks: our answer goes to the same session
            params = message.get("params")
            if isinstance(params, dict) and isinstance(params.get("sessionId"), str):
                self._asked_in[message["id"]] = params["sessionId"]
            return
        if message["id"] not in self._openers:
            return
        session = self._openers.pop(message["id"])
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            session = result["sessionId"]
        if session and "error" not in message and self._sessions.get(session) is None:
            self._sessions[session] = None
            self._spawn(self._attach_session(session))

    async def _attach_session(self, session: str) -> None:
        try:
            self._sessions[session] = await self._open_stream(session)
        except RemoteError as error:
            if not self._closed:
                self._down = True
                self._queue.put_nowait(error)


def _parse(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except ValueError:
            return None


def _cause(error: BaseException, kind: type[BaseException]) -> Any:
    """The first exception of `kind` in `error`'s chain of causes, or None."""
    seen: BaseException | None = error
    while seen is not None and not isinstance(seen, kind):
        seen = seen.__cause__ or seen.__context__
    return seen


def _is_sse(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


def _short(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


async def _reason(response: httpx.Response) -> str:
    """The server's own words for a refusal, short (its `error` field or message), as ': words'."""
    with contextlib.suppress(Exception):
        body = await response.aread()
    await response.aclose()
    try:
        data = json.loads(body)
    except (ValueError, UnboundLocalError):
        return ""
    if isinstance(data, dict):
        error = data.get("error")
        text = error.get("message") if isinstance(error, dict) else error
        if isinstance(text, str) and text:
            return f": {text[:160]}"
    return ""
