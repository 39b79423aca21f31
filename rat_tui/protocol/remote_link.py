"""The contract between rat's remote transports and the session that drives them (ACP over the network).

The RFD "Streamable HTTP & WebSocket Transport" gives one `/acp` endpoint two profiles: a WebSocket (one text
frame per JSON-RPC message, both ways) and Streamable HTTP (client messages POSTed, server messages on SSE
streams: one for the connection, one per session). Each profile is a `RemoteLink`; `RemoteProcess` (in
`remote.py`) wraps a link in `AgentProcess`'s shape, so the router, engine, store, journal and UI do not know
whether a line came from a pipe or a socket.

A link moves whole JSON-RPC messages (bytes of one JSON value, no trailing newline). It never logs the
token or any header value (they are secrets); its errors are `RemoteError`s whose text is for the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class RemoteError(ConnectionError):
    """A remote agent cannot be reached, refused us, or dropped the connection. `str()` is one clear sentence
    for the UI and the log (it names the host and the reason, never a secret); `retry` says whether trying
    again later can help (a dropped link, a refused connection, 503) or not (401/403, a bad certificate, a
    message too large)."""

    def __init__(self, message: str, *, retry: bool = True, status: int | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """Where a remote agent is and how to authenticate. `token` is the bearer token's value, read from the
    environment variable the user named (never from argv); `headers` are extra request headers."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    token: str | None = field(default=None, repr=False)
    insecure: bool = False  # skip TLS verification: only by the user's explicit switch

    @property
    def host(self) -> str:
        """`host:port` as the tab and status bar show it."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        return parts.netloc.rsplit("@", 1)[-1] or self.url

    def request_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers


class RemoteLink(Protocol):
    """One connection to a remote agent, in one of the RFD's two profiles."""

    endpoint: Endpoint
    # What the server says about itself before ACP starts (acpremote's and qwen's `GET /acp` metadata:
    # `remote_cwd`, auth modes, message size limit), or {} when it says nothing.
    metadata: dict[str, Any]
    # The largest message the server takes, in bytes, when it says so (else None).
    max_message_bytes: int | None

    async def open(self) -> None:
        """Connect (and read the metadata). Raises RemoteError with a clear reason."""

    async def send(self, message: bytes) -> None:
        """Send one JSON-RPC message. Raises RemoteError when the link is down or the server refuses it."""

    async def receive(self) -> bytes | None:
        """The next message from the agent, in order; None once the link was closed by `close()` or cleanly by
        the server. Raises RemoteError when the connection drops."""

    async def receive_batch(self) -> list[bytes] | None:
        """The messages that arrived together (at least one), in order, as `receive` would give them one by one:
        the reader hands a whole network read on at once (one wake-up and one queue hop a batch, not a message)."""

    async def reopen(self) -> bool:
        """Connect again after a drop. True when the server resumed the same connection with nothing lost
        (Streamable HTTP with `Last-Event-ID` replay): the session goes on as it was. False when this is a new
        connection: the session must be resumed or loaded by ACP (`session/resume`, `session/load`).
        Raises RemoteError when the server cannot be reached."""

    async def close(self) -> None:
        """Close the connection (Streamable HTTP: DELETE); idempotent; never raises."""
