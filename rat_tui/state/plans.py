"""Provides plan operations: `plan_update` (one plan by planId, replaced whole) and `plan_removed`. No I/O.

Several plans live side by side in `SessionState.plans`, in the order first seen; the legacy `plan`
update keeps its own single checklist in `SessionState.plan`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .models import Change, FieldChanged, PlanDocument, PlanItem, SessionState

if TYPE_CHECKING:
    from ..protocol.updates import PlanRemoved, PlanUpdate


def plan_update(state: SessionState, update: PlanUpdate) -> list[Change]:
    items = tuple(PlanItem(e.content, e.priority, e.status) for e in update.entries)
    state.plans[update.plan_id] = PlanDocument(update.plan_id, update.kind, items, update.markdown, update.uri)
    return [FieldChanged("plan")]


def plan_removed(state: SessionState, update: PlanRemoved) -> list[Change]:
    if state.plans.pop(update.plan_id, None) is None:
        return []
    return [FieldChanged("plan")]
