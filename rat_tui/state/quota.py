"""Provides the quota meter's reading of `_meta.quota`: what the agent's account has used, per model.

Claude (claude-agent-acp 0.101) and Codex (codex-acp 2.6) put it on each prompt's answer in v1 and on the
turn's closing `state_update idle` in v2:

    "_meta": {"quota": {"token_count": {"totalTokens": 70, "inputTokens": 50, ...},      # this turn
                        "model_usage": [{"model": "gpt-5.5", "token_count": {"totalTokens": 140, ...}}]}}

`model_usage` counts each model's tokens so far; the meter shows their sum beside the context gauge. Any part
that is missing or of the wrong type is left out (a bad quota never fails the turn).
"""

from __future__ import annotations

from typing import Any

from ..protocol.sanitize import clean
from .models import Change, FieldChanged, SessionState


def _tokens(count: Any) -> int | None:
    if not isinstance(count, dict):
        return None
    total = count.get("totalTokens")
    if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
        return total
    return None


def read_quota(meta: Any) -> dict[str, Any] | None:
    """`{"turn": int | None, "total": int | None, "models": ((name, tokens), ...)}` from a `_meta`, or None."""
    quota = meta.get("quota") if isinstance(meta, dict) else None
    if not isinstance(quota, dict):
        return None
    models: list[tuple[str, int]] = []
    for item in quota.get("model_usage") if isinstance(quota.get("model_usage"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("model"), str) and (n := _tokens(item.get("token_count"))) is not None:
            models.append((clean(item["model"])[:60], n))
    turn = _tokens(quota.get("token_count"))
    total = sum(n for _, n in models) if models else None
    if turn is None and total is None:
        return None
    return {"turn": turn, "total": total, "models": tuple(models)}


def set_quota(state: SessionState, meta: Any) -> list[Change]:
    quota = read_quota(meta)
    if quota is None or quota == state.quota:
        return []
    state.quota = quota
    return [FieldChanged("usage")]


def tokens_words(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def quota_words(quota: dict[str, Any] | None) -> str:
    """`quota 12.3k tok (gpt-5.5)`: the tokens counted so far, the model when there is one."""
    if not quota:
        return ""
    total = quota.get("total") if quota.get("total") is not None else quota.get("turn")
    if total is None:
        return ""
    models = quota.get("models") or ()
    which = f" ({models[0][0]})" if len(models) == 1 else (f" ({len(models)} models)" if models else "")
    return f"quota {tokens_words(total)} tok{which}"
