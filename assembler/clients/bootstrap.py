"""The `bootstrap` client: the fixed workspace of the first seed article.

Each configured file (`soul.md`, `user.md`, `agent.md`, `memory/MEMORY.md` by default) becomes
one section, in the policy's order; a missing or unreadable file renders the policy's
`missing` text, exactly like the seed's `readWithLimit` (`'(file not found)'`). Nothing is
loaded lazily, no format of its own (the native xml is the seed's layout), and its files are
not looked for by whole-repository lint (a `soul.md` elsewhere is nobody's instructions).
"""

from __future__ import annotations

from pathlib import Path

from .. import codes
from ..discovery.context import Discovery, Run
from ..discovery.loader import Loader, text_source
from ..model import Reason, Source, Why
from .base import Client, FileRole

NAME = "bootstrap"


class Bootstrap(Client[None]):
    # Nothing loaded lazily (no `touch`), no format of its own: the native xml is the seed's.
    name = NAME
    title = "the bootstrap workspace"
    repository_agent = False  # a fixed workspace: `explain --policy all` leaves it out
    lint_codes = frozenset(code.code for code in codes.LINT_CODES)

    def discover(self, run: Run) -> Discovery[None]:
        loader = Loader(run)
        sources: list[Source] = []
        policy = run.policy
        for item in policy.workspace:
            path = str(run.context.cwd / item.path)
            processed = loader.read(path, "workspace file")
            if processed is None:
                loader.note(codes.WORKSPACE_MISSING, path, f"renders as {policy.missing_text!r}")
                raw = content = policy.missing_text
            else:
                loader.note_if_outside(path, "workspace file")
                raw = processed.text
                content = raw.strip()
            reason = Reason(Why.WORKSPACE, f"workspace file {item.path}")
            source = text_source(
                item.layer, path, item.path, reason, content, item.tag, run.counter,
                raw=raw, is_index=item.is_index,
            )  # fmt: skip
            sources.append(source)
        return Discovery(tuple(sources), tuple(loader.diagnostics))

    def classify(self, path: Path) -> FileRole | None:
        return None


CLIENT = Bootstrap()
