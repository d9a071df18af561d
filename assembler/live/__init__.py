"""Watching a run and running it again: the incremental `Assembler`, `ctxasm watch`, and
`ctxasm explain` (every candidate a run considered and what became of it).

`assembler.live.explain` and `assembler.live.side_by_side` are the functions the docs name,
not their modules: importing them here binds the package's names to the functions (the
modules stay importable by their full names: `from assembler.live.explain import Trace`).
"""

from .explain import explain
from .side_by_side import side_by_side

__all__ = ["explain", "side_by_side"]
