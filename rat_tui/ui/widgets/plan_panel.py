"""Provides PlanPanel: the agent's plans (the legacy one and those of `plan_update`), re-rendered whole on change."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from ...state.models import PlanDocument, PlanItem
from ..textual_ext.keys import bindings_of

STATUS_MARKS = {"pending": "○", "in_progress": "◐", "completed": "●"}
PRIORITY_LABELS = {"high": "high", "medium": "med", "low": "low"}


WHOLE = 10  # a plan of up to this many entries is shown whole (the panel has 11 lines below its border)
WINDOW = 8  # else this many entries around the first one not completed, with a line for those left out


class PlanPanel(Static):
    """The plan, re-rendered when it changes (replace semantics). A long plan (an agent may send 1,000
    entries) is drawn as a window around the work in progress, so an update costs the window, not the plan.

    It folds to one line (`Plan ✓ 7/7 done · f2 shows it`) when every entry is done, and when it is the
    plan of an earlier turn: a turn whose agent starts answering (text, a thought, a tool call) without
    sending a plan first has left it behind. Folded rather than cleared: the plan is drawn nowhere else,
    and one line keeps it a key away while giving the transcript its space back. The key (F2) unfolds it
    until the plan changes; a new plan shows unfolded.
    """

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
        self._shown: tuple[int, int | None] = (0, None)  # (content width, content height) last shown (_show)
        self.stale = False  # the plan of an earlier turn
        self.unfolded = False  # folded, then unfolded with the key: stays so until the plan changes
        self._turn_without_plan = False  # a turn started and no plan came yet

    # -- turns (SessionView calls these in the order of the store's changes) --------------------

    def plan_changed(self) -> None:
        """A plan update arrived: it is this turn's, shown unfolded unless all done."""
        self.stale = self.unfolded = self._turn_without_plan = False

    def turn_started(self) -> None:
        self._turn_without_plan = True

    def agent_answered(self) -> bool:
        """The agent's first text, thought or tool call of a turn: with no plan sent before it, the plan
        shown is an earlier turn's. True when that folded the panel."""
        if not self._turn_without_plan:
            return False
        self._turn_without_plan = False
        if self.stale or (not self.items and not self.plans):
            return False
        self.stale, self.unfolded = True, False
        return True

    @property
    def folded(self) -> bool:
        return (self.stale or self._all_done()) and not self.unfolded

    def unfold(self) -> bool:
        """Show a folded plan whole (its key, a click); False when it is not folded."""
        if not self.folded:
            return False
        self.unfolded = True
        self.show_plan(self.items, self.plans)
        return True

    def on_click(self) -> None:
        self.unfold()

    def _all_done(self) -> bool:
        checklists = [self.items] if self.items else []
        for plan in self.plans.values():
            if plan.kind != "items":
                return False  # a document has no state to be done
            checklists.append(plan.items)
        return bool(checklists) and all(item.status == "completed" for items in checklists for item in items)

    def _counts(self) -> tuple[int, int]:
        items = [*self.items, *(item for plan in self.plans.values() for item in plan.items)]
        return sum(1 for item in items if item.status == "completed"), len(items)

    def _key(self) -> str:
        """The key that toggles the plan, as the keymap has it."""
        for node in self.ancestors:
            for _key, binding in bindings_of(node):
                if binding.action == "toggle_plan":
                    return self.app.get_key_display(binding)
        return "F2"

    def _summary(self) -> Text:
        done, total = self._counts()
        title = self.get_component_rich_style("plan-panel--title")
        line = Text("Plan", style=title)
        if self.stale:
            line.append(" of an earlier turn", style=title)
        if total:
            mark = "✓" if done == total else STATUS_MARKS["in_progress"]
            line.append(f" {mark} {done}/{total} done")
        line.append(f" · {self._key()} shows it", style="dim")
        return line

    def show_plan(self, items: tuple[PlanItem, ...], plans: Mapping[str, PlanDocument] | None = None) -> None:
        """The legacy `plan` checklist, then every plan of `plan_update` (checklist, Markdown or file)."""
        self.items = items
        self.plans = dict(plans or {})
        empty = not items and not self.plans
        self.set_class(empty, "-empty")
        if empty:
            self._show("")
            return
        folded = self.folded
        self.set_class(folded, "-folded")
        if folded:
            self._show(self._summary())
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
                from .markdown_lists import MarkdownWithLists  # Rich's markdown: not before the first frame

                if plan.uri:  # its file (`path`, schema 1.34)
                    lines.append(Text(f"📄 {plan.uri}", style="dim"))
                lines.append(MarkdownWithLists(plan.markdown))
            else:
                lines.append(Text(title, style=self.get_component_rich_style("plan-panel--title")))
                lines.append(Text(f"📄 {plan.uri}", style="dim"))
        self._show(Group(*lines))

    def _show(self, content: RenderableType) -> None:
        """`update`, laying the screen out again only when the panel's height may change: a status changing
        in the one-line summary, or in a checklist, laid out the whole screen each time (30 ms; 98 times
        in the `session/load` replay of bench/stress.py load50000). Hidden (no plan, or F2), it lays out
        nothing: showing it again lays the screen out anyway."""
        self.update(content, layout=False)
        if not self.display:
            self._shown = (0, None)  # measured again once shown
            return
        width = self.content_size.width
        height = self.get_content_height(self.size, self.app.size, width) if width > 0 else None
        shown, self._shown = self._shown, (width, height)
        if height is None or shown != (width, height):
            self.refresh(layout=True)

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
        """Hide or show the panel; a plan unfolded with the key folds again once hidden."""
        self.toggle_class("-hidden")
        if self.has_class("-hidden") and self.unfolded:
            self.unfolded = False
            self.show_plan(self.items, self.plans)

    @property
    def plain_text(self) -> str:
        lines = [f"{STATUS_MARKS.get(i.status, '?')} {i.content} [{i.priority}]" for i in self.items]
        for plan in self.plans.values():
            lines.append(f"Plan {plan.plan_id}")
            lines += [f"{STATUS_MARKS.get(i.status, '?')} {i.content} [{i.priority}]" for i in plan.items]
            lines += plan.markdown.splitlines() + ([f"📄 {plan.uri}"] if plan.uri else [])
        return "\n".join(lines)
