"""rat's extensions of Textual: the only package that touches Textual's privates.

Everything that imports a `textual._*` module, reads or sets an underscore name a Textual class defines, or
overrides a Textual underscore method lives here, behind public names the rest of the UI uses. The fence is
held by ruff (`SLF001`, `TID251`: pyproject.toml) and by tests/textual_ext/test_fence.py;
tests/textual_ext/test_internals.py checks that every name listed below still exists in the installed Textual,
that every method overridden here keeps the signature it was checked with, and that the methods copied or
rewritten here are unchanged in Textual. On a Textual upgrade, re-check what it names.

- `frames` — `FrameScheduler` (whether a frame is drawn now) and `FramesMixin` (the app's frame methods).
- `screens` — `FramedScreen` (the main screen's timer hold and resume), `DrawGate` (a frame asked for first).
- `driver` — the input-first driver wrapper and `OutputWatch` (tells `rat_tui.priority`).
- `keys` — `alt_digits_as_keys`, the binding walks, the tab relabel.
- `toasts` — `post_toast`, `live_toasts`, `withdraw_toast`: toasts taken down when their news is stale.
- `band_compositor`, `line_memo` (with `LeanScrollBar`), `styled_once`, `css_ahead`, `dismiss_once`, `widgets`.

Checked against Textual 8.2.8.

Private names used, by module (`*`: a method overridden here; `copied`: its body copied or rewritten here):

band_compositor:
- `textual._compositor.Compositor`
- `textual._compositor.ChopsUpdate`
- `textual._compositor.Compositor._get_renders` *
- `textual._compositor.Compositor._dirty_regions`
- `textual._compositor.Compositor._regions_to_spans`
- `textual._compositor.Compositor._render_chops`
css_ahead:
- `textual.dom.DOMNode._get_default_css`
- `textual.dom.DOMNode._css_bases`
- `textual.dom.DOMNode._node_bases`
- `textual.css.stylesheet.Stylesheet._variables`
- `textual.css.stylesheet.Stylesheet._parse_cache`
- `textual.css.stylesheet.Stylesheet._parse_rules`
dismiss_once:
- `textual.app.App._screen_stacks`
- `textual.app.App._replace_screen`
- `textual.screen.Screen._result_callbacks`
- `textual.screen.Screen._pop_result_callback`
driver:
- `textual.driver.Driver._app`
- `textual.drivers.linux_driver.LinuxDriver._file`
- `textual.app.App._driver`
frames:
- `textual.app.App._batch_count`
- `textual.app.App._display` *
- `textual.app.App._prune` *
- `textual.app.App._handle_exception` *
- `textual.await_remove.AwaitRemove._post_remove`
- `textual.message.Message._stop_propagation`
- `textual.widget.Widget._check_refresh`
- `textual.screen.Screen._dirty_widgets`
- `textual.screen.Screen._layout_required`
- `textual.screen.Screen._repaint_required`
- `textual.screen.Screen._on_timer_update`
keys:
- `textual._ansi_sequences.ANSI_SEQUENCES_KEYS`
- `textual.dom.DOMNode._bindings`
- `textual.screen.Screen._modal_binding_chain`
- `textual.app.App._keymap`
- `textual.widgets._tabs.Tab._label`
line_memo:
- `textual._styles_cache.StylesCache`
- `textual.widget._RenderCache`
- `textual.widget.Widget._render_content` * copied
- `textual.widget.Widget._render_cache`
- `textual.widget.Widget._dirty_regions`
- `textual.widget.Widget._styles_cache`
- `textual.widget.Widget._vertical_scrollbar`
- `textual.app.App._start_widget`
screens:
- `textual.screen.Screen._compositor`
- `textual.screen.Screen._dirty_widgets`
- `textual.screen.Screen._repaint_required`
- `textual.screen.Screen._on_update` *
- `textual.screen.Screen._on_screen_resume` * copied
- `textual.screen.Screen._on_timer_update` *
- `textual.screen.Screen._compositor_refresh` *
- `textual.screen.Screen._update_auto_focus`
- `textual.screen.Screen._refresh_layout`
- `textual.app.App._refresh_notifications`
- `textual.widget.Widget._size`
styled_once:
- `textual.widgets._toast.ToastRack`
- `textual.screen.Screen._extend_compose` *
toasts:
- `textual.app.App._notifications`
- `textual.app.App._unnotify`
- `textual.app.App._refresh_notifications`
widgets:
- `textual.screen.Screen._extend_compose` *
- `textual.widgets._footer.Footer._bindings_ready`
- `textual.dom.DOMNode._get_default_css` *
- `textual.dom.DOMNode._pruning`
- `textual.message_pump.MessagePump._closing`
- `textual.scroll_view.ScrollView._size_updated` *
- `textual.widget.Widget._scroll_update` *
- `textual.widget.Widget._container_size`
- `textual.widget.Widget._size`
- `textual.widgets._text_area.TextArea._on_paste` *

Public methods rewritten here (their Textual bodies are checked too):
- `textual._compositor.Compositor.render_partial_update` * copied
- `textual._styles_cache.StylesCache.render_line` * copied
- `textual.widget.Widget.vertical_scrollbar` copied

Outside this package, one Textual hook is overridden because Textual's own documentation shows it:
`TextArea._on_key` (rat_tui/ui/widgets/prompt.py; the TextArea guide overrides it to change what a key types).
"""

TEXTUAL_VERSION = "8.2.8"
