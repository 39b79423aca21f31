"""protocol/ and state/ (and the session driver) must not import Textual: they run without a UI."""

import subprocess
import sys

CORE_MODULES = [
    "rat_tui.protocol.transport",
    "rat_tui.protocol.router",
    "rat_tui.protocol.client",
    "rat_tui.protocol.rpc_log",
    "rat_tui.protocol.wire",
    "rat_tui.protocol.fs",
    "rat_tui.protocol.terminals",
    "rat_tui.state.permission_policy",
    "rat_tui.state.models",
    "rat_tui.state.reducer",
    "rat_tui.state.store",
    "rat_tui.session.agent_session",
    "rat_tui.history.journal",
    "rat_tui.history.records",
    "rat_tui.history.rebuild",
    "rat_tui.history.markdown",
    "rat_tui.session.replay",
    "rat_tui.session.elicitation_form",
    "rat_tui.session.elicitation_broker",
    "rat_tui.session.mcp_servers",
    "rat_tui.session.defaults",
    "rat_tui.session.opening",
    "rat_tui.session.login",
    "rat_tui.session.hang_watch",
    "rat_tui.session.prompting",
    "rat_tui.session.ui",
    "rat_tui.client_tools.settings",
    "rat_tui.client_tools.tools",
    # client_tools.server is left out: the mcp SDK itself imports rich (not Textual, not ours).
    "rat_tui.client_tools.acp_transport",
    "rat_tui.client_tools.bridge",
    "rat_tui.client_tools.hosting",
]


def test_core_does_not_import_textual() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {CORE_MODULES!r}: importlib.import_module(name)\n"
        "import rat_tui.protocol.wire as w; w.schema()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, f"core modules pulled in UI packages: {result.stdout}{result.stderr}"


def test_startup_does_not_import_the_mcp_sdk() -> None:
    """`mcp` costs about a second to import: only an agent connecting to rat-tui's own server pays it."""
    code = "import sys, rat_tui.app, rat_tui.cli; sys.exit(1 if 'mcp' in sys.modules or 'anyio' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_the_shim_uses_the_standard_library_only() -> None:
    """It starts once per agent session: no rat-tui or third-party imports beyond the package marker."""
    code = ("import sys; before = set(sys.modules); import rat_tui.client_tools.shim\n"
            "new = {m.split('.')[0] for m in set(sys.modules) - before} - {'rat_tui'}\n"
            "bad = sorted(m for m in new if m not in sys.stdlib_module_names)\n"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
