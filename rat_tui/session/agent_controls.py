"""Provides the session controls agents offer beyond prompts, each only when the agent advertises it.

- `session/set_title` (`sessionCapabilities.title`): rename the session; the agent's stored title wins.
- `session/fork` (`sessionCapabilities.fork`): a new agent-side session from this one's context; the
  app opens it in a new tab that reattaches to it (session/load or session/resume). It starts with this
  session's config values (`configOptions`, controls.initial_values) where the agent takes initial values.
- steering (`_meta.steering.supported: true` in the initialize result, codex-acp 2.x): the request
  `_session/steering {sessionId, prompt, _meta.steering.idleBehavior: "promptRequired"}` puts a
  prompt into the running turn without cancelling it. Its answer `outcome` is "injected", or
  "promptRequired" when no turn was running any more (the caller then sends it as a prompt), or
  "startedNewTurn" from adapters that ignore idleBehavior. The call is codex-acp's own extension
  (src/AcpExtensions.ts SESSION_STEERING_METHOD, CodexAcpServer.performSteeringRequest).

Every call returns a result or a message for the user; none raises into the UI.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ..protocol.router import ConnectionClosed, RpcError
from ..state.steering import add_steered_message
from .controls import initial_values

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.controls")

STEERING_METHOD = "_session/steering"
REQUEST_TIMEOUT = 30.0


def supports(session: AgentSession, feature: str) -> bool:
    """title, fork or steering, as the agent's initialize answer advertised them."""
    hello = session.hello
    if hello is None or session.client is None or session.session_id is None:
        return False
    if feature == "steering":
        meta = hello.raw.get("_meta") if isinstance(hello.raw, dict) else None
        steering = meta.get("steering") if isinstance(meta, dict) else None
        return isinstance(steering, dict) and steering.get("supported") is True
    caps = hello.capabilities.get("sessionCapabilities")
    return isinstance(caps, dict) and isinstance(caps.get(feature), dict)


async def _request(session: AgentSession, method: str, params: dict[str, Any]) -> tuple[Any, str | None]:
    assert session.client is not None
    try:
        result = await asyncio.wait_for(session.client.connection.request(method, params), REQUEST_TIMEOUT)
    except RpcError as error:
        return None, f"The agent refused {method}: {error}"
    except (ConnectionClosed, asyncio.TimeoutError):
        return None, f"The agent did not answer {method}."
    return (result if isinstance(result, dict) else {}), None


async def set_title(session: AgentSession, title: str) -> str | None:
    """Rename the session; None on success (the title the agent stored is shown), else why not."""
    title = " ".join(title.split())
    if not title:
        return "A title cannot be empty."
    if not supports(session, "title"):
        return "This agent cannot rename its sessions."
    result, problem = await _request(session, "session/set_title", {"sessionId": session.session_id, "title": title})
    if problem is not None:
        return problem
    stored = result.get("title") if isinstance(result.get("title"), str) and result.get("title") else title
    session.store.apply_update({"sessionUpdate": "session_info_update", "title": stored})
    return None


async def fork(session: AgentSession) -> tuple[str | None, str | None]:
    """(the forked session's id, None) or (None, why not)."""
    if not supports(session, "fork"):
        return None, "This agent cannot fork sessions."
    if not (session.supports("load") or session.supports("resume")):
        return None, "This agent can fork but not reopen a session in a new tab (no session/load or session/resume)."
    assert session.client is not None
    params = {"sessionId": session.session_id, "cwd": str(session.cwd), "mcpServers": session.mcp_servers,
              **session.client.session_extras}
    values = initial_values(session.state) if supports(session, "options") else []
    if values:
        params["configOptions"] = values
    result, problem = await _request(session, "session/fork", params)
    if problem is not None:
        return None, problem
    forked = result.get("sessionId")
    if not isinstance(forked, str) or not forked:
        return None, "The agent's session/fork answer has no sessionId."
    return forked, None


async def steer(session: AgentSession, text: str) -> tuple[str, str | None]:
    """Put `text` into the running turn: ("injected" | "prompt" | "started", None) or ("", why not).

    "prompt": no turn was running; the caller sends (or queues) it as an ordinary prompt."""
    if not supports(session, "steering"):
        return "", "This agent does not take steering."
    params = {"sessionId": session.session_id, "prompt": [{"type": "text", "text": text}],
              "_meta": {"steering": {"idleBehavior": "promptRequired"}}}
    result, problem = await _request(session, STEERING_METHOD, params)
    if problem is not None:
        return "", problem
    outcome = result.get("outcome")
    if outcome == "promptRequired":
        return "prompt", None
    session.store.dispatch(add_steered_message, text)
    return ("injected" if outcome == "injected" else "started"), None
