"""Provides McpServersScreen: the session's MCP servers, each with its transport and whether it was sent (Alt+M)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ...session.agent_session import AgentSession
from ...session.mcp_servers import McpServerRow, target
from .dialog import Dialog


def summary_rows(session: AgentSession) -> tuple[list[McpServerRow], str]:
    """The rows to show and a line about them; before `initialize` answers, the configured servers as pending."""
    if session.hello is not None or session.mcp_report:
        sent = sum(row.sent for row in session.mcp_report)
        return session.mcp_report, f"{sent} of {len(session.mcp_report)} sent to {session.state.agent_name}."
    rows = [McpServerRow(s.name, s.type, target(s), False, "not sent yet") for s in session.mcp_config]
    return rows, "The agent is starting: nothing has been sent yet."


class McpServersScreen(Dialog[None]):
    """Read-only: servers are configured in config.toml (`[[mcp_servers]]`, `[[agents.NAME.mcp_servers]]`)."""

    DEFAULT_CSS = """
    McpServersScreen > #dialog {
        width: 90%;
        max-width: 120;
        height: auto;
        max-height: 90%;
        padding: 0 1;
        border: round $accent;
        background: $surface;
    }
    McpServersScreen #header { color: $accent; text-style: bold; }
    McpServersScreen #summary, McpServersScreen #hint { color: $text-muted; }
    McpServersScreen #table { height: auto; margin: 1 0; }
    """

    BINDINGS = [Binding("escape,q", "close", "Close", id="mcp_servers.close")]

    def __init__(self, session: AgentSession) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        rows, summary = summary_rows(self.session)
        with Vertical(id="dialog"):
            yield Static(Text("MCP servers of this session"), id="header")
            yield Static(Text(summary if rows else "No MCP servers are configured."), id="summary")
            with VerticalScroll(id="table", can_focus=False):
                yield Static(self._table(rows) if rows else Text(
                    "Add [[mcp_servers]] (every agent) or [[agents.NAME.mcp_servers]] to config.toml; "
                    "see config.example.toml."))
            yield Static("Esc close", id="hint")

    def _table(self, rows: list[McpServerRow]) -> Table:
        colours = self.app.theme_variables
        table = Table(box=None, expand=True, pad_edge=False, header_style="bold")
        table.add_column("name", no_wrap=True)
        table.add_column("transport", no_wrap=True)
        table.add_column("command / url", overflow="fold", ratio=1)
        table.add_column("status", ratio=1)
        for row in rows:
            if row.sent:
                status = Text("✓ sent", style=colours.get("text-success", ""))
            else:
                status = Text(f"✗ skipped: {row.why}" if row.why != "not sent yet" else "… not sent yet",
                              style=colours.get("text-warning", "") if row.warn else "dim")
            table.add_row(Text(row.name), Text(row.transport), Text(row.target, style="dim"), status)
        return table

    def action_close(self) -> None:
        self.dismiss(None)
