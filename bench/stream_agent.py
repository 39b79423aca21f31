"""A minimal ACP agent that answers every prompt with N markdown chunks as fast as it can.

Usage: python bench/stream_agent.py N. The last chunk carries END_MARKER so a client can tell
when the whole answer is on screen. Stdlib only: the agent must not be the bottleneck.
"""

import json
import sys

END_MARKER = "END-OF-STREAM-7f3a"
PIECES = [
    "## Section {i}\n\n",
    "This is paragraph {i} with some *emphasis*, ",
    "a `code span` and a [link](https://example.com/{i}). ",
    "It keeps going for a while.\n\n",
    "- item one of list {i}\n",
    "- item two with **bold** text\n",
    "- item three\n\n",
    "```python\n",
    "def f{i}(x):\n",
    "    return x * {i}\n",
    "```\n\n",
]


def chunks(n: int):
    for i in range(n - 1):
        yield PIECES[i % len(PIECES)].format(i=i // len(PIECES))
    yield f"\n\nThe end {END_MARKER}\n"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    out = sys.stdout
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "stream-bench"}}
        elif method == "session/new":
            result = {"sessionId": "bench"}
        elif method == "session/prompt":
            batch = []
            for text in chunks(n):
                update = {"sessionUpdate": "agent_message_chunk", "messageId": "m1",
                          "content": {"type": "text", "text": text}}
                batch.append(json.dumps({"jsonrpc": "2.0", "method": "session/update",
                                         "params": {"sessionId": "bench", "update": update}}))
                if len(batch) >= 200:
                    out.write("\n".join(batch) + "\n")
                    out.flush()
                    batch = []
            if batch:
                out.write("\n".join(batch) + "\n")
            result = {"stopReason": "end_turn"}
        elif mid is None:
            continue
        else:
            out.write(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}) + "\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
