"""rat-tui's own MCP server: tools only the client can provide (ask_user, show_file, notify, sessions).

`settings` (config merged), `tools` (the tool definitions and the per-session host that runs them:
transcript cards, permission policy, the UI hooks), `server` (the official `mcp` SDK server run over
in-memory streams, imported lazily), `acp_transport` (MCP-over-ACP: mcp/connect|message|disconnect)
and `bridge` (a private Unix socket the stdio shim `rat_tui.client_tools.shim` relays to). No Textual.
"""
