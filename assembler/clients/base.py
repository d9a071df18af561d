"""The seam every agent client sits behind, and the values it answers with.

A client (a subclass of `Client`) says, for its agent:
  * what it loads when started in a directory (`discover`), and what reading a file adds
    later (`touch`, lazy loading; None when the agent loads nothing lazily);
  * which output formats reproduce its own request text byte for byte (`formats`: a name and
    the variables its template `<name>.j2` is rendered with, found in `templates/` or in the
    client's own `templates` directory);
  * which of its files whole-repository lint looks for (`instruction_files`, and those it
    reads even when git ignores them: `read_when_ignored`), what each is (`classify`), which
    lint checks apply to them (`lint_codes`), its own checks and codes (`check_file`,
    `own_codes`) and its own words in the shared checks' advice (`advice`);
  * how its program runs headless against a local stand-in for its provider, and where its
    request carries the instruction files (`headless`, for `ctxasm verify`);
  * the facts of its machine that other layers need as values: the environment variables
    that move its home directory (`home_variables`), a date its environment fixes (`date`).
What `watch` and the `Assembler` observe needs no answer of its own: every file a client
reads goes through the run's `Disk`, and that is what they follow.

A client reads only through `Run.disk`, builds sources with the shared `Loader` (imports,
rules, bounded reads, diagnostics from the catalogue), and never imports the output, lint or
live packages: they ask the registry for it. Every optional member has its default here, so
a client states only what differs (mypy checks each override against this class).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from .. import codes
from ..codes import Code
from ..compaction import AfterCompact, Compaction, CompactionProfile
from ..discovery.context import Discovery, Run
from ..discovery.disk import Disk
from ..discovery.loader import AS_WRITTEN, Reading
from ..errors import RequestError, SkillError
from ..model import AgentType, Assembled, Diagnostic, Skill, Source
from ..versions import INSTALLED, LATEST, NO_VERSION, ClientVersion, VersionTable
from .headless import Headless

# The variables of a client format's template: `(assembly, date) -> {name: value}`.
FormatContext = Callable[[Assembled, str], Mapping[str, Any]]

# The state a client's discovery keeps for its later touches (`Discovery.state`).
S = TypeVar("S")


# The lint checks that apply to any agent's plain instruction file, one read as it is (no
# frontmatter, no imports): files that cannot load, the size guidance, secrets, duplicates,
# forged structure and content from outside the project. A client adds its own.
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
    AGENT = "agent"  # a subagent's definition: its prompt, never loaded as instructions
    REFERENCE = (
        "reference"  # read with a skill, on demand (another agent's file in a skill's folder)
    )
    OTHER = "other"  # not an instruction file of any known client


class FileRole(NamedTuple):
    """A file's kind, the directory an agent starts in for it to load at start, and the
    frontmatter YAML its client parses of it (`parse.Dialect.frontmatter_chars`; 0: all)."""

    kind: FileKind
    load_dir: Path
    frontmatter_chars: int = 0


def role_key(role: FileRole | None, path: Path) -> Hashable:
    """A `Client.check_key` for checks that depend on a file's kind and name, and on the
    directory it loads from only for a rule (whose globs are matched against what is there)."""
    if role is None:
        return None
    return (role.kind, path.name, role.load_dir if role.kind is FileKind.RULE else None)


class FileNote(NamedTuple):
    """One finding of a client's own check of a file: where (from 1) and what."""

    line: int
    col: int
    code: Code
    message: str


class Tracked(Protocol):
    """What lint's listing of a repository answers a client's check of one of its files."""

    def under(self, directory: Path) -> str | None:
        """`directory` relative to the repository root (`""` for the root), or None when no
        complete list of the files git tracks there is known (outside git, or cut short)."""

    def matches(self, directory: Path, pattern: str, match: Callable[[str], object]) -> bool:
        """Whether `match` (of `pattern`) accepts a tracked file below `directory`, by its path
        relative to it (asked once per directory and pattern in a run)."""


class Advice(NamedTuple):
    """A client's own words in the shared lint checks' messages about its files: each check
    states the fact ("401 lines, over the 200-line limit: ") and the client of the file says
    what to do, in the terms of its own files. The defaults name no agent."""

    split: str = "split it"  # CTX101, after "N lines, over the M-line limit: "
    large: str = "large files crowd out the rest of the context; split it"  # CTX104
    too_large: str = (
        "ctxasm does not load it; split it"  # CTX105, after "N bytes, over the 4 MiB limit: "
    )
    external_import: str = (  # CTX204, after "@x points outside the directory the agent starts in: "
        "the agent may not load it (and it may leak files); move or copy it"
    )
    deeper_start: str = (  # CTX207, after "@x is dropped when the agent starts in a/ (...): "
        "import it from those directories' own instruction files too"
    )


class Agents(NamedTuple):
    """The agent types a session offers (built-in first, then the user's own definitions in
    the client's order), and what was found wrong with the definitions."""

    types: tuple[AgentType, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    note: str = ""  # what the client says plainly of them (which start without its files)

    def named(self, name: str) -> AgentType | None:
        return next((a for a in self.types if a.name == name), None)


class Client(abc.ABC, Generic[S]):
    """One agent the tool models (`S`: what its discovery keeps for later touches)."""

    # --- what every client states -------------------------------------------------------

    # The registry key, and the `client` a policy names.
    name: str
    # The lint checks (CTX codes) that apply to this agent's files.
    lint_codes: frozenset[str]

    @abc.abstractmethod
    def discover(self, run: Run) -> Discovery[S]:
        """Everything the agent loads at start in `run.context.cwd`, in its order."""

    @abc.abstractmethod
    def classify(self, path: Path) -> FileRole | None:
        """What `path` (absolute) is to this agent, or None when it is not one of its files."""

    # --- optional members, with their defaults ------------------------------------------

    # A regular expression that matches (`re.search`, with `.` matching a newline too: names
    # may hold one) the `/`-separated repository paths of this agent's files: what
    # whole-repository lint checks and the pre-commit hook's `files:` (None: it has none in a
    # repository).
    instruction_files: str | None = None
    # Where the templates of its formats are (`<format>.j2`); None: the shipped `templates/`,
    # where every built-in client's templates live.
    templates: Path | None = None
    # Whether it is a coding agent started in a repository; False for a fixed workspace (the
    # bootstrap seed's), which `explain --policy all` leaves out.
    repository_agent: bool = True
    # Whether its discovery reports findings at a line of a file it reads (`Discovery.notes`:
    # Codex's byte budget, Gemini's imports): only then does lint discover a directory to ask.
    notes_at_start: bool = False
    # Its own diagnostic codes (`codes.Code`), listed by `ctxasm codes` with the shared ones.
    own_codes: tuple[Code, ...] = ()
    # Git pathspec globs (`:(glob)` magic: `**/`, `*`) of the repository files it reads even
    # when git ignores them; whole-repository lint asks git for those and checks them.
    read_when_ignored: tuple[str, ...] = ()
    # Directories (`/`-separated, relative to where they are found) it makes for its own use,
    # holding copies of the project (Claude Code's worktrees): ignored files there are not
    # the project's.
    scratch_dirs: tuple[str, ...] = ()
    # Directories (by name) whose `skills/<name>/` folders hold its skills: a file inside one
    # is the skill's own, read with it (another agent's file there is not project
    # instructions).
    skill_homes: tuple[str, ...] = ()
    # Environment variables that move its home directory: `--home` drops them, or they would
    # win over the directory given.
    home_variables: tuple[str, ...] = ()
    # Files (`/`-separated, relative to the directory it starts in) whose settings change what
    # it loads from outside the repository when started there (a directory's own settings
    # may move its auto memory): lint asks what such a start loads from outside.
    start_settings: tuple[str, ...] = ()
    # Its words in the shared lint checks' advice about its files.
    advice: Advice = Advice()
    # The releases it models and its version-gated facts (`versions.VersionTable`, in its
    # package); None: it models no particular release.
    versions: VersionTable | None = None
    # The command that prints the installed release (`--client-version installed`), and the
    # environment variables that keep it off the network while it answers.
    version_command: tuple[str, ...] = ()
    version_environ: Mapping[str, str] = MappingProxyType({})

    @property
    def title(self) -> str:
        """How messages name the agent ("Claude Code"); by default its registry name."""
        return self.name

    @property
    def formats(self) -> Mapping[str, FormatContext]:
        """The formats native to this agent: byte-compatible with its own request text."""
        return {}

    @property
    def default_policy(self) -> str | Path:
        """The policy it runs with when only the client is named (`explain --client NAME`,
        `--policy all`): a built-in policy's name or a policy TOML path; by default the
        built-in policy of its own name."""
        return self.name

    def reattaches_start_files(self, version: ClientVersion) -> bool:
        """Whether a touch attaches again a file loaded at start, at `version` (Claude Code
        2.1.197: an imported start file comes back with a read below it); otherwise it skips
        every file loaded so far."""
        return False

    def choose_version(self, asked: str | None, environ: Mapping[str, str]) -> ClientVersion:
        """The release a run models for `asked` (`versions.checked_asked`: None or `latest`
        for the newest, `installed` to ask the installed client, a release number)."""
        table = self.versions
        if table is None:
            # No particular release modelled: the newest and the installed one are the same
            # model (nothing to ask; `installed` for every agent of `--policy all`).
            if asked is None or asked in (LATEST, INSTALLED):
                return NO_VERSION._replace(asked=asked or "")
            raise RequestError(
                f"client version {asked}: ctxasm models no particular release of "
                f"{self.title}; leave --client-version out"
            )
        if asked != INSTALLED:
            return table.choose(asked)
        from .installed import installed_version  # runs a process: only when asked

        installed = installed_version(
            self.title, self.version_command, environ, self.version_environ
        )
        return table.choose(asked, installed.release)._replace(path_notes=installed.notes)

    @property
    def headless(self) -> Headless | None:
        """How to run its program headless against a local stand-in for its provider, and
        where its request carries the instruction files (`ctxasm verify`); None: it cannot
        be checked that way."""
        return None

    def touch(
        self, run: Run, state: S, target: Path, already: Collection[str]
    ) -> Discovery[S] | None:
        """What the agent attaches when it reads `target` (`state`: what `discover` kept;
        `already`: what it must not attach again, `touch_skips`); None when this agent loads
        nothing lazily."""
        return None

    def reading(self, run: Run) -> Reading:
        """How its loader reads text and follows imports at the release `run` models (its
        words, text processing, import rules): lint walks a file's imports with it too."""
        return AS_WRITTEN

    def follows_imports_outside_cwd(self, run: Run) -> bool:
        """Whether the agent started in `run`'s cwd follows an `@import` of a file outside
        that directory (Claude Code: when external imports are approved for the project).
        Lint asks it before discovering a deeper start for the imports it drops (CTX207)."""
        return False

    def check_file(
        self, path: Path, text: str | None, tracked: Tracked | None
    ) -> Sequence[FileNote]:
        """Its own checks of `path`, one of its files, from its text as read (None: it cannot
        be read, so only checks of where it is apply); `tracked`: the repository's tracked
        files (None outside git). Lint keeps what `lint_codes` lists."""
        return ()

    def check_key(self, path: Path) -> Hashable:
        """What of `path` its `check_file` depends on besides the text and the tracked files:
        lint checks one file once for all its paths with the same key (a thousand links to
        one file in a thousand directories). The default, the path itself, shares nothing;
        `role_key` is for checks of a file's kind and name."""
        return path

    def agents(self, run: Run, started: Sequence[Source] = ()) -> Agents:
        """The agent types its main agent can start as subagents at the release `run` models
        (`Agents`; none: it starts none), with what is wrong with their definitions; given
        what the main agent `started` with, also where that text speaks to subagents that
        will not see it (lint)."""
        return Agents(())

    def date(self, environ: Mapping[str, str]) -> str | None:
        """The date its environment fixes for the run (None: today's)."""
        return None

    def skill_text(self, skill: Skill, max_bytes: int) -> str:
        """The full text of a skill its discovery listed (`Discovery.skills`), as the agent
        expands it when the model invokes it, read now; only a client that lists skills has
        one to expand."""
        raise SkillError(f"{skill.name}: {self.title} lists no skills")

    def after_compact(
        self,
        sources: Sequence[Source],
        reads: Sequence[tuple[str, str]],
        skills: Sequence[tuple[Skill, str]],
        compaction: Compaction,
        version: ClientVersion,
        disk: Disk,
        max_bytes: int,
    ) -> AfterCompact | None:
        """What the model has in the first request after `compaction` of a conversation whose
        context is `sources` (`reads`: the files the model read, as (absolute path, display);
        `skills`: those invoked, with their bodies); None: this agent's compaction is not
        modelled."""
        return None

    def compaction_profile(
        self, version: ClientVersion, environ: Mapping[str, str], context_window: int | None
    ) -> CompactionProfile | None:
        """How this agent's runtime compacts at `version` (`conversation.Conversation` follows
        it); None: not modelled."""
        return None

    def managed_dir(self, platform: str) -> Path | None:
        """Where the machine's administrator puts this agent's managed policy on `platform`
        (`sys.platform`); None: it reads none."""
        return None

    def user_dir(self, home: Path) -> Path | None:
        """The directory of the user's own files of this agent in `home`, whose imports may
        reach anywhere (None: it has none)."""
        return None


def touch_skips(client: Client[Any], version: ClientVersion, loaded: Iterable[Source]) -> list[str]:
    """The paths a touch must not attach again (`Client.touch`'s `already`): every file loaded
    so far, or, for an agent that attaches again what it loaded at start
    (`reattaches_start_files` at `version`), only what earlier reads attached."""
    if client.reattaches_start_files(version):
        return [s.path for s in loaded if s.read_attached]
    return [s.path for s in loaded]
