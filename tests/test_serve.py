"""`rat serve`: the app in a real headless browser (Chromium over its DevTools protocol), the token check
beyond localhost, and the command line."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rat_tui.cli import parse_args
from rat_tui.serve import ServeOptions, app_command, browse_url, is_loopback


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """`rat serve` as a real process (its own process group: it starts one `rat` per page load)."""

    def __init__(self, tmp_path: Path, host: str) -> None:
        self.port = _free_port()
        self.output = tmp_path / "serve.out"
        (tmp_path / "README.md").write_text("# A project\n")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rat_tui", "serve", "--host", host, "--port", str(self.port), "--cwd", str(tmp_path)],
            stdout=self.output.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = self.output.read_text()
            if "rat serve: open " in text and self._listening():
                url = text.split("rat serve: open ", 1)[1].split()[0]
                return url.replace(url.split("//", 1)[1].split(":", 1)[0], "127.0.0.1", 1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"rat serve did not start:\n{self.output.read_text()}")

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def _status(url: str, cookie: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as error:
        return error.code, ""


# -- the command line and the helpers ---------------------------------------------------------------------------


def test_rat_serve_is_parsed_with_local_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = parse_args(["serve"])
    assert args.serve == ("127.0.0.1", 8000) and args.cwd == tmp_path and args.replay is None
    args = parse_args(["serve", "--host", "0.0.0.0", "--port", "9001", "--agent", "x", "--", "my-agent", "--acp"])
    assert args.serve == ("0.0.0.0", 9001) and args.agent == "x" and args.command == ["my-agent", "--acp"]
    assert parse_args(["--", "serve"]).serve is None  # an agent called `serve`


@pytest.mark.parametrize("argv", [["serve", "--port", "99999"], ["serve", "--port", "x"], ["serve", "--"],
                                  ["serve", "--cwd", "/no/such/dir"]])
def test_bad_serve_arguments_exit_with_a_message(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(argv)
    assert exit_info.value.code == 2
    assert "rat serve" in capsys.readouterr().err


def test_the_served_command_is_this_rat_with_the_same_choices(tmp_path: Path) -> None:
    options = ServeOptions(host="127.0.0.1", port=1, cwd=tmp_path / "a b", config=tmp_path / "c.toml", agent="g",
                           command=("my agent", "--x"), protocol=2)
    command = app_command(options)
    assert "--protocol 2 --" in command
    assert command.startswith(f"{sys.executable} -m rat_tui --cwd ")
    assert f"'{tmp_path / 'a b'}'" in command and "--agent g" in command and command.endswith("-- 'my agent' --x")
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.org")
    assert browse_url(options, None) == "http://127.0.0.1:1/"
    assert browse_url(ServeOptions(host="::1", port=2, cwd=tmp_path), "t") == "http://[::1]:2/?token=t"


def test_an_unknown_agent_is_refused_before_serving(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "rat_tui", "serve", "--agent", "no-such-agent", "--port", "1"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 2 and "unknown agent 'no-such-agent'" in result.stderr


# -- real servers ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_beyond_localhost_every_request_needs_the_token(tmp_path: Path) -> None:
    served = Served(tmp_path, "0.0.0.0")
    try:
        output = served.output.read_text()
        assert "WARNING" in output and "beyond this machine" in output and "?token=" in served.url
        base, token = served.url.split("?token=")
        assert _status(base)[0] == 403
        assert _status(base + "?token=wrong")[0] == 403
        assert _status(base + "static/js/textual.js")[0] == 403
        status, cookie = _status(served.url)
        assert status == 200 and "rat_serve_token=" in cookie and "HttpOnly" in cookie
        assert _status(base + "static/js/textual.js", cookie.split(";")[0])[0] == 200
    finally:
        served.stop()


@pytest.mark.slow
def test_on_localhost_no_token_is_asked(tmp_path: Path) -> None:
    served = Served(tmp_path, "127.0.0.1")
    try:
        assert "WARNING" not in served.output.read_text() and "token" not in served.url
        assert _status(served.url)[0] == 200
    finally:
        served.stop()


# -- a real browser -------------------------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


class DevTools:
    """A minimal client of Chromium's DevTools protocol over one page target's websocket."""

    def __init__(self, websocket_url: str) -> None:
        from websockets.sync.client import connect

        self.stack = contextlib.ExitStack()
        self.socket = self.stack.enter_context(connect(websocket_url, max_size=None, open_timeout=20))
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        call_id = next(self.ids)
        self.socket.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=30))
            if message.get("id") == call_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def pump(self, timeout: float) -> None:
        """Read events for up to `timeout` seconds."""
        try:
            self.events.append(json.loads(self.socket.recv(timeout=timeout)))
        except TimeoutError:
            pass

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def close(self) -> None:
        self.stack.close()


# The page keeps its xterm.js Terminal in a closure; the test serves the page's own script with one
# line added that hands it to the test, which then reads what the terminal shows from its buffer.
_OPEN = "this.terminal.open(e)"
_SCREEN = """(() => { const t = window.ratTerminal; if (!t) return "";
  const b = t.buffer.active, rows = [];
  for (let i = 0; i < b.length; i++) { const l = b.getLine(i); rows.push(l ? l.translateToString(true) : ""); }
  return rows.join("\\n"); })()"""


class Browser:
    def __init__(self, executable: str, profile: Path) -> None:
        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--remote-debugging-port=0",
             # The page asks a font from the web: nothing leaves the machine in a test.
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1200,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            pages = [t for t in json.load(response) if t["type"] == "page"]
        self.tools = DevTools(pages[0]["webSocketDebuggerUrl"])

    def open_with_terminal_exposed(self, url: str) -> None:
        tools = self.tools
        tools.call("Fetch.enable", patterns=[{"urlPattern": "*textual.js*", "requestStage": "Response"}])
        tools.call("Page.enable")
        tools.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            paused = next((e for e in tools.events if e.get("method") == "Fetch.requestPaused"), None)
            if paused is None:
                tools.pump(0.5)
                continue
            tools.events.remove(paused)
            request_id = paused["params"]["requestId"]
            body = tools.call("Fetch.getResponseBody", requestId=request_id)
            script = base64.b64decode(body["body"]).decode() if body["base64Encoded"] else body["body"]
            assert _OPEN in script, "textual-serve's page script changed: the test cannot find its terminal"
            script = script.replace(_OPEN, _OPEN + ",window.ratTerminal=this.terminal", 1)
            tools.call("Fetch.fulfillRequest", requestId=request_id, responseCode=200,
                       responseHeaders=[{"name": "Content-Type", "value": "application/javascript"}],
                       body=base64.b64encode(script.encode()).decode())
            tools.call("Fetch.disable")
            return
        raise AssertionError("the page never asked for its script")

    def screen(self) -> str:
        return self.tools.evaluate(_SCREEN) or ""

    def wait_for(self, text: str, timeout: float = 40.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared in the browser's terminal; it showed:\n{screen}")

    def type(self, text: str) -> None:
        self.tools.evaluate("window.ratTerminal.focus()")
        for char in text:  # one key at a time, as a person types
            self.tools.call("Input.insertText", text=char)

    def click(self, x: int, y: int) -> None:
        """A left click at (x, y) CSS pixels of the page, as a person clicks into the terminal."""
        for kind in ("mousePressed", "mouseReleased"):
            self.tools.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.tools.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                            windowsVirtualKeyCode=13, nativeVirtualKeyCode=13, **({"text": "\r"} if kind == "keyDown"
                                                                                   else {}))

    def close(self) -> None:
        try:
            self.tools.close()
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.mark.slow
def test_a_browser_chats_with_the_demo_agent_through_rat_serve(tmp_path: Path) -> None:
    executable = _chromium()
    if executable is None:
        pytest.skip("no chromium on this machine (.ci/run installs Debian's `chromium`; apt-get install chromium)")
    pytest.importorskip("websockets", reason="the DevTools client needs the websockets package (the test extra)")
    served = Served(tmp_path, "0.0.0.0")  # beyond localhost: the page, its script and its websocket need the token
    profile = Path(tempfile.mkdtemp(prefix="rat-chromium-", dir=tmp_path))
    browser = None
    try:
        browser = Browser(executable, profile)
        browser.open_with_terminal_exposed(served.url)
        screen = browser.wait_for("ready")
        assert "Demo agent" in screen
        browser.click(200, 80)  # into the transcript: its letters must not run (p: the previous block)
        browser.type("please say hello from a browser")
        browser.wait_for("please say hello from a browser")
        browser.enter()
        browser.wait_for("def greet")  # the demo's answer, drawn by xterm.js in the page
    finally:
        if browser is not None:
            browser.close()
        served.stop()


def test_a_taken_port_is_said_plainly(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "rat_tui", "serve", "--port", str(port), "--cwd", str(tmp_path)],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"rat serve: cannot listen on 127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr
