"""Values passed between the pipeline stages: frozen, slotted, tuple-valued.

The policy's values live here too (`Policy`, `Limits`, ...): every stage reads them, and the
module that loads policies (`policy`) sits above the client registry it validates against.

Unlike the rest of the package, this module does not use `from __future__ import annotations`:
`typing.NamedTuple` turns each string annotation into a `ForwardRef` by compiling it, and the
~90 fields defined here would cost every `ctxasm` start some 3 ms for nothing. Every name in
an annotation here is defined above its use.
"""

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Protocol

from .display import shown

if TYPE_CHECKING:
    from .compaction import AfterCompact

# Any `Callable[[str], int]` counts tokens; `tokens.estimate_tokens` is the default.
TokenCounter = Callable[[str], int]
BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
SKILLS_TAG = "skills"  # the skills index's section
RULES_INDEX_TAG = "requested_rules"  # the index of rules an agent fetches by description


class Layer(enum.Enum):
    """One tier of stability, most stable first (the declaration order is the order)."""

    BASE = "base"
    MANAGED = "managed"
    USER = "user"
    PROJECT = "project"
    LOCAL = "local"
    SUBDIRECTORY = "subdirectory"
    MEMORY = "memory"
    ENVIRONMENT = "environment"

    @property
    def rank(self) -> int:
        return _LAYER_RANK[self]


_LAYER_RANK = {layer: i for i, layer in enumerate(Layer)}


class Severity(enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Why(enum.Enum):
    """Why a source is in the assembly."""

    MANAGED_FILE = "managed file"
    MANAGED_SETTINGS = "managed settings"
    MANAGED_RULE = "managed rule"
    USER_FILE = "user file"
    USER_RULE = "user rule"
    CWD = "in cwd"
    ANCESTOR = "ancestor of cwd"
    RULE = "rule"
    IMPORT = "import"
    AUTO_MEMORY = "auto memory"
    NESTED = "nested directory of a touched path"
    HOOK = "attached by a plugin's hook on a read"
    RULE_MATCHED = "conditional rule matched a touched path"
    WORKSPACE = "workspace file"
    SKILLS = "skills index"
    RULES_INDEX = "agent-requested rules index"
    ENVIRONMENT = "environment"


class Reason(NamedTuple):
    """Provenance: why a source was included, in words a person can check."""

    why: Why
    text: str
    parent: str | None = None
    depth: int = 0
    pattern: str | None = None
    touched: str | None = None


class Stats(NamedTuple):
    lines: int
    bytes: int
    chars: int
    tokens: int


class Cut(NamedTuple):
    """Something the budgeter removed from a source: how much and why."""

    kind: str
    reason: str
    lines: int
    chars: int
    tokens: int


class Diagnostic(NamedTuple):
    """A finding about one file (or the whole run): code, severity, one line of text."""

    code: str
    severity: Severity
    path: str
    message: str

    def line(self) -> str:
        """The one line render, watch and explain print (names in their display form)."""
        return f"{shown(self.path)}: {self.severity.value}: {shown(self.message)} [{self.code}]"


class Source(NamedTuple):
    """One loaded piece of text and everything known about where it came from."""

    layer: Layer
    path: str
    display: str
    reason: Reason
    content: str
    stats: Stats
    tag: str
    original: Stats
    raw: str = ""
    is_index: bool = False
    cuts: tuple[Cut, ...] = ()
    paths: tuple[str, ...] = ()
    lazy: bool = False
    dropped: bool = False
    cut_detail: bool = False  # an index whose cut warning says which lines were cut

    @property
    def read_attached(self) -> bool:
        """Attached when the agent read a file (lazy loading), not loaded at start: the same
        file may be both, as the client attaches again what it only loaded at start."""
        return self.layer is Layer.SUBDIRECTORY

    @property
    def key(self) -> tuple[str, bool]:
        """What tells the sources of one assembly apart: the path, and `read_attached`."""
        return self.path, self.read_attached


class Skill(NamedTuple):
    """One listed skill: what the skills index shows, and where its full text is."""

    name: str
    description: str
    path: str  # the SKILL.md as reached (through a symlinked directory: the link's path)
    display: str
    layer: Layer
    directory: str  # the skill's directory name (the client's command name)


# --- policy values ------------------------------------------------------------------------


class RulesOrder(enum.Enum):
    """How a rules directory is read: as the client does, or sorted for every machine alike."""

    DIRECTORY = "directory"  # raw `os.scandir` order, as the client reads rules
    NAME = "name"


class Limits(NamedTuple):
    file_chars: int = 0
    truncation_marker: str = "\n...(truncated)"
    # The largest file read; a client's policy sets its own skip (ctxasm's bound otherwise).
    skip_bytes: int = 4 * 1024 * 1024
    # 0: the agent has no such limit. Each client's policy (`policies/`) sets its own.
    large_file_chars: int = 0
    index_lines: int = 0
    index_chars: int = 0
    max_tokens: int = 0


class ContentRules(NamedTuple):
    strip_frontmatter: bool = True
    strip_html_comments: bool = True
    skip_empty: bool = True


class WorkspaceFile(NamedTuple):
    path: str
    tag: str
    layer: Layer
    is_index: bool = False


class LintSettings(NamedTuple):
    """The `[lint]` table: which codes, at which severity, and the size guidance."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()  # CODE -> "error" | "warning" | "info" | "off"
    # The agent's guidance for one instruction file (its policy's `[lint]`); 0: none.
    max_lines: int = 0
    max_bytes: int = 0


class Policy(NamedTuple):
    """Where to look (the client), the limits, and how to render. Built by `policy.load_policy`,
    which checks `client` and `format` against their registries."""

    name: str
    origin: str
    client: str
    description: str = ""
    limits: Limits = Limits()
    content: ContentRules = ContentRules()
    imports: bool = True
    import_depth: int = 4
    rules_order: RulesOrder = RulesOrder.DIRECTORY
    format: str = "xml"
    order: tuple[str, ...] = ()
    boundary: str = BOUNDARY
    static_layers: tuple[Layer, ...] = (Layer.BASE, Layer.MANAGED)
    source_attribute: bool = True
    tags: tuple[tuple[Layer, str], ...] = ()
    workspace: tuple[WorkspaceFile, ...] = ()
    missing_text: str = "(file not found)"
    skills: bool = True  # the `<skills>` index, for clients that list skills
    lint: LintSettings = LintSettings()

    def tag_for(self, layer: Layer) -> str:
        return dict(self.tags).get(layer, layer.value)


# --- what the renderers read --------------------------------------------------------------


class AgentType(NamedTuple):
    """An agent the client's main agent can start inside a session (a subagent), and what it
    receives at its start."""

    name: str
    description: str
    origin: str  # "built-in", or the definition file's path as shown
    instructions: bool  # the instruction files loaded at start, as the main agent has them
    skills: bool  # the skills list
    tools: tuple[str, ...]  # its tools by name; () for all of the main agent's
    excluded: tuple[str, ...] = ()  # with all tools: those left out
    prompt: str = ""  # its own prompt (a custom agent's body)
    model: str = ""  # its model as the client names it; "" for the main agent's
    # A fork: the main agent's whole conversation, its attached files included and shared.
    shares_parent: bool = False


class Assembled(Protocol):
    """What rendering needs of an assembly (`assembly.Assembly` is one). The renderers depend
    on this shape, not on the module that assembles, so that module can call them."""

    @property
    def policy(self) -> Policy: ...
    @property
    def sources(self) -> tuple[Source, ...]: ...
    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]: ...
    @property
    def touched(self) -> tuple[str, ...]: ...
    @property
    def date(self) -> str: ...
    @property
    def counter(self) -> TokenCounter: ...
    @property
    def cwd(self) -> str:
        """The directory the agent starts in, absolute (a client's format may name it)."""
        ...

    @property
    def client_version(self) -> str:
        """The release of the client modelled ("": none in particular)."""
        ...

    @property
    def agent(self) -> AgentType | None:
        """The subagent whose context this is (None: the main agent's)."""
        ...

    @property
    def compacted(self) -> "AfterCompact | None":
        """The first request after a compaction, when one was asked for (`after_compact`)."""
        ...
