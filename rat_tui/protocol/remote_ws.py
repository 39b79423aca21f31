"""Provides WebSocketLink: the RFD's WebSocket profile (one text frame per JSON-RPC message, both ways) on the
`websockets` library's asyncio client, and `server_metadata`, the `GET /acp` document read over plain HTTP.

acpremote (`acpremote expose -- AGENT`) serves its WebSocket at `/acp/ws` and its metadata at `/acp`; a server
of the RFD serves both at `/acp`. Either URL works: the metadata, when there is any, names the socket's path.
Each connection is a new agent on acpremote's side, so `reopen()` is always a new connection (False).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .remote_link import Endpoint, RemoteError

log = logging.getLogger("rat.remote")

OPEN_TIMEOUT = 10.0
# The largest message rat takes from an agent: the same as a line from a local agent (transport.py).
MAX_INCOMING_BYTES = 256 * 1024 * 1024


def tls_context(endpoint: Endpoint) -> ssl.SSLContext | None:
    """The TLS settings of a `wss://` or `https://` endpoint: the system's trust store, or no check at all when
    the user said `insecure` (a lab box with a self-signed certificate)."""
    if urlsplit(endpoint.url).scheme not in ("wss", "https"):
        return None
    context = ssl.create_default_context()
    if endpoint.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def explain(endpoint: Endpoint, error: BaseException) -> RemoteError:
    """One clear sentence for what went wrong reaching `endpoint` (the host and the reason, never a header)."""
    host = endpoint.host
    if isinstance(error, RemoteError):
        return error
    if isinstance(error, ssl.SSLCertVerificationError):
        reason = getattr(error, "verify_message", None) or str(error)
        return RemoteError(f"The TLS certificate of {host} is not trusted ({reason}); --insecure (profile key "
                           "`insecure = true`) skips the check, for a lab box only.", retry=False)
    if isinstance(error, ssl.SSLError):
        return RemoteError(f"TLS with {host} failed: {error.reason or error}.", retry=False)
    status = _status_of(error)
    if status is not None:
        return _refusal(host, status)
    if isinstance(error, ConnectionRefusedError):
        return RemoteError(f"Cannot reach {host}: connection refused (is the server running?).")
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        return RemoteError(f"{host} did not answer within {OPEN_TIMEOUT:g} s.")
    if isinstance(error, OSError):
        return RemoteError(f"Cannot reach {host}: {error.strerror or error}.")
    return RemoteError(f"The connection to {host} failed: {error}.")


def _status_of(error: BaseException) -> int | None:
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _refusal(host: str, status: int) -> RemoteError:
    if status == 401:
        return RemoteError(f"{host} asks for a token (401 Unauthorized): name the environment variable that holds "
                           "it with --token-env (profile key `token_env`), or check its value.", retry=False,
                           status=status)
    if status == 403:
        return RemoteError(f"{host} refused this client (403 Forbidden): the token is not allowed there.",
                           retry=False, status=status)
    if status == 503:
        return RemoteError(f"{host} is busy (503 Service Unavailable: too many sessions?); trying again later.",
                           status=status)
    if status == 404:
        return RemoteError(f"{host} has no ACP endpoint at that path (404 Not Found).", retry=False, status=status)
    return RemoteError(f"{host} refused the connection (HTTP {status}).", retry=status >= 500, status=status)


def metadata_url(url: str) -> str:
    """The `GET /acp` metadata's URL for a WebSocket URL: http(s), and acpremote's `/ws` suffix dropped."""
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path[:-3] if parts.path.endswith("/ws") else parts.path
    return urlunsplit((scheme, parts.netloc, path or "/acp", "", ""))


async def server_metadata(endpoint: Endpoint, url: str | None = None) -> dict[str, Any]:
    """The server's `GET /acp` document (acpremote: auth modes, `remote_cwd`, `max_size`), or {} when it serves
    none; a server that cannot be reached is reported by the connection itself, not here."""
    import httpx  # only a remote session needs it

    try:
        async with httpx.AsyncClient(verify=tls_context(endpoint) or True, timeout=OPEN_TIMEOUT) as client:
            response = await client.get(url or metadata_url(endpoint.url), headers=endpoint.request_headers())
    except (httpx.HTTPError, OSError, ssl.SSLError) as error:
        log.info("no metadata from %s: %s", endpoint.host, type(error).__name__)
        return {}
    if response.status_code != 200 or "json" not in response.headers.get("content-type", ""):
        return {}
    try:
        document = response.json()
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def message_limit(metadata: dict[str, Any]) -> int | None:
    """The largest message the server takes, when its metadata says (acpremote: `max_size`)."""
    for key in ("max_size", "max_message_bytes", "maxMessageBytes"):
        value = metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class WebSocketLink:
    """One WebSocket to a remote agent (RemoteLink)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.metadata: dict[str, Any] = {}
        self.max_message_bytes: int | None = None
        self._socket: Any = None
        self._closed = False

    def _socket_url(self) -> str:
        """The URL to open: the metadata's `websocket_path` when the user named the metadata's endpoint."""
        parts = urlsplit(self.endpoint.url)
        path = self.metadata.get("websocket_path")
        if isinstance(path, str) and path.startswith("/") and parts.path != path:
            return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
        return self.endpoint.url

    async def open(self) -> None:
        from websockets.asyncio.client import connect

        self._closed = False
        self.metadata = await server_metadata(self.endpoint)
        self.max_message_bytes = message_limit(self.metadata)
        try:
            self._socket = await connect(
                self._socket_url(), additional_headers=self.endpoint.request_headers(), ssl=tls_context(self.endpoint),
                open_timeout=OPEN_TIMEOUT, max_size=MAX_INCOMING_BYTES, compression=None,
                # What a socket may queue before the server's frames wait on us: back-pressure, as a pipe has.
                max_queue=64, user_agent_header="rat-tui")
        except Exception as error:  # the library's handshake errors, OSError, TLS: each said plainly
            raise explain(self.endpoint, error) from None
        log.info("connected to %s over WebSocket", self.endpoint.host)

    async def send(self, message: bytes) -> None:
        socket = self._socket
        if socket is None or self._closed:
            raise RemoteError(f"The connection to {self.endpoint.host} is closed.")
        limit = self.max_message_bytes
        if limit is not None and len(message) > limit:
            raise RemoteError(f"A message of {len(message) // 1024} KiB is over {self.endpoint.host}'s limit of "
                              f"{limit // 1024} KiB; it was not sent.", retry=False)
        from websockets.exceptions import ConnectionClosed

        try:
            await socket.send(message, text=True)
        except ConnectionClosed as error:
            raise self._lost(error) from None

    async def receive(self) -> bytes | None:
        socket = self._socket
        if socket is None:
            return None
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        try:
            data = await socket.recv(decode=False)
        except ConnectionClosedOK:
            return None
        except ConnectionClosed as error:
            if self._closed:
                return None
            raise self._lost(error) from None
        return data if isinstance(data, bytes) else data.encode()

    async def receive_batch(self) -> list[bytes] | None:
        # A frame at a time: websockets gives no way to take the frames it holds without waiting.
        data = await self.receive()
        return None if data is None else [data]

    def _lost(self, error: Any) -> RemoteError:
        frame = getattr(error, "rcvd", None) or getattr(error, "sent", None)
        code = getattr(frame, "code", None)
        if code == 1009:
            return RemoteError(f"{self.endpoint.host} closed the connection: a message was over its size limit.")
        reason = f" ({code} {frame.reason})".rstrip() if frame is not None else " (no close frame)"
        return RemoteError(f"The connection to {self.endpoint.host} was lost{reason}.")

    async def reopen(self) -> bool:
        await self._drop()
        await self.open()
        return False  # a new connection: acpremote starts a new agent for it

    async def _drop(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.close(), 1.0)

    async def close(self) -> None:
        self._closed = True
        await self._drop()
