"""What every client's lazy loading shares: the touched path as the agent reads it, and what
a touch attaches that the conversation does not hold yet.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from ..model import Layer, Source
from .context import Run
from .disk import Disk
from .loader import Loaded


def resolve_touched(path: str | os.PathLike[str], disk: Disk) -> Path:
    """A touched path made absolute (relative to the process's directory) and resolved
    (through the run's `Disk`: what it points to is part of the result)."""
    return Path(disk.realpath(os.path.abspath(path)))


def attached(found: list[Loaded], already: Collection[str], run: Run) -> tuple[Source, ...]:
    """What is new to this conversation, as subdirectory sources."""
    attached: list[Source] = []
    seen = set(already)
    tag = run.policy.tag_for(Layer.SUBDIRECTORY)
    for item in found:
        if item.source.path in seen:
            continue
        seen.add(item.source.path)
        attached.append(item.source._replace(layer=Layer.SUBDIRECTORY, tag=tag))
    return tuple(attached)
