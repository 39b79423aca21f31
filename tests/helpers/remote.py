"""Remote agents for tests: acpremote (from PyPI, the test extra) exposing a stdio agent over WebSocket on
127.0.0.1, started and killed as a real server process; and a self-signed certificate for a wss:// server."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ACPREMOTE = Path(sys.executable).parent / "acpremote"
TOKEN_ENV = "RAT_TEST_REMOTE_TOKEN"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class AcpRemote:
    """`acpremote expose --port P [--token-env VAR] --cwd DIR -- ARGV`; its agent is in its process group."""

    def __init__(self, argv: list[str], cwd: Path, token: str | None = None, env: dict[str, str] | None = None,
                 port: int | None = None) -> None:
        self.argv, self.cwd, self.token = argv, cwd, token
        self.env = dict(env or {})
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/acp/ws"

    def start(self, argv: list[str] | None = None) -> AcpRemote:
        self.argv = argv or self.argv
        env = {**os.environ, **self.env}
        command = [str(ACPREMOTE), "expose", "--port", str(self.port), "--cwd", str(self.cwd)]
        if self.token is not None:
            env[TOKEN_ENV] = self.token
            command += ["--token-env", TOKEN_ENV]
        self.process = subprocess.Popen([*command, "--", *self.argv], env=env, start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/acp", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"acpremote exited with code {self.process.returncode}")
            if time.monotonic() > deadline:
                raise AssertionError("acpremote never served its metadata")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL the server and the agents it started (no close frame: a dropped network, as seen by rat)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def __enter__(self) -> AcpRemote:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by itself (openssl CLI), and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key
