"""`rat serve`: the app in a browser, through Textual's own `textual-serve`.

Each browser connection starts `rat` (same config, same history, same working directory and agent
choice) as a subprocess under Textual's web driver; textual-serve relays its screen to xterm.js.

textual-serve has no authentication. Bound to a loopback address only the local user can reach it
(as with any local dev server); bound beyond localhost, anyone who can reach the port could drive an
agent that runs commands on this machine, so a random token is required: the first request must
carry `?token=...` (the printed URL does), which sets an HttpOnly cookie that the page's websocket
and static files then present. Every other request is refused with 403.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

COOKIE = "rat_serve_token"


@dataclass(frozen=True)
class ServeOptions:
    host: str
    port: int
    cwd: Path
    config: Path | None = None
    agent: str | None = None
    rpc_log: Path | None = None
    command: tuple[str, ...] = ()
    protocol: int | None = None


def is_loopback(host: str) -> bool:
    """True when `host` is reachable only from this machine (localhost, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def app_command(options: ServeOptions) -> str:
    """The shell command textual-serve runs per connection: this very `rat`, same interpreter."""
    argv = [sys.executable, "-m", "rat_tui", "--cwd", str(options.cwd)]
    if options.config is not None:
        argv += ["--config", str(options.config)]
    if options.agent:
        argv += ["--agent", options.agent]
    if options.rpc_log is not None:
        argv += ["--rpc-log", str(options.rpc_log)]
    if options.protocol is not None:
        argv += ["--protocol", str(options.protocol)]
    if options.command:
        argv += ["--", *options.command]
    return shlex.join(argv)


def token_middleware(token: str):
    """An aiohttp middleware admitting only requests that carry `token` (query or cookie)."""
    from aiohttp import web

    @web.middleware
    async def check_token(request: web.Request, handler):
        given = request.query.get("token")
        if given is not None and hmac.compare_digest(given.encode(), token.encode()):
            response = await handler(request)
            if not response.prepared:  # the websocket's handshake is already on the wire
                response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
            return response
        cookie = request.cookies.get(COOKIE)
        if cookie is not None and hmac.compare_digest(cookie.encode(), token.encode()):
            return await handler(request)
        raise web.HTTPForbidden(text="rat serve: this address needs the token printed by `rat serve` "
                                     "(open the URL with ?token=...)\n")

    return check_token


def make_server(options: ServeOptions, token: str | None):
    """A textual-serve Server for `options`; `token` None means no check (loopback only)."""
    from textual_serve.server import Server

    class RatServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            if token is not None:
                app.middlewares.append(token_middleware(token))
            return app

        async def handle_index(self, request: web.Request):
            # The page's websocket and static URLs are absolute: build them from the address the browser
            # used (binding 0.0.0.0 would otherwise send it to ws://0.0.0.0:PORT).
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

        async def on_startup(self, app: web.Application) -> None:
            pass  # our own banner is printed by serve() (with the token), not textual-serve's

    return RatServer(app_command(options), host=options.host, port=options.port, title="rat-tui")


def browse_url(options: ServeOptions, token: str | None) -> str:
    host = options.host
    if host in ("", "0.0.0.0", "::"):  # every interface: name one the user can type elsewhere
        host = socket.gethostname() or host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    url = f"http://{host}:{options.port}/"
    return f"{url}?token={token}" if token else url


def serve(options: ServeOptions) -> int:
    """Run the web server until Ctrl+C; prints where to point the browser."""
    token = None if is_loopback(options.host) else secrets.token_urlsafe(24)
    server = make_server(options, token)
    if token is not None:
        print(f"rat serve: WARNING: listening on {options.host}, beyond this machine. Anyone who can reach this "
              "port and has the token can drive the agent, which runs commands here. The connection is not "
              "encrypted: use it only on a network you trust, or bind 127.0.0.1 and tunnel (ssh -L).",
              file=sys.stderr)
    print(f"rat serve: open {browse_url(options, token)}  (Ctrl+C to stop)", flush=True)
    try:
        server.serve()
    except OSError as error:  # the port is taken, the address is not ours...
        print(f"rat serve: cannot listen on {options.host}:{options.port}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    return 0
