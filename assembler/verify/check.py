"""`verify()`: run an agent's program headless and compare what it sent with ctxasm.

One check is: ctxasm's prediction for the real tree, observed (every path it looks at); a
mirror of exactly those paths, the user's home included, in a new private directory, with
what the program would obey there reduced to what changes what it loads (`mirror`); ctxasm's
prediction for the mirror, which must be the real tree's, path for path; the stand-in
provider and the program's launch in the mirror, behind its own switches (`Session`); the
program's run, bounded in time (`process`); both sides split into parts by the client and
compared (`compare`), every path named as the real path it stands for. `session` and
`predict` are what the recorder of the test references (`tests/tools/record_clients.py`)
shares with it.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..assembly import Assembly, assemble, run
from ..clients import registry
from ..clients.headless import Body, Headless, Launch, Part, Relocation
from ..discovery import locations
from ..discovery.disk import Disk
from ..display import shown
from ..errors import VerifyError
from ..model import Diagnostic
from ..request import PathLike, Request
from . import mirror
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
    # What the program was not given of the files it would have read, each "<file>: <what>"
    # (hooks, helpers, MCP servers, `env`, ...): said on stderr, not a difference.
    withheld: tuple[str, ...] = ()
    notes: tuple[Diagnostic, ...] = ()  # how the program was found (`CTX606`), for stderr

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


def predict(
    cwd: PathLike, client: str, version: str, observer: mirror.Heard | None = None, **machine: Any
) -> Assembly:
    """ctxasm's prediction for `client` at `version` (the release it models for it: the
    nearest older model), with its built-in policy (what the program does, whatever the
    project's configuration says)."""
    policy = registry.get(client).default_policy
    if observer is None:
        return assemble(cwd, policy=policy, client_version=version, **machine)
    return run(Request.of(cwd, policy=policy, client_version=version, **machine), observer=observer)


def predicted_steps(
    cwd: PathLike,
    client: str,
    version: str,
    reads: Sequence[str],
    observer: mirror.Heard | None = None,
    **machine: Any,
) -> list[Assembly]:
    """The prediction at start, then after each read in order."""
    steps = [predict(cwd, client, version, observer, **machine)]
    for path in reads:
        steps.append(steps[-1].touch(path, observer=observer))
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
    """One run of the program against `provider`, the stand-in serving it (`session()`
    starts both): its launch (arguments, variables, the files it needs in `home`, some of
    them made from the directory it starts in) is made when it runs."""

    def __init__(
        self, headless: Headless, program: str, home: Path, reads: Sequence[str], provider: Provider
    ) -> None:
        self.headless = headless
        self.program = program
        self.home = home
        self.reads = tuple(reads)
        self.provider = provider
        self.environ = environment(home, self.launch(home).environ)

    def launch(self, cwd: Path) -> Launch:
        """How the program starts in `cwd` against the stand-in."""
        return self.headless.launch(self.provider.base_url, _reader(self.home), _reader(cwd))

    def version(self, cwd: Path) -> str:
        """The version the program reports (`--version`), asked with a home of its own: what
        it writes there stays out of the home the prediction reads."""
        return program_version(self.headless, self.program, self.environ, cwd)

    def capture(self, cwd: Path, timeout: float = TIMEOUT) -> tuple[Body, ...]:
        """Run the program in `cwd` and return the turns of its conversation: the first,
        then one after each scripted read."""
        launch = self.launch(cwd)
        mirror.write_files(self.home, launch.files)
        argv = (self.program, *launch.argv)
        finished = run_program(argv, cwd, self.environ, timeout, shown(self.program))
        turns = tuple(e.body for e in self.provider.exchanges() if e.turn)
        wanted = 1 + len(self.reads)
        if len(turns) < wanted:
            raise VerifyError(_too_few(self.program, len(turns), wanted, finished))
        return turns[:wanted]


def _reader(directory: Path) -> Callable[[str], bytes | None]:
    def read(relative: str) -> bytes | None:
        result = Disk().read(str(directory / relative), mirror.MAX_FILE)
        return result.data if result.ok else None

    return read


def program_version(headless: Headless, program: str, environ: Mapping[str, str], cwd: Path) -> str:
    """The version `program --version` reports, run in `cwd` with a home of its own."""
    what = f"{shown(program)} --version"
    with tempfile.TemporaryDirectory(prefix="ctxasm-verify-version-") as aside:
        finished = run_program(
            [program, "--version"], cwd, {**environ, "HOME": aside}, VERSION_TIMEOUT, what
        )
    found = headless.version(finished.output) if finished.status == 0 else None
    if found is None:
        raise VerifyError(f"{what}: no version in what it printed: {finished.last_line()}")
    return found


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
    """Run `client`'s program headless in a mirror of `cwd` (reading each of `reads` in
    turn) and compare what it sent with ctxasm's prediction for the version it reports (or
    `version`). `home` is the home whose files are mirrored (default: the user's);
    `managed_dir` the managed directory ctxasm predicts with (default: the machine's, the
    one the program reads, where it is)."""
    agent, headless = client_of(client)
    if reads and headless.no_reads is not None:
        raise VerifyError(f"--touch: {headless.no_reads}")
    directory = Path(os.path.abspath(cwd))
    if not directory.is_dir():
        raise VerifyError(
            f"{shown(str(cwd))}: not a directory; pass the directory the agent starts in"
        )
    source = Path(os.path.abspath(home)) if home is not None else locations.default_home()
    managed = Path(managed_dir) if managed_dir is not None else registry.default_managed_dir()
    paths = [os.path.abspath(p) for p in reads]
    hint = f"install {agent.title} or pass --bin with its path"
    with tempfile.TemporaryDirectory(prefix="ctxasm-verify-") as tmp:
        root = os.path.realpath(tmp)  # no link on the way: the program resolves the same
        searched = {"PATH": os.environ.get("PATH", os.defpath)}  # its relative entries said
        located, notes = locate(program or headless.binary, searched, hint)
        moved = [root + p for p in paths]
        with session(headless, located, Path(root + str(source)), moved) as started:
            reported = started.version(Path(root))
            modelled = version or reported
            real, where, laid = _mirror(
                directory, client, headless, modelled, paths, source, managed, root
            )
            home_in = Path(where.inside(str(source)))
            ours = predicted_steps(
                where.inside(str(directory)), client, modelled, moved, home=home_in,
                managed_dir=managed, environ=environment(home_in, {}),
            )  # fmt: skip
            _refuse_environ(laid, ours, client, headless, modelled, moved, home_in, managed)
            _same_as_real(headless, real, ours, where)
            turns = started.capture(Path(where.inside(str(directory))), timeout)
        shown_steps = (START, *(f"after reading {real[0].context.display(p)}" for p in paths))
        found = compare(client_sides(headless, turns), ctxasm_sides(headless, ours), shown_steps)
        found = tuple(_outside(d, where) for d in found)
    modelled = real[0].client_version or modelled  # the release ctxasm models for it
    return Verdict(
        agent.title, reported, modelled, located, shown_steps, found, laid.withheld, notes
    )


def _mirror(
    directory: Path,
    client: str,
    headless: Headless,
    version: str,
    reads: Sequence[str],
    source: Path,
    managed: Path,
    root: str,
) -> tuple[list[Assembly], Relocation, mirror.Laid]:
    """The prediction for the real tree, observed; the mirror of what it looked at. So that
    a file the program loads and ctxasm does not is there to be found, the mirror also holds
    what the predictions for the client's other modelled releases look at, and, in every
    directory any of them looked in, each file some agent ctxasm models would load."""
    heard = mirror.Heard()
    real = predicted_steps(
        directory, client, version, reads, heard, home=source, managed_dir=managed,
        environ=environment(source, {}),
    )  # fmt: skip
    table = registry.get(client).versions
    for other in table.modelled if table is not None else ():
        if other != real[0].client_version:
            predicted_steps(
                directory, client, other, reads, heard, home=source, managed_dir=managed,
                environ=environment(source, {}),
            )  # fmt: skip
    context = real[0].context
    where = Relocation(root, str(source), str(context.canonical_root or context.cwd))
    where = where._replace(moves=headless.moves(where))
    # The managed directory is read where it is, by the program and by ctxasm alike.
    looked = [p for p in heard.paths if not _is_under(p, str(managed))]
    laid = mirror.lay_out([*looked, *_instruction_files(looked), *reads], where, headless, reads)
    return real, where, laid


_MAX_LISTED = 2_000  # directories listed for instruction files ctxasm did not look at
_MAX_LISTING = 10_000  # entries looked at in one of them


def _instruction_files(looked: Sequence[str]) -> list[str]:
    """The files of every agent ctxasm models (`Client.classify`) in the directories a
    prediction looked in, each listing bounded."""
    clients = registry.clients()
    found = []
    for directory in list(dict.fromkeys(os.path.dirname(p) for p in looked))[:_MAX_LISTED]:
        try:
            with os.scandir(directory) as listing:
                entries = list(itertools.islice(listing, _MAX_LISTING))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if not entry.is_dir(follow_symlinks=False) and any(
                c.classify(path) is not None for c in clients
            ):
                found.append(entry.path)
    return found


def _refuse_environ(
    laid: mirror.Laid,
    ours: Sequence[Assembly],
    client: str,
    headless: Headless,
    version: str,
    reads: Sequence[str],
    home: Path,
    managed: Path,
) -> None:
    """A `VerifyError` when a settings file's `env`, which the program is never given, would
    change what ctxasm predicts: the mirror cannot show what the program does with it."""
    if not laid.environ:
        return
    base = environment(home, {})
    plain = ctxasm_sides(headless, ours)
    for path, name, value in laid.environ:
        steps = predicted_steps(
            ours[0].context.cwd, client, version, reads, home=home, managed_dir=managed,
            environ={**base, name: value},
        )  # fmt: skip
        if ctxasm_sides(headless, steps) != plain:
            raise VerifyError(
                f"{shown(path)}: its env sets {shown(name)}, which changes what the agent "
                "loads; verify never runs an agent with the environment of a settings file: "
                "check this tree by hand, or without that key"
            )


def _same_as_real(
    headless: Headless, real: Sequence[Assembly], ours: Sequence[Assembly], where: Relocation
) -> None:
    """A `VerifyError` when ctxasm's prediction for the mirror is not its prediction for the
    real tree, path for path: the program would be checked on another tree."""
    want, got = ctxasm_sides(headless, real), ctxasm_sides(headless, ours)
    got = Sides(
        tuple(_part_outside(p, where) for p in got.start),
        tuple(tuple(_part_outside(p, where) for p in step) for step in got.reads),
    )
    if got == want:
        return
    steps = (START, *(f"read {i}" for i in range(1, len(real))))
    first = compare(want, got, steps)[0]
    raise VerifyError(
        f"{shown(first.label)}: the copy verify runs the agent in would not load what the tree "
        f"does ({first.where}: {first.kind.value.replace('the client', 'the tree')}); "
        "nothing was run: please report it (docs/verify.md)"
    )


def _part_outside(part: Part, where: Relocation) -> Part:
    return part._replace(label=where.outside(part.label), text=where.outside(part.text))


def _outside(found: Difference, where: Relocation) -> Difference:
    return found._replace(
        label=where.outside(found.label), detail=tuple(where.outside(d) for d in found.detail)
    )


def _is_under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)
