"""The project's fixture trees as the real clients are run on them: each case, how it is laid
out on disk, and the reference requests recorded from the pinned clients
(`tests/data/clients/<client>-<version>/<case>.json`, written by
`python -m tests.tools.record_clients`).

A case is laid out in a directory whose path has a fixed length (`golden.fixed_tmp`):
`repo/` (a fresh git repository) and `home/` (the fixture's home, its auto-memory folder
moved to the laid-out repository's name), with an empty `managed/` directory for ctxasm (the
programs read their own managed directory, which the machine does not have). A recording
holds that directory's path, and its form in an auto-memory folder name, as placeholders.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from assembler import Assembly
from assembler.clients.claude_code.settings import slug
from assembler.clients.headless import Body, Headless
from assembler.verify.check import (
    START,
    client_of,
    client_sides,
    compare,
    ctxasm_sides,
    predict,
    predicted_steps,
)
from assembler.verify.compare import Difference, report
from assembler.verify.process import environment
from tests.helpers.clients import PINS, Pin
from tests.helpers.golden import PLACEHOLDER
from tests.helpers.trees import git_init

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
REFERENCES = ROOT / "tests" / "data" / "clients"
_FIXTURE_MEMORY = ".claude/projects/demo-repo"  # the demo's memory, named for `make demo`


class Case(NamedTuple):
    """A fixture tree, the directory the agent starts in and the files it is made to read
    (relative to the laid-out directory), and the client that runs it."""

    name: str
    fixture: str
    cwd: str
    client: str
    reads: tuple[str, ...] = ()
    subagent: str = ""  # the agent type the main agent starts; its requests are recorded
    versions: tuple[str, ...] = ()  # the pinned versions it is recorded at (): every one
    main_reads: tuple[str, ...] = ()  # what the main agent reads before it starts the subagent

    def pins(self) -> tuple[Pin, ...]:
        return tuple(
            p
            for p in PINS
            if p.client == self.client and (not self.versions or p.version in self.versions)
        )


_SUBAGENT_READS = ("repo/services/api/src/handlers/users.ts", "repo/web/src/App.tsx")
CASES = (
    Case("demo-api", "demo", "repo/services/api", "claude-code",
         ("repo/services/api/src/handlers/users.ts",)),
    Case("demo-root", "demo", "repo", "claude-code",
         ("repo/services/api/src/handlers/users.ts", "repo/web/src/App.tsx")),
    # AGENTS.md files and no CLAUDE.md: what 2.1.332 loads and 2.1.197 does not (SPEC 4b).
    Case("agents-only", "codex", "repo/services/api", "claude-code"),
    Case("codex-api", "codex", "repo/services/api", "codex"),
    Case("gemini-app", "gemini", "repo/app", "gemini", ("repo/app/GEMINI.md",)),
    # What each agent type the Agent tool starts receives, and what its reads attach (SPEC
    # 4c): built in, custom agents of the project (with and without tools:) and of the user.
    *(Case(f"subagent-{name}", "subagents", "repo", "claude-code", _SUBAGENT_READS, name,
           versions)
      for name, versions in (
          ("general-purpose", ()), ("claude", ()), ("Explore", ()), ("Plan", ()),
          ("statusline-setup", ()), ("reviewer", ()), ("helper", ()), ("scribe", ()),
          ("terse", ()), ("noskill", ()), ("deep", ()),
          ("fork", ("2.1.332",)),
      )),
    # Held out from the facts above: AGENTS.md files and no CLAUDE.md (SPEC 4c: at 2.1.332
    # subagents with an instruction block get them; a read attaches nested AGENTS.md).
    *(Case(f"agents-md-subagent-{name}", "codex", "repo", "claude-code",
           ("repo/services/api/TEAM.md",), name)
      for name in ("general-purpose", "Explore")),
    # The main agent reads first: a subagent attaches again what it already has; a fork
    # shares its set (SPEC 4c).
    *(Case(f"subagent-{name}-after-main-read", "subagents", "repo", "claude-code",
           _SUBAGENT_READS[:1], name, versions=versions, main_reads=_SUBAGENT_READS[:1])
      for name, versions in (("general-purpose", ()), ("Explore", ()), ("fork", ("2.1.332",)))),
)  # fmt: skip
BY_NAME = {case.name: case for case in CASES}


def lay_out(case: Case, root: Path) -> Path:
    """Lay `case`'s fixture out in `root`; returns the directory the agent starts in."""
    source = FIXTURES / case.fixture
    shutil.copytree(source / "repo", root / "repo", symlinks=True)
    git_init(root / "repo")
    shutil.copytree(source / "home", root / "home", symlinks=True)
    (root / "managed").mkdir()
    memory = root / "home" / _FIXTURE_MEMORY
    if memory.is_dir():
        memory.rename(memory.parent / slug(Path(os.path.realpath(root / "repo"))))
    return root / case.cwd


def case_headless(case: Case, root: Path) -> Headless:
    """How the case's program runs headless: for a subagent case, its main agent starting
    that subagent, whose requests are the turns (`Headless.delegating`)."""
    _, headless = client_of(case.client)
    if not case.subagent:
        return headless
    delegating = headless.delegating(case.subagent, reads_before(case, root))
    if delegating is None:
        raise ValueError(f"{case.name}: {case.client} starts no subagents")
    return delegating


def machine(root: Path) -> dict[str, Any]:
    return {"home": root / "home", "managed_dir": root / "managed"}


def reads(case: Case, root: Path) -> tuple[str, ...]:
    return tuple(str(root / r) for r in case.reads)


def reads_before(case: Case, root: Path) -> tuple[str, ...]:
    return tuple(str(root / r) for r in case.main_reads)


def reference_path(case: Case, pin: Pin) -> Path:
    return REFERENCES / pin.key / f"{case.name}.json"


# The first request after a compaction (`record_clients --compaction`, on `COMPACTION_CASE`;
# Claude Code only): manual in one process, manual continued across processes, automatic
# (2.1.332 only: 2.1.197 did not compact at a threshold under `-p`), and manual after the
# model invoked a skill (`plant_skill`; no read).
COMPACTION_CASE = "demo-api"
COMPACTION_MODES = ("manual", "continued", "auto", "skill")
_AUTO_RECORDED = ("2.1.332",)
SKILL = "deploy"


def plant_skill(cwd: Path) -> None:
    """The project skill the `skill` recording invokes, in the directory the agent starts in."""
    folder = cwd / ".claude" / "skills" / SKILL
    folder.mkdir(parents=True)
    text = f"---\nname: {SKILL}\ndescription: Ship it.\n---\nRun make deploy.\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


def compaction_path(mode: str, pin: Pin) -> Path:
    return REFERENCES / pin.key / f"compact-{mode}.json"


def compaction_recordings() -> tuple[tuple[str, Pin], ...]:
    """(mode, pin) of every compaction reference."""
    return tuple(
        (mode, pin)
        for mode in COMPACTION_MODES
        for pin in BY_NAME[COMPACTION_CASE].pins()
        if mode != "auto" or pin.version in _AUTO_RECORDED
    )


def _forms(root: Path) -> list[tuple[str, str]]:
    """(as laid out, as recorded): the directory, then its form in a folder name."""
    real = os.path.realpath(root)
    return [(real, PLACEHOLDER), (slug(Path(real)), slug(Path(PLACEHOLDER)))]


def recorded(
    turns: Sequence[Body], kept: Sequence[str], root: Path, prefix: Path
) -> list[dict[str, Any]]:
    """The turns as a reference keeps them: only the keys that carry the conversation, the
    laid-out directory replaced by the placeholder, and the program's installation
    (`prefix`, in the clients' cache) by `$CTXASM_CLIENTS/<its folder>`."""
    text = json.dumps([{k: t[k] for k in kept if k in t} for t in turns], ensure_ascii=False)
    installation = (os.path.realpath(prefix), f"$CTXASM_CLIENTS/{prefix.name}")
    for here, there in [*_forms(root), installation]:
        text = text.replace(json.dumps(here)[1:-1], json.dumps(there)[1:-1])
    return list(json.loads(text))


def replayed(reference: Mapping[str, Any], root: Path) -> list[Body]:
    """A reference's turns with the placeholder replaced by `root` (laid out the same way)."""
    text = json.dumps(reference["turns"], ensure_ascii=False)
    for here, there in _forms(root):
        text = text.replace(json.dumps(there)[1:-1], json.dumps(here)[1:-1])
    return list(json.loads(text))


def load(case: Case, pin: Pin) -> dict[str, Any]:
    return dict(json.loads(reference_path(case, pin).read_text(encoding="utf-8")))


# An absolute path of the machine that recorded a reference (the placeholder is none).
MACHINE_PATHS = re.compile(
    r"(?<![\w.~$-])/(?:home|root|Users|private|var|opt|tmp)/(?!ctxasm-golden-XXXXXXXX)"
)


def reference_steps(case: Case, pin: Pin, root: Path, cwd: Path) -> list[Assembly]:
    """ctxasm's prediction for `case` laid out in `root` at the reference's release: at the
    start, then after each read (of the subagent, for a subagent case)."""
    environ = environment(root / "home", {})
    version = load(case, pin)["version"]
    if case.main_reads:  # the subagent starts after the main agent's reads
        main = predict(cwd, case.client, version, touched=reads_before(case, root),
                       environ=environ, **machine(root))  # fmt: skip
        steps = [main.subagent(case.subagent)]
        for path in reads(case, root):
            steps.append(steps[-1].touch(path))
        return steps
    return predicted_steps(
        cwd, case.client, version, reads(case, root), environ=environ,
        subagent=case.subagent or None, **machine(root),
    )  # fmt: skip


def reference_differences(
    case: Case, pin: Pin, root: Path, plant: Callable[[Path], object] | None = None
) -> tuple[tuple[str, ...], tuple[Difference, ...]]:
    """Lay `case` out in `root` (then `plant` a change in it), and compare ctxasm's
    prediction there with the reference recorded from `pin`, as `ctxasm verify` compares:
    the steps, and the differences."""
    _, headless = client_of(case.client)
    reference = load(case, pin)
    cwd = lay_out(case, root)
    if plant is not None:
        plant(root)
    steps = reference_steps(case, pin, root, cwd)
    shown = (START, *(f"after reading {r}" for r in case.reads))
    client = client_sides(headless, replayed(reference, root))
    return shown, compare(client, ctxasm_sides(headless, steps), shown)


def compare_reference(case: Case, pin: Pin, root: Path) -> str | None:
    """The report of the differences between ctxasm and the reference, None when none."""
    shown, found = reference_differences(case, pin, root)
    return report(f"{pin.key} {case.name}", found, shown) if found else None


def case_params(*, subagents: bool = True) -> list[object]:
    """Every case at every version it is recorded at, as pytest parameters (`case`, `pin`);
    without `subagents`, only the main agent's cases (those `ctxasm verify` checks)."""
    import pytest

    return [
        pytest.param(case, pin, id=f"{pin.key}-{case.name}")
        for case in CASES
        for pin in case.pins()
        if subagents or not case.subagent
    ]
