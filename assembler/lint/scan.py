"""What lint learns from one file's content, once per file, and how much one run may scan.

Many paths can reach one file: 300 directories whose instruction file links to one shared
file, a rule linked into every project of a monorepo, hard links. Lint reports at every
path, but its content checks (reading, comment stripping, the secret scan, forged structure,
frontmatter, suppressions, paragraphs, a client's own checks of the text) depend on the file,
not on the name it is reached by: they run once per file, found by its identity (its `stat`
signature, as `discovery.cache` shares processing), and what they found is reported at each
path (`Scan`). Lint checks the paths of one file one after the other (`by_file`), so that one
file's scan is held at a time.

What a file's checks find is held capped (`hold`): the first `MAX_PER_CODE` findings of each
code, the next one, and how many more there are; reporting a file of 60,000 secrets at 10,000
paths costs 10,000 short reports, not 600 million findings.

The content checks of one run scan at most `MAX_SCAN_CHARS` characters, all files together
(`ScanBudget`): a file whose size does not fit in what is left is not read, a comparison at
one path that does not fit is not made, and lint says where it stopped (`CTX008`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from ..discovery.cache import Signature, of_stat
from ..discovery.reader import ReadResult, ReadStatus
from ..parsing.parse import Parsed
from ..parsing.positions import Lines

T = TypeVar("T")

# Findings of one code in one file past this many are counted in one CTX008 finding, so that
# a hostile file (60,000 secrets, 200,000 missing imports) gives a bounded report.
MAX_PER_CODE = 100
# Characters the content checks of one run scan, all files together: 64 files at the client's
# 4 MiB limit, or 50,000 files of 5 KB (some ten seconds of checks on a laptop); a repository
# of links to one file costs that file once.
MAX_SCAN_CHARS = 256 * 1024 * 1024
# Imports lint's walks follow in one run, all files together (each file follows at most
# `files.IMPORT_WALK_BUDGET`): 100 files at that limit. Each path walks its own, since what an
# import loads depends on where the agent starts: 10,000 links to one file of 2,000 imports
# walked 20 million.
MAX_RUN_IMPORTS = 200_000


class ScanBudget:
    """The characters one run's content checks may still scan, the imports its walks may
    still follow, and the paths whose checks did not fit (in the order they were met)."""

    __slots__ = ("_skipped", "imports", "imports_left", "limit", "scanned")

    def __init__(self, limit: int = MAX_SCAN_CHARS, imports: int = MAX_RUN_IMPORTS) -> None:
        self.limit = limit
        self.scanned = 0  # characters scanned so far
        self.imports = self.imports_left = imports
        self._skipped: dict[str, None] = {}

    def fits(self, chars: int) -> bool:
        return self.scanned + chars <= self.limit

    def charge(self, chars: int) -> None:
        self.scanned += chars

    def take(self, chars: int, shown: str) -> bool:
        """Whether `chars` more may be scanned for the path `shown` (then they are counted);
        when not, the path is noted as not fully checked."""
        if not self.fits(chars):
            self.skip(shown)
            return False
        self.scanned += chars
        return True

    def skip(self, shown: str) -> None:
        self._skipped.setdefault(shown)

    @property
    def skipped(self) -> tuple[str, ...]:
        """The paths some check was not made for, the first first."""
        return tuple(self._skipped)


# --- suppressions -------------------------------------------------------------------------

_SUPPRESS = re.compile(r"<!--\s*ctxasm:\s*(disable(?:-next-line)?)\s*=\s*([A-Za-z0-9_,\s]+?)\s*-->")


class Suppressed(NamedTuple):
    everywhere: frozenset[str]
    by_line: Mapping[int, frozenset[str]]

    def hides_at(self, line: int, code: str) -> bool:
        def match(codes: frozenset[str]) -> bool:
            return "all" in codes or code in codes

        return match(self.everywhere) or match(self.by_line.get(line, frozenset()))

    def hides(self, finding: Any) -> bool:
        """Whether the finding (anything with a `line` and a `code`) is suppressed."""
        return self.hides_at(finding.line, finding.code)


NOTHING_SUPPRESSED = Suppressed(frozenset(), {})


def suppressions(text: str) -> Suppressed:
    """`<!-- ctxasm: disable=CTX101,CTX501 -->` (whole file) and `disable-next-line=...`."""
    everywhere: set[str] = set()
    by_line: dict[int, frozenset[str]] = {}
    for match in _SUPPRESS.finditer(text):
        found = frozenset(c.strip() for c in re.split(r"[,\s]+", match.group(2)) if c.strip())
        if match.group(1) == "disable":
            everywhere |= found
        else:
            line = text.count("\n", 0, match.end()) + 2
            by_line[line] = by_line.get(line, frozenset()) | found
    return Suppressed(frozenset(everywhere), by_line)


# --- findings held capped -----------------------------------------------------------------


class Held(NamedTuple):
    """The findings of one code a file's checks made, capped: the first `MAX_PER_CODE` + 1 by
    position (line, column, message), and how many more there are (all after them)."""

    code: str
    kept: tuple[tuple[int, int, str], ...]
    more: int


def hold(found: Iterable[tuple[int, int, str, str]], hidden: Suppressed) -> tuple[Held, ...]:
    """(line, col, code, message) findings, those `hidden` suppresses left out, held capped."""
    groups: dict[str, list[tuple[int, int, str]]] = {}
    for line, col, code, message in dict.fromkeys(found):
        if not hidden.hides_at(line, code):
            groups.setdefault(code, []).append((line, col, message))
    out = []
    for code, group in groups.items():
        group.sort()
        out.append(
            Held(code, tuple(group[: MAX_PER_CODE + 1]), max(0, len(group) - MAX_PER_CODE - 1))
        )
    return tuple(out)


# --- one file's scan ----------------------------------------------------------------------


class Scan:
    """One file's text and what its content checks found, for every path that reaches it
    (`lint.files.FileChecker.scan` makes it). `skipped`: not read, the run's budget spent."""

    __slots__ = (
        "_memo",
        "held",
        "hidden",
        "lines",
        "newlines",
        "parsed",
        "result",
        "skipped",
        "text",
    )

    def __init__(
        self,
        result: ReadResult,
        text: str | None = None,
        parsed: Parsed | None = None,
        held: tuple[Held, ...] = (),
        hidden: Suppressed = NOTHING_SUPPRESSED,
        *,
        skipped: bool = False,
    ) -> None:
        self.result = result._replace(text="", data=b"")  # the text is `text`, held once
        self.text = text
        self.parsed = parsed
        self.lines = Lines(text) if text is not None else None
        self.newlines = text.count("\n") if text is not None else 0
        self.held = held
        self.hidden = hidden
        self.skipped = skipped
        self._memo: dict[Hashable, Any] = {}

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """What `compute` gives for this file (a check that depends on the file and `key`),
        computed once for all its paths."""
        if key not in self._memo:
            self._memo[key] = compute()
        found: T = self._memo[key]
        return found

    def known(self, key: Hashable) -> Any:
        """What `remember` kept under `key` (None: nothing yet)."""
        return self._memo.get(key)

    def remember(self, key: Hashable, value: object) -> None:
        self._memo[key] = value


SKIPPED = ReadResult(ReadStatus.OK)


class Scans:
    """The scan of the file whose paths lint is checking: `by_file` brings a file's paths
    together, so one scan is held at a time."""

    __slots__ = ("_key", "_scan", "budget")

    def __init__(self, budget: ScanBudget) -> None:
        self.budget = budget
        self._key: Signature | None = None
        self._scan: Scan | None = None

    def of(self, st: os.stat_result | None, compute: Callable[[], Scan]) -> Scan:
        """The scan of the file `st` describes (None: a path that is no regular file, scanned
        on its own)."""
        key = of_stat(st) if st is not None and stat.S_ISREG(st.st_mode) else None
        if key is not None and key == self._key and self._scan is not None:
            return self._scan
        scan = compute()
        if key is not None and not scan.skipped:  # a skipped file is noted at each path
            self._key, self._scan = key, scan
        return scan


def by_file(paths: Iterable[Path]) -> list[tuple[Path, os.stat_result | None]]:
    """`paths` with the `stat` of what each reaches, the paths of one file together, in the
    order each file is first met; a path that is no regular file stands alone."""
    groups: dict[object, list[tuple[Path, os.stat_result | None]]] = {}
    for path in paths:
        try:
            st: os.stat_result | None = os.stat(path)
        except (OSError, ValueError):
            st = None
        key = of_stat(st) if st is not None and stat.S_ISREG(st.st_mode) else (path,)
        groups.setdefault(key, []).append((path, st))
    return [item for group in groups.values() for item in group]
