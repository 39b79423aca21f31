"""Only rat_tui/ui/textual_ext/ touches Textual's privates: no class outside it overrides, calls, reads or sets an
underscore name a Textual class defines, and no module outside it imports a `textual._*` module (ruff's TID251
says the same at lint time; this also sees what ruff cannot: an override, `self._x` of a Textual base,
`getattr(app, "_driver")`)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

from tests.helpers.fence import breaches_in, outside_files

# Textual hooks its own documentation shows overriding, which a class outside textual_ext may override and call.
DOCUMENTED_HOOKS = {
    # The TextArea guide ("Customizing keys"... `class ExtendedTextArea(TextArea): def _on_key(...)`) overrides it
    # to change what a key types: PromptComposer's Enter, history and menu keys.
    "TextArea._on_key": "rat_tui/ui/widgets/prompt.py",
}


def test_nothing_outside_textual_ext_touches_textual_privates() -> None:
    breaches = [str(b) for path in outside_files() for b in breaches_in(path, frozenset(DOCUMENTED_HOOKS))]
    assert breaches == [], (
        "Textual internals live in rat_tui/ui/textual_ext/: move these there behind a public name (and list them in"
        " its __init__ docstring):\n" + "\n".join(breaches))


def test_each_documented_hook_is_still_used_where_it_says() -> None:
    """The allow-list stays short: a hook no longer overridden where it says is dropped from it."""
    for hook, where in DOCUMENTED_HOOKS.items():
        path = Path(__file__).resolve().parents[2] / where
        assert hook.split(".")[1] in path.read_text(), f"{hook} is no longer used in {where}: drop it"


def load_module(tmp_path: Path, source: str):
    path = tmp_path / "fence_sample.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location("fence_sample", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fence_sample"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["fence_sample"]
    return path, module


def test_the_fence_sees_each_kind_of_breach(tmp_path: Path) -> None:
    path, module = load_module(tmp_path, """
        import textual._compositor
        from textual.screen import Screen
        from textual.widgets import TextArea
        from textual.widgets._toast import ToastRack

        class Resumed(Screen):
            _own = 1  # rat's own name: not Textual's

            def _on_screen_resume(self, event):
                self._own = 2
                super()._on_screen_resume(event)

            def frame(self):
                return self._dirty_widgets

        class Typed(TextArea):
            async def _on_key(self, event):
                await super()._on_key(event)

        def driver(app):
            return getattr(app, "_driver", None)

        def stack(app):
            return app._screen_stacks
        """)
    found = [b.what for b in breaches_in(path, frozenset(DOCUMENTED_HOOKS), module)]
    assert found == [
        "imports Textual internals (textual._compositor)",
        "imports Textual internals (textual.widgets._toast)",
        "Resumed overrides Screen._on_screen_resume",
        "Resumed uses Screen._on_screen_resume",
        "Resumed uses Screen._dirty_widgets",
        "getattr() of Textual's _driver by its name",
        "reads Textual's _screen_stacks",
    ]


def test_a_mixin_of_a_textual_class_is_held_to_that_class(tmp_path: Path) -> None:
    """A rat mixin mixed into a Textual class (as StyledOnce into screens) overrides that class's names."""
    path, module = load_module(tmp_path, """
        from textual.screen import Screen

        class Extended:
            def _extend_compose(self, widgets):
                super()._extend_compose(widgets)

        class Shown(Extended, Screen):
            pass
        """)
    found = [b.what for b in breaches_in(path, frozenset(), module)]
    assert found == ["Extended overrides Screen._extend_compose", "Extended uses Screen._extend_compose"]
