"""The walk Codex CLI and Gemini CLI share: from the project root down to cwd, nothing above
the root and nothing below cwd.

The project root is the nearest directory at or above cwd holding one of the root markers
(`.git`, a directory or a file, by default); with no marker found, or no markers at all, the
walk is cwd alone. The markers come from the client's own configuration, so each is checked
before it is joined to a directory (`usable_marker`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..discovery.disk import Disk

DEFAULT_MARKERS = (".git",)
MAX_MARKERS = 64  # markers looked for in each ancestor: a config file cannot make a walk slow
MAX_MARKER_CHARS = 255


def usable_marker(marker: str) -> bool:
    """A marker joined to a directory names an entry in it (Gemini CLI skips absolute markers
    and `..`; Codex does not, so a marker that escapes is refused here and reported)."""
    return (
        0 < len(marker) <= MAX_MARKER_CHARS
        and "\0" not in marker
        and not os.path.isabs(marker)
        and ".." not in marker.split("/")
    )


def marked_root(cwd: Path, markers: Sequence[str], disk: Disk) -> str | None:
    """The nearest directory at or above `cwd` holding one of `markers` (None: none does)."""
    wanted = [m for m in markers[:MAX_MARKERS] if usable_marker(m)]
    if not wanted:
        return None
    directory = str(cwd)
    while True:
        for marker in wanted:
            if disk.lexists(os.path.join(directory, marker)):
                return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def root_to_cwd(cwd: Path, root: str | None) -> list[str]:
    """The directories from `root` down to `cwd`, both included; cwd alone without a root."""
    if root is None:
        return [str(cwd)]
    out = []
    directory = str(cwd)
    while True:
        out.append(directory)
        if directory == root:
            return out[::-1]
        parent = os.path.dirname(directory)
        if parent == directory:  # `root` was not above cwd: the walk is cwd alone
            return [str(cwd)]
        directory = parent
