"""Qwen Code's daemon (`qwen serve`: ACP over Streamable HTTP on /acp) for tests, installed from npm by the project
itself and run offline against the stub model of tests/helpers/openai_stub.py.

`qwen_entry()` installs `@qwen-code/qwen-code` once into `.cache/qwen` (a lock keeps parallel test workers from
installing twice; a marker file records the version) and gives the path of its `cli-entry.js`, or None with the
reason when npm or node is missing or the install failed (the tests skip with that reason). `QwenServe` starts the
daemon on a free 127.0.0.1 port with its own HOME and settings (auth type openai, no telemetry, no update checks,
tools that ask the client's permission), and can kill and restart it on the same port."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
QWEN_VERSION = "0.24.4"
PACKAGE = f"@qwen-code/qwen-code@{QWEN_VERSION}"
CACHE = ROOT / ".cache" / "qwen"
ENTRY = CACHE / "node_modules" / "@qwen-code" / "qwen-code" / "cli-entry.js"
MARKER = CACHE / f".installed-{QWEN_VERSION}"


def qwen_entry() -> tuple[Path | None, str]:
    """(cli-entry.js, "") once Qwen Code is installed, else (None, why not)."""
    if MARKER.exists() and ENTRY.exists():
        return ENTRY, ""
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        return None, "Qwen Code's daemon needs node and npm, not found on PATH"
    CACHE.mkdir(parents=True, exist_ok=True)
    # The cache is the project's own, never committed.
    (ROOT / ".cache" / ".gitignore").write_text("*\n")
    with open(CACHE.parent / "qwen.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a parallel worker waits here while the first one installs
        if MARKER.exists() and ENTRY.exists():
            return ENTRY, ""
        done = subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--loglevel=error",
                               PACKAGE], capture_output=True, text=True, timeout=900)
        if done.returncode or not ENTRY.exists():
            return None, f"npm install {PACKAGE} failed: {(done.stderr or done.stdout).strip()[-300:]}"
        MARKER.write_text(PACKAGE + "\n")
    return ENTRY, ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_settings(home: Path) -> None:
    """Qwen Code's user settings for an offline run: OpenAI-compatible auth (else it asks for its own OAuth), no
    telemetry, no update checks, no folder-trust prompt, and tools that ask before they write."""
    qdir = home / ".qwen"
    qdir.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "tools": {"approvalMode": "default"},
    }
    (qdir / "settings.json").write_text(json.dumps(settings, indent=2))


class QwenServe:
    """One `qwen serve` daemon. `start()` waits until it listens; `kill()` ends it at once (SIGKILL: a crash, not a
    shutdown); `start()` again brings it back on the same port."""

    def __init__(self, entry: Path, workspace: Path, home: Path, model_url: str, *, token: str | None = None,
                 tls: tuple[Path, Path] | None = None, extra_args: tuple[str, ...] = ()) -> None:
        self.entry, self.workspace, self.home, self.model_url = entry, workspace, home, model_url
        self.token, self.tls, self.extra_args = token, tls, extra_args
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.log_path = home / "qwen-serve.log"
        write_settings(home)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/acp"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_", "DASHSCOPE_"))}
        env.update(HOME=str(self.home), OPENAI_BASE_URL=self.model_url, OPENAI_API_KEY="sk-stub-key",
                   OPENAI_MODEL="qwen3-coder-plus", NO_COLOR="1", CI="1")
        if self.token:
            env["QWEN_SERVER_TOKEN"] = self.token  # from the environment, never on the command line
        return env

    def argv(self) -> list[str]:
        argv = ["node", str(self.entry), "serve", "--hostname", "127.0.0.1", "--port", str(self.port), "--no-web",
                "--workspace", str(self.workspace), *self.extra_args]
        if self.token:
            argv.append("--require-auth")
        if self.tls:
            argv += ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1])]
        return argv

    def start(self, timeout: float = 60.0) -> None:
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.argv(), cwd=self.workspace, env=self.env(), stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"qwen serve exited {self.process.returncode}: {self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"qwen serve did not listen within {timeout} s: {self.log_tail()}")

    def log_tail(self, chars: int = 2000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""

    def kill(self) -> None:
        """End the daemon and the agents it spawned (its process group) at once."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=10)
