"""Provides PlanPanel: the agent's plans (the legacy one and those of `plan_update`), re-rendered whole on change."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from ...state.models import PlanDocument, PlanItem
from .markdown_lists import MarkdownWithLists as Markdown

STATUS_MARKS = {"pending": "○", "in_progress": "◐", "completed": "●"}
PRIORITY_LABELS = {"high": "high", "medium": "med", "low": "low"}


WHOLE = 10  # a plan of up to this many entries is shown whole (the panel has 11 lines below its border)
WINDOW = 8  # else this many entries around the first one not completed, with a line for those left out


class PlanPanel(Static):
    """The plan, re-rendered when it changes (replace semantics). A long plan (an agent may send 1,000
    entries) is drawn as a window around the work in progress, so an update costs the window, not the plan."""

    DEFAULT_CSS = """
    PlanPanel {
        height: auto;
        max-height: 12;
        padding: 0 1;
        border-top: solid $panel-lighten-2;
        background: $surface;
        overflow-y: auto;
    }
    PlanPanel.-empty {
        display: none;
    }
    PlanPanel.-hidden {
        display: none;
    }
    """
    COMPONENT_CLASSES = {
        "plan-panel--done",
        "plan-panel--active",
        "plan-panel--high",
        "plan-panel--title",
    }
    DEFAULT_CSS += """
    PlanPanel > .plan-panel--done { color: $text-muted; text-style: strike; }
    PlanPanel > .plan-panel--active { color: $accent; text-style: bold; }
    PlanPanel > .plan-panel--high { color: $warning; }
    PlanPanel > .plan-panel--title { text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-empty")
        self.items: tuple[PlanItem, ...] = ()
        self.plans: dict[str, PlanDocument] = {}

    def show_plan(self, items: tuple[PlanItem, ...], plans: Mapping[str, PlanDocument] | None = None) -> None:
        """The legacy `plan` checklist, then every plan of `plan_update` (checklist, Markdown or file)."""
        self.items = items
        self.plans = dict(plans or {})
        empty = not items and not self.plans
        self.set_class(empty, "-empty")
        if empty:
            self.update("")
            return
        lines: list[RenderableType] = []
        if items:
            lines += self._checklist("Plan", items)
        for plan in self.plans.values():
            title = f"Plan {plan.plan_id}"
            if plan.kind == "items":
                lines += self._checklist(title, plan.items)
            elif plan.kind == "markdown":
                lines.append(Text(title, style=self.get_component_rich_style("plan-panel--title")))
                lines.append(Markdown(plan.markdown))
            else:
                lines.append(Text(title, style=self.get_component_rich_style("plan-panel--title")))
                lines.append(Text(f"📄 {plan.uri}", style="dim"))
        self.update(Group(*lines))

    def _checklist(self, title: str, items: tuple[PlanItem, ...]) -> list[RenderableType]:
        done = sum(1 for item in items if item.status == "completed")
        lines: list[RenderableType] = [
            Text(f"{title} {done}/{len(items)}", style=self.get_component_rich_style("plan-panel--title"))
        ]
        start, shown = 0, items
        if len(items) > WHOLE:
            active = next((i for i, item in enumerate(items) if item.status != "completed"), len(items))
            start = max(0, min(active - 2, len(items) - WINDOW))
            shown = items[start : start + WINDOW]
            if start:
                lines.append(Text(f"… {start} earlier", style="dim"))
        for item in shown:
            line = Text()
            line.append(f"{STATUS_MARKS.get(item.status, '?')} ")
            style = ""
            if item.status == "completed":
                style = self.get_component_rich_style("plan-panel--done")
            elif item.status == "in_progress":
                style = self.get_component_rich_style("plan-panel--active")
            line.append(item.content, style=style)
            priority = PRIORITY_LABELS.get(item.priority, item.priority)
            high = self.get_component_rich_style("plan-panel--high") if item.priority == "high" else "dim"
            line.append(f"  [{priority}]", style=high)
            lines.append(line)
        later = len(items) - start - len(shown)
        if later:
            lines.append(Text(f"… {later} more", style="dim"))
        return lines

    def toggle(self) -> None:
        self.toggle_class("-hidden")

    @property
    def plain_text(self) -> str:
        lines = [f"{STATUS_MARKS.get(i.status, '?')} {i.content} [{i.priority}]" for i in self.items]
        for plan in self.plans.values():
            lines.append(f"Plan {plan.plan_id}")
            lines += [f"{STATUS_MARKS.get(i.status, '?')} {i.content} [{i.priority}]" for i in plan.items]
            lines += plan.markdown.splitlines() + ([f"📄 {plan.uri}"] if plan.uri else [])
        return "\n".join(lines)
