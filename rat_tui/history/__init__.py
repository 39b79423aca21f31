"""Durable local history: every raw message of every session, drafts and settings (no Textual).

`journal` is the SQLite store, `records` the portable JSONL file format (our exports, `--rpc-log`
files and recorded agent traces), `rebuild` turns recorded messages back into a SessionStore,
`markdown` exports a rebuilt session, and `replay` plays a recording into the UI without an agent.
"""
