"""Values passed between the pipeline stages: frozen, slotted, tuple-valued."""

from __future__ import annotations

import enum
from typing import NamedTuple


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
    MANAGED_SETTINGS = "managed settings claudeMd"
    MANAGED_RULE = "managed rule"
    USER_FILE = "user file"
    USER_RULE = "user rule"
    CWD = "in cwd"
    ANCESTOR = "ancestor of cwd"
    RULE = "rule"
    IMPORT = "import"
    AUTO_MEMORY = "auto memory"
    NESTED = "nested directory of a touched path"
    RULE_MATCHED = "conditional rule matched a touched path"
    WORKSPACE = "workspace file"
    SKILLS = "skills index"
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
        return f"{self.path}: {self.severity.value}: {self.message} [{self.code}]"


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
