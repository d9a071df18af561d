"""The seam every agent client sits behind, and the values it answers with.

A client says, for its agent:
  * what it loads when started in a directory (`discover`), and what reading a file adds
    later (`touch`, lazy loading; None when the agent loads nothing lazily);
  * which output formats reproduce its own request text byte for byte (`formats`: a name and
    the variables its template `<name>.j2` is rendered with, found in `templates/` or in the
    client's own `templates` directory);
  * which of its files whole-repository lint looks for (`instruction_files`), what each is
    (`classify`), and which lint checks apply to them (`lint_codes`); a client with checks of
    its own (frontmatter keys only it reads) also offers `check_file` (`ChecksFiles`).
What `watch` and the `Assembler` observe needs no answer of its own: every file a client
reads goes through the run's `Disk`, and that is what they follow.

A client reads only through `Run.disk`, builds sources with the shared `Loader` (imports,
rules, bounded reads, diagnostics from the one catalogue), and never imports the output,
lint or live packages: they ask the registry for it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from .. import codes
from ..codes import Code
from ..discovery.context import Discovery, Run
from ..model import Assembled, Source

# The variables of a client format's template: `(assembly, date) -> {name: value}`.
FormatContext = Callable[[Assembled, str], Mapping[str, Any]]


# The lint checks that apply to any agent's plain instruction file, one read as it is (no
# frontmatter, no Claude Code imports): files that cannot load, the size guidance, secrets,
# duplicates, forged structure and content from outside the project. A client adds its own.
PLAIN_FILE_CHECKS = frozenset(
    {
        *(c.code for c in codes.CATALOGUE if c.code < "CTX100"),
        codes.TOO_MANY_LINES.code,
        codes.TOO_MANY_BYTES.code,
        codes.SECRET.code,
        codes.DUPLICATE.code,
        codes.CLOSING_TAG.code,
        codes.FORGED_STRUCTURE.code,
        codes.OUTSIDE_PROJECT.code,
        codes.OUTSIDE_HOME.code,
    }
)


class FileKind(enum.Enum):
    """What an instruction file is to its agent, as far as lint is concerned."""

    INSTRUCTIONS = "instructions"  # loads at start in its directory and below
    LOCAL = "local"  # private to one user: must stay out of git
    RULE = "rule"  # in a rules directory; frontmatter may make it conditional
    MEMORY = "memory"  # an index the client cuts to its limits
    NEVER_LOADED = "never loaded"  # named like an instruction file, never read
    SETTINGS = "settings"  # a client's settings file: it decides what loads from its directory
    REFERENCE = "reference"  # read with a skill, on demand (an AGENTS.md in a skill's folder)
    OTHER = "other"  # not an instruction file of any known client


class FileRole(NamedTuple):
    """A file's kind, and the directory an agent starts in for it to load at start."""

    kind: FileKind
    load_dir: Path


# Optional members of the seam; a client without them gets the default:
#   `notes_at_start` (default False): its discovery reports findings at a line of a file it
#     reads (`Discovery.notes`: Codex's byte budget, Gemini's imports), which lint asks for.
#   `reattaches_start_files` (default False): a touch attaches again a file loaded at start
#     (Claude Code); otherwise it skips every file loaded so far (`touch_skips`).
#   `repository_agent` (default True): False for a client that is no coding agent of a
#     repository (the bootstrap seed's fixed workspace); `explain --policy all` leaves it out.
#   `default_policy` (default: the client's name, a built-in policy in `policies/`): the
#     policy it runs with when only the client is named (`explain --client NAME`, `--policy
#     all`): a built-in policy's name or a policy TOML path.
#   `follows_imports_outside_cwd(run)` (default: False): True when the agent started in the
#     run's cwd follows an `@import` of a file outside that directory (Claude Code: when
#     external imports are approved for the project). Lint asks it before discovering a
#     deeper start for the imports it drops (CTX207): such a start drops none for that.


def is_repository_agent(client: Client) -> bool:
    """Whether `client` models a coding agent started in a repository (`repository_agent`)."""
    return getattr(client, "repository_agent", True) is not False


def touch_skips(client: Client, loaded: Iterable[Source]) -> list[str]:
    """The paths a touch must not attach again (`Client.touch`'s `already`): every file loaded
    so far, or, for an agent that attaches again what it loaded at start (optional member
    `reattaches_start_files`, true for Claude Code: a read reaching an imported start file
    attaches it again), only what earlier reads attached."""
    if getattr(client, "reattaches_start_files", False) is True:
        return [s.path for s in loaded if s.read_attached]
    return [s.path for s in loaded]


def notes_at_start(client: Client) -> bool:
    """Whether `client`'s discovery says things about its files at a line (`Discovery.notes`,
    optional member `notes_at_start`): only then does lint discover a directory to ask."""
    return getattr(client, "notes_at_start", False) is True


def file_checks(client: Client) -> Callable[[Path, str], Sequence[FileNote]] | None:
    """`client`'s own checks of its files (optional member `check_file`, `ChecksFiles`), or
    None. An attribute look-up: `isinstance` against the protocol costs more than the check."""
    check = getattr(client, "check_file", None)
    return check if callable(check) else None


def follows_imports_outside_cwd(client: Client, run: Run) -> bool:
    """Whether `client` started in `run`'s cwd follows imports outside it (optional member
    `follows_imports_outside_cwd`; without it, lint must discover the start to know)."""
    ask = getattr(client, "follows_imports_outside_cwd", None)
    return callable(ask) and ask(run) is True


def default_policy(client: Client) -> str:
    """The policy `client` runs with when only the client is named (`default_policy`)."""
    value = getattr(client, "default_policy", None)
    return str(value) if isinstance(value, str | Path) else client.name


class Client(Protocol):
    @property
    def name(self) -> str:
        """The registry key, and the `client` a policy names."""

    @property
    def formats(self) -> Mapping[str, FormatContext]:
        """The formats native to this agent: byte-compatible with its own request text."""

    @property
    def templates(self) -> Path | None:
        """Where the templates of its formats are (`<format>.j2`); None: the shipped
        `templates/`, where every built-in client's templates live."""

    @property
    def instruction_files(self) -> str:
        """A regular expression that matches (`re.search`, with `.` matching a newline too:
        names may hold one) the `/`-separated repository paths of this agent's files
        (compiled only by whole-repository lint)."""

    @property
    def lint_codes(self) -> frozenset[str]:
        """The lint checks (CTX codes) that apply to this agent's files."""

    def discover(self, run: Run) -> Discovery:
        """Everything the agent loads at start in `run.context.cwd`, in its order."""

    def touch(
        self, run: Run, state: object, target: Path, already: Collection[str]
    ) -> Discovery | None:
        """What the agent attaches when it reads `target` (`state`: what `discover` kept;
        `already`: paths earlier reads attached); None when this agent loads nothing lazily."""

    def classify(self, path: Path) -> FileRole | None:
        """What `path` (absolute) is to this agent, or None when it is not one of its files."""


class FileNote(NamedTuple):
    """One finding of a client's own check of a file: where (from 1) and what."""

    line: int
    col: int
    code: Code
    message: str


@runtime_checkable
class ChecksFiles(Protocol):
    """A client with lint checks of its own files (an optional member of the seam: lint asks
    every client that `classify`s a file, and keeps what the client's `lint_codes` list)."""

    def check_file(self, path: Path, text: str) -> Sequence[FileNote]:
        """Findings about `path` (one of this client's files) from its text as read."""
