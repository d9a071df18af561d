"""`ctxasm lint`: check instruction files the way the pre-commit hook and CI need.

With files: each file is checked on its own and against the context it loads with (results
never depend on how pre-commit splits the list). Without files: every instruction file under
the directory, plus the whole context of every directory that holds instruction files.
With `--cwd DIR`: also the whole context of DIR.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from . import locations
from .errors import AssemblerError
from .gitinfo import GitRepo
from .lint_context import ContextChecker
from .lint_file import FileChecker, Finding, classify
from .lint_rules import BY_CODE, LEVELS, RULES
from .policy import Policy, resolve_policy

# Names the hook runs on (see .pre-commit-hooks.yaml); the same set lint looks for by itself.
INSTRUCTION_FILE = re.compile(
    r"(?:^|/)(?:CLAUDE\.md|CLAUDE\.local\.md|MEMORY\.md|AGENTS\.md|GEMINI\.md|\.claude/CLAUDE\.md|\.claude/rules/.+)$"
)
_SUPPRESS = re.compile(r"<!--\s*ctxasm:\s*(disable(?:-next-line)?)\s*=\s*([A-Za-z0-9_,\s]+?)\s*-->")
_SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist", "build"}
)


class LintError(AssemblerError):
    """A usage problem: a file that does not exist, an unknown code."""


class LintResult(NamedTuple):
    findings: tuple[Finding, ...]
    files: tuple[str, ...]

    @property
    def failed(self) -> bool:
        return any(f.severity in ("error", "warning") for f in self.findings)


class _Suppressed(NamedTuple):
    everywhere: frozenset[str]
    by_line: Mapping[int, frozenset[str]]

    def hides(self, finding: Finding) -> bool:
        def match(codes: frozenset[str]) -> bool:
            return "all" in codes or finding.code in codes

        return match(self.everywhere) or match(self.by_line.get(finding.line, frozenset()))


def suppressions(text: str) -> _Suppressed:
    """`<!-- ctxasm: disable=CTX101,CTX501 -->` (whole file) and `disable-next-line=...`."""
    everywhere: set[str] = set()
    by_line: dict[int, frozenset[str]] = {}
    for match in _SUPPRESS.finditer(text):
        codes = frozenset(c.strip() for c in re.split(r"[,\s]+", match.group(2)) if c.strip())
        if match.group(1) == "disable":
            everywhere |= codes
        else:
            line = text.count("\n", 0, match.end()) + 2
            by_line[line] = by_line.get(line, frozenset()) | codes
    return _Suppressed(frozenset(everywhere), by_line)


def _levels(policy: Policy, select: Sequence[str], ignore: Sequence[str]) -> dict[str, str]:
    """The effective severity of every code ("off" when not selected)."""
    chosen_select = tuple(select) or policy.lint_select
    chosen_ignore = (*policy.lint_ignore, *ignore)
    for code in (*chosen_select, *chosen_ignore):
        if not any(rule.code.startswith(code) for rule in RULES):
            raise LintError(
                f"{code}: no such lint code; the codes are listed in the README (CTX001-CTX601)"
            )
    overrides = dict(policy.lint_severity)
    for code, level in overrides.items():
        if code not in BY_CODE:
            raise LintError(
                f"{policy.origin}: lint.severity names unknown code '{code}'; use a CTX code"
            )
        assert level in LEVELS
    levels = {}
    for rule in RULES:
        on = (not chosen_select or any(rule.code.startswith(c) for c in chosen_select)) and not any(
            rule.code.startswith(c) for c in chosen_ignore
        )
        levels[rule.code] = overrides.get(rule.code, rule.severity) if on else "off"
    return levels


def _discover_files(root: Path, repo: GitRepo | None) -> list[Path]:
    """Instruction files under `root`: git's view (tracked + untracked, not ignored), else a walk."""
    if repo is not None:
        base = repo.relative(root)
        names = repo.listed(untracked=True)
        if names and base is not None:
            prefix = "" if base in ("", ".") else base + "/"
            return sorted(
                repo.root / n
                for n in set(names)
                if n.startswith(prefix) and INSTRUCTION_FILE.search(n)
            )
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            path = Path(directory) / name
            if INSTRUCTION_FILE.search(path.relative_to(root).as_posix()):
                found.append(path)
    return found


def lint(
    files: Sequence[str | os.PathLike[str]] = (),
    *,
    cwd: str | os.PathLike[str] | None = None,
    base: str | os.PathLike[str] | None = None,
    policy: str | os.PathLike[str] | Policy | None = None,
    home: str | os.PathLike[str] | None = None,
    managed_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    max_tokens: int | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> LintResult:
    """Lint `files` (or every instruction file under `base`); paths are shown relative to `base`."""
    here = Path(os.path.abspath(base if base is not None else os.getcwd()))
    start = Path(os.path.abspath(cwd)) if cwd is not None else here
    git_root = locations.find_git_root(start)
    chosen = resolve_policy(policy, start, git_root or start)
    levels = _levels(chosen, select, ignore)
    home_dir = Path(home) if home is not None else locations.default_home()
    managed = Path(managed_dir) if managed_dir is not None else locations.default_managed_dir()
    env = dict(locations.default_environ() if environ is None else environ)
    repos: dict[Path, GitRepo | None] = {}

    def repo_for(directory: Path) -> GitRepo | None:
        root = locations.find_git_root(directory)
        if root is None:
            return None
        if root not in repos:
            repo = repos[root] = GitRepo(root)
            repo.prefetch()  # most checks of a repository's files want its file list
        return repos[root]

    paths = [Path(os.path.abspath(here / f)) for f in files]
    for path in paths:
        if not os.path.lexists(path):
            raise LintError(f"{_shown(path, here)}: no such file; pass existing instruction files")
    whole_tree = not files and cwd is None
    if whole_tree:
        paths = _discover_files(here, repo_for(here))
    context = ContextChecker(chosen, home_dir, managed, env, max_tokens or 0)
    findings: list[Finding] = []
    load_dirs: set[Path] = set()
    for path in paths:
        if _links_to_instruction_file(path):
            continue  # its target is linted under its own name: report each problem once
        info = classify(path, _shown(path, here))
        repo = repo_for(path.parent)
        checked = FileChecker(chosen, home_dir, repo).check(info)
        found = list(checked.findings)
        if checked.text is not None:
            found += context.duplicates(info, checked.text, checked.body)
            found += context.dropped_for_deeper_starts(info, checked.text, repo)
            hidden = suppressions(checked.text)
            found = [f for f in found if not hidden.hides(f)]
        findings += found
        if info.kind in ("claude", "local", "rule"):
            load_dirs.add(info.load_dir)
    budget_dirs = sorted(load_dirs) if whole_tree else ([start] if cwd is not None else [])
    for directory in budget_dirs:
        findings += context.over_budget(directory, here)
    for known in repos.values():
        if known is not None:
            known.close()
    return _finish(findings, levels, paths, here)


def _finish(
    findings: Iterable[Finding], levels: Mapping[str, str], paths: Sequence[Path], here: Path
) -> LintResult:
    kept = sorted(
        {f._replace(severity=levels[f.code]) for f in findings if levels[f.code] != "off"},
        key=lambda f: (f.path, f.line, f.col, f.code, f.message),
    )
    return LintResult(tuple(kept), tuple(_shown(p, here) for p in paths))


def _links_to_instruction_file(path: Path) -> bool:
    """`CLAUDE.md -> AGENTS.md` and the like: the same text under another instruction name."""
    if not path.is_symlink():
        return False
    real = Path(os.path.realpath(path))
    return real.is_file() and INSTRUCTION_FILE.search(real.as_posix()) is not None


def _shown(path: Path, here: Path) -> str:
    try:
        return path.relative_to(here).as_posix()
    except ValueError:
        return path.as_posix()
