"""`verify()`: run an agent's program headless and compare what it sent with ctxasm.

One check is: a temporary home holding copies of what ctxasm reads from the user's home
(`home`); the stand-in provider and the program's launch (`Session`); ctxasm's prediction
with that same home, made before the program runs (it writes into its home); the program's
run, bounded in time (`process`); both sides split into parts by the client and compared
(`compare`). `capture` and `predict` are what the recorder of the test references
(`tests/tools/record_clients.py`) shares with it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..assembly import Assembly, assemble, run
from ..clients import registry
from ..clients.headless import Body, Headless, Part
from ..discovery import locations
from ..discovery.disk import Disk
from ..display import shown
from ..errors import VerifyError
from ..request import PathLike, Request
from . import home as temporary
from .compare import Difference, differences, report
from .process import Finished, environment, locate
from .process import run as run_program
from .provider import Provider

if TYPE_CHECKING:
    from ..clients.base import Client

TIMEOUT = 120.0  # seconds for one run of the program (a run takes one or two)
VERSION_TIMEOUT = 30.0
START = "at start"


class Sides(NamedTuple):
    """The instruction context of one side: at start, then what each read attached."""

    start: tuple[Part, ...]
    reads: tuple[tuple[Part, ...], ...]


class Verdict(NamedTuple):
    """The outcome of one check."""

    title: str  # the agent's
    version: str  # what its program reported
    modelled: str  # the version ctxasm predicted for
    program: str
    steps: tuple[str, ...]  # "at start", then "after reading <path>" for each read
    differences: tuple[Difference, ...]

    @property
    def agree(self) -> bool:
        return not self.differences

    def text(self) -> str:
        forced = "" if self.modelled == self.version else f", predicted as {self.modelled}"
        head = f"{self.title} {self.version} ({shown(self.program)}{forced})"
        return report(head, self.differences, self.steps)


def client_of(name: str) -> tuple[Client[Any], Headless]:
    """The client called `name` and how its program runs headless."""
    client = registry.get(name)
    headless = client.headless
    if headless is None:
        can = ", ".join(c.name for c in registry.clients() if c.headless is not None)
        raise VerifyError(f"{name}: ctxasm cannot run this agent headless; verify runs {can}")
    return client, headless


def predict(cwd: PathLike, client: str, version: str, **machine: Any) -> Assembly:
    """ctxasm's prediction for `client` at `version` (the release it models for it: the
    nearest older model), with its built-in policy (what the program does, whatever the
    project's configuration says)."""
    policy = registry.get(client).default_policy
    return assemble(cwd, policy=policy, client_version=version, **machine)


def predicted_steps(
    cwd: PathLike, client: str, version: str, reads: Sequence[str], **machine: Any
) -> list[Assembly]:
    """The prediction at start, then after each read in order."""
    steps = [predict(cwd, client, version, **machine)]
    for path in reads:
        steps.append(steps[-1].touch(path))
    return steps


def client_sides(headless: Headless, turns: Sequence[Body]) -> Sides:
    """What the program sent: its first turn's start context, and each later turn's read."""
    start = headless.start_parts(headless.start_text(turns[0])) if turns else ()
    reads = tuple(headless.read_parts(headless.read_text(t)) for t in turns[1:])
    return Sides(start, reads)


def ctxasm_sides(headless: Headless, steps: Sequence[Assembly]) -> Sides:
    """ctxasm's rendering of the client's own format at each step, split the same way; what
    a read added is what its rendering appends to the one before."""
    texts = [step.render(headless.format) for step in steps]
    reads = tuple(
        headless.read_parts(after.removeprefix(before) if after.startswith(before) else after)
        for before, after in pairwise(texts)
    )
    return Sides(headless.start_parts(texts[0]), reads)


def compare(client: Sides, ours: Sides, steps: Sequence[str]) -> tuple[Difference, ...]:
    found = differences(steps[0], client.start, ours.start)
    for where, theirs, mine in zip(steps[1:], client.reads, ours.reads, strict=True):
        found += differences(where, theirs, mine)
    return tuple(found)


class Session:
    """One run of the program: its launch (arguments, variables, the files it needs in
    `home`) against `provider`, the stand-in serving it (`session()` starts both)."""

    def __init__(
        self, headless: Headless, program: str, home: Path, reads: Sequence[str], provider: Provider
    ) -> None:
        self.headless = headless
        self.program = program
        self.home = home
        self.reads = tuple(reads)
        self.provider = provider
        launch = headless.launch(provider.base_url, self._read_home)
        temporary.write_files(home, launch.files)
        self.environ = environment(home, launch.environ)
        self.argv = (program, *launch.argv)

    def version(self, cwd: Path) -> str:
        """The version the program reports (`--version`), asked with a home of its own: what
        it writes there stays out of the home the prediction reads."""
        what = f"{shown(self.program)} --version"
        with tempfile.TemporaryDirectory(prefix="ctxasm-verify-version-") as aside:
            environ = {**self.environ, "HOME": aside}
            finished = run_program([self.program, "--version"], cwd, environ, VERSION_TIMEOUT, what)
        found = self.headless.version(finished.output) if finished.status == 0 else None
        if found is None:
            raise VerifyError(f"{what}: no version in what it printed: {finished.last_line()}")
        return found

    def capture(self, cwd: Path, timeout: float = TIMEOUT) -> tuple[Body, ...]:
        """Run the program in `cwd` and return the turns of its conversation: the first,
        then one after each scripted read."""
        finished = run_program(self.argv, cwd, self.environ, timeout, shown(self.program))
        turns = tuple(e.body for e in self.provider.exchanges() if e.turn)
        wanted = 1 + len(self.reads)
        if len(turns) < wanted:
            raise VerifyError(_too_few(self.program, len(turns), wanted, finished))
        return turns[:wanted]

    def _read_home(self, relative: str) -> bytes | None:
        result = Disk().read(str(self.home / relative), temporary.MAX_FILE)
        return result.data if result.ok else None


@contextmanager
def session(
    headless: Headless, program: str, home: Path, reads: Sequence[str]
) -> Iterator[Session]:
    """A `Session` whose stand-in provider serves while the `with` block runs."""
    with Provider(headless, reads) as provider:
        yield Session(headless, program, home, reads, provider)


def _too_few(program: str, got: int, wanted: int, finished: Finished) -> str:
    return (
        f"{shown(program)} sent {got} request(s) of its conversation where {wanted} were "
        f"expected (exit status {finished.status}): {finished.last_line()}"
    )


def verify(
    cwd: PathLike,
    client: str,
    *,
    reads: Sequence[PathLike] = (),
    program: str | None = None,
    home: PathLike | None = None,
    managed_dir: PathLike | None = None,
    version: str | None = None,
    timeout: float = TIMEOUT,
) -> Verdict:
    """Run `client`'s program headless in `cwd` (reading each of `reads` in turn) and
    compare what it sent with ctxasm's prediction for the version it reports (or
    `version`). `home` is the home whose files are copied (default: the user's);
    `managed_dir` the managed directory ctxasm predicts with (default: the machine's, the
    one the program reads)."""
    agent, headless = client_of(client)
    if reads and headless.no_reads is not None:
        raise VerifyError(f"--touch: {headless.no_reads}")
    directory = Path(os.path.abspath(cwd))
    if not directory.is_dir():
        raise VerifyError(
            f"{shown(str(cwd))}: not a directory; pass the directory the agent starts in"
        )
    source = Path(home) if home is not None else locations.default_home()
    managed = Path(managed_dir) if managed_dir is not None else registry.default_managed_dir()
    paths = [os.path.abspath(p) for p in reads]
    hint = f"install {agent.title} or pass --bin with its path"
    with tempfile.TemporaryDirectory(prefix="ctxasm-verify-") as tmp:
        temp_home = Path(tmp) / "home"
        temp_home.mkdir(mode=0o700)
        located = locate(program or headless.binary, environment(temp_home, {}), hint)
        _copy_home(directory, client, paths, source, managed, temp_home, headless)
        with session(headless, located, temp_home, paths) as started:
            reported = started.version(directory)
            modelled = version or reported
            machine = {"home": temp_home, "managed_dir": managed, "environ": started.environ}
            steps = predicted_steps(directory, client, modelled, paths, **machine)
            turns = started.capture(directory, timeout)
        shown_steps = (START, *(f"after reading {steps[0].context.display(p)}" for p in paths))
        found = compare(client_sides(headless, turns), ctxasm_sides(headless, steps), shown_steps)
    # A file of the temporary home is named as the file of the home it was copied from.
    found = tuple(d._replace(label=_moved(d.label, temp_home, source)) for d in found)
    modelled = steps[0].client_version or modelled  # the release ctxasm models for it
    return Verdict(agent.title, reported, modelled, located, shown_steps, found)


def _moved(label: str, temp_home: Path, source: Path) -> str:
    prefix = f"{temp_home}{os.sep}"
    return f"{source}{os.sep}{label[len(prefix) :]}" if label.startswith(prefix) else label


def _copy_home(
    cwd: Path,
    client: str,
    reads: Iterable[str],
    source: Path,
    managed: Path,
    target: Path,
    headless: Headless,
) -> Mapping[str, bytes]:
    """Lay out in `target` what a prediction with the user's home reads of it."""
    policy = registry.get(client).default_policy
    heard = temporary.Heard()
    environ = environment(source, {})
    request = Request.of(cwd, policy=policy, home=source, managed_dir=managed, environ=environ)
    assembly = run(request, observer=heard)
    for path in reads:
        assembly = assembly.touch(path, observer=heard)
    relatives = temporary.in_home(heard.paths, source, assembly.context.project_root)
    return temporary.lay_out(source, target, relatives, headless)
