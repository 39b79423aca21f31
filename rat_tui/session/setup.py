"""Provides SessionSetup: the system prompt and additional directories a session starts with.

Instructions come from three places, joined in this order with a blank line between them:
the global `system_prompt` config key, the profile's `[agents.NAME] system_prompt`, and the project's
own file `.rat/instructions.md` in the session's directory. They go out as `systemPrompt` on
`session/new`, `load`, `resume` and `fork` only when the agent advertises
`sessionCapabilities.systemPrompt`; in `append` mode (the agent's own prompt stays), or `override`
when the profile asks for it (`system_prompt_mode = "override"`) and the agent advertises
`systemPrompt.mode.override` too; otherwise append, said in a notice.

Additional directories (`--add-dir`, the `additional_directories` config keys, global and per profile)
always widen the file-access scope of the session (protocol/fs.py); they go out as
`additionalDirectories` only when the agent advertises `sessionCapabilities.additionalDirectories`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("rat.setup")

PROJECT_INSTRUCTIONS = Path(".rat") / "instructions.md"
MAX_INSTRUCTIONS = 256 * 1024  # a larger file is cut, with a notice


@dataclass
class SessionSetup:
    instructions: list[tuple[str, str]] = field(default_factory=list)  # (where from, text)
    mode: str = "append"
    directories: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def system_prompt_text(self) -> str:
        return "\n\n".join(text.strip() for _, text in self.instructions if text.strip())

    def params(self, capabilities: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The extra session-lifecycle params the agent advertised it takes, and notices for the rest."""
        session = capabilities.get("sessionCapabilities")
        session = session if isinstance(session, dict) else {}
        extra: dict[str, Any] = {}
        notes: list[str] = []
        text = self.system_prompt_text
        if text:
            prompt_caps = session.get("systemPrompt")
            sources = ", ".join(source for source, _ in self.instructions)
            if isinstance(prompt_caps, dict):
                mode_caps = prompt_caps.get("mode")
                can_override = isinstance(mode_caps, dict) and isinstance(mode_caps.get("override"), dict)
                mode = "append"
                if self.mode == "override":
                    if can_override:
                        mode = "override"
                    else:
                        notes.append("The agent cannot replace its system prompt: the instructions are appended to it.")
                extra["systemPrompt"] = {"mode": mode, "content": [{"type": "text", "text": text}]}
            else:
                notes.append(f"The agent takes no system prompt: the instructions ({sources}) were not sent.")
        if self.directories:
            if isinstance(session.get("additionalDirectories"), dict):
                extra["additionalDirectories"] = [str(d) for d in self.directories]
            else:
                log.info("the agent takes no additionalDirectories; they only widen rat's file access")
        return extra, notes


def _expand(path: str, base: Path) -> Path:
    expanded = Path(os.path.expanduser(path))
    return Path(os.path.abspath(expanded if expanded.is_absolute() else base / expanded))


def session_setup(config: Any, command: Any, cwd: Path, add_dirs: Sequence[str] = ()) -> SessionSetup:
    """The setup of a session of `command` in `cwd` under `config` (rat_tui.config.Config)."""
    setup = SessionSetup()
    cwd = Path(os.path.abspath(cwd))
    global_prompt = getattr(config, "system_prompt", None)
    if isinstance(global_prompt, str) and global_prompt.strip():
        setup.instructions.append(("config system_prompt", global_prompt))
    profile_prompt = getattr(command, "system_prompt", None)
    if isinstance(profile_prompt, str) and profile_prompt.strip():
        setup.instructions.append((f"[agents.{getattr(command, 'name', '?')}] system_prompt", profile_prompt))
    setup.mode = getattr(command, "system_prompt_mode", None) or "append"
    project = cwd / PROJECT_INSTRUCTIONS
    if project.is_file():
        try:
            text = project.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            setup.problems.append(f"{project} could not be read: {error.strerror or error}")
        else:
            if len(text) > MAX_INSTRUCTIONS:
                setup.problems.append(f"{project} is larger than {MAX_INSTRUCTIONS // 1024} KiB: only its start is sent.")
                text = text[:MAX_INSTRUCTIONS]
            setup.instructions.append((str(PROJECT_INSTRUCTIONS), text))
    dirs = [*add_dirs, *(getattr(config, "additional_directories", None) or ()),
            *(getattr(command, "additional_directories", None) or ())]
    for raw in dirs:
        path = _expand(str(raw), cwd)
        if not path.is_dir():
            setup.problems.append(f"Additional directory {path} does not exist: left out.")
        elif path != cwd and path not in setup.directories:
            setup.directories.append(path)
    return setup
