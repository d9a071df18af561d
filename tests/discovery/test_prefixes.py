"""Discoveries sharing `Prefixes` give exactly what a discovery on its own gives.

A discovery that resumes from a directory above its cwd must load the same sources in the
same order, with the same diagnostics, as one that walks from the root: whatever the order the
directories are discovered in, whether external imports are approved, and wherever imports
point (into a sibling subtree, which is inside one cwd and outside another).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.clients import registry
from assembler.discovery.context import Discovery, Run, build_context
from assembler.discovery.disk import Disk, QuietObserver
from assembler.discovery.prefixes import Prefixes
from assembler.model import Policy
from assembler.policy import resolve_policy
from assembler.tokens import estimate_tokens
from tests.helpers.trees import build, git_init

CLIENT = registry.get("claude-code")


ENVIRON: dict[str, str] = {}
_POLICIES: dict[Path, Policy] = {}


def _discover(
    repo: Path, tmp: Path, cwd: Path, prefixes: Prefixes[Any] | None, disk: Disk | None = None
) -> Discovery[Any]:
    """One discovery; the policy and environment are the same objects for every discovery of
    `repo` (a `Prefixes` serves one run's)."""
    ctx = build_context(cwd, tmp / "home", tmp / "managed", ENVIRON, Disk())
    if repo not in _POLICIES:
        _POLICIES[repo] = resolve_policy(None, repo, repo)._replace(skills=False)
    return CLIENT.discover(Run(ctx, _POLICIES[repo], estimate_tokens, disk or Disk(), prefixes))


def _same(a: Discovery[Any], b: Discovery[Any]) -> None:
    assert a.sources == b.sources
    assert a.diagnostics == b.diagnostics
    assert a.conditional == b.conditional
    assert a.notes == b.notes


def _approve(tmp: Path, repo: Path) -> None:
    approval = {"projects": {str(repo): {"hasClaudeMdExternalIncludesApproved": True}}}
    build(tmp, {"home/.claude.json": json.dumps(approval)})


def _check_every_order(tmp: Path, repo: Path, cwds: list[Path]) -> None:
    alone = {cwd: _discover(repo, tmp, cwd, None) for cwd in cwds}
    shared: Prefixes[Any] = Prefixes()
    for cwd in cwds:
        _same(_discover(repo, tmp, cwd, shared), alone[cwd])


def test_a_level_is_resumed_only_from_the_level_it_was_built_on(tmp_path: Path) -> None:
    """x/a decides the root's import of x/y/doc.md as outside; x/y, inside (and keeps its
    own x level); x/y/z must drop it again, though x/a's x level holds for it and x/y's y
    level was built on x/y's x level."""
    repo = git_init(tmp_path / "repo")
    build(
        repo,
        {
            "CLAUDE.md": "root, see @x/y/doc.md\n",
            "x/y/doc.md": "the doc\n",
            "x/a/CLAUDE.md": "a\n",
            "x/y/CLAUDE.md": "y\n",
            "x/y/z/CLAUDE.md": "z\n",
        },
    )
    _check_every_order(tmp_path, repo, [repo / "x/a", repo / "x/y", repo / "x/y/z"])
    z = _discover(repo, tmp_path, repo / "x/y/z", None)
    assert "x/y/doc.md" not in [s.display for s in z.sources]  # dropped: outside x/y/z


def test_siblings_share_the_walk_down_to_them(tmp_path: Path) -> None:
    """The second sibling's discovery does not look at the root's candidates again."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "root\n", "a/CLAUDE.md": "a\n", "b/CLAUDE.md": "b\n"})

    class Seen(QuietObserver):
        def __init__(self) -> None:
            self.paths: list[str] = []

        def saw(self, path: str) -> None:
            self.paths.append(path)

    shared: Prefixes[Any] = Prefixes()
    _discover(repo, tmp_path, repo / "a", shared)
    alone, resumed = Seen(), Seen()
    _same(
        _discover(repo, tmp_path, repo / "b", shared, Disk(resumed)),
        _discover(repo, tmp_path, repo / "b", None, Disk(alone)),
    )
    root_file = str(repo / "CLAUDE.md")
    assert root_file in alone.paths
    assert root_file not in resumed.paths


def test_a_start_in_a_directory_it_resumed_from_names_its_files_as_cwd(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "root\n", "a/CLAUDE.md": "a\n", "a/b/CLAUDE.md": "b\n"})
    _check_every_order(tmp_path, repo, [repo / "a/b", repo / "a", repo / "a/b", repo])


def test_another_policy_does_not_use_a_memo_it_does_not_own(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "root <!-- hidden -->\n", "a/CLAUDE.md": "a\n"})
    shared: Prefixes[Any] = Prefixes()
    _discover(repo, tmp_path, repo / "a", shared)
    ctx = build_context(repo / "a", tmp_path / "home", tmp_path / "managed", ENVIRON, Disk())
    policy = _POLICIES[repo]
    keep = policy._replace(content=policy.content._replace(strip_html_comments=False))
    found = CLIENT.discover(Run(ctx, keep, estimate_tokens, Disk(), shared))
    assert "<!-- hidden -->" in found.sources[0].content


_DIRS = ("", "a", "a/b", "a/b/c", "a/d", "e", "e/f")
_KINDS = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", ".claude/rules/r.md")
_SETTINGS = (
    {"claudeMdExcludes": ["**/a/CLAUDE.md", "**/doc.md"]},
    {"claudeMdExcludes": "not a list"},
    {"autoMemoryDirectory": "~/moved"},
)


@st.composite
def _trees(draw: st.DrawFn) -> tuple[dict[str, str], bool, list[str]]:
    files: dict[str, str] = {}
    for directory in _DIRS:
        for kind in draw(st.lists(st.sampled_from(_KINDS), max_size=2, unique=True)):
            targets = draw(st.lists(st.sampled_from(_DIRS), max_size=3))
            imports = []
            for target in targets:
                name = f"{target}/doc.md".lstrip("/")
                if draw(st.booleans()):
                    name = name.upper() if draw(st.booleans()) else name  # case-folded
                files.setdefault(f"{target}/doc.md".lstrip("/"), f"doc in {target or 'root'}\n")
                imports.append(f"@{os.path.relpath(name, directory or '.')}")
            files[f"{directory}/{kind}".lstrip("/")] = f"{directory} {kind} " + " ".join(imports)
        if draw(st.integers(0, 3)) == 0:  # settings of its own: excludes, or memory moved
            setting = draw(st.sampled_from(_SETTINGS))
            files[f"{directory}/.claude/settings.local.json".lstrip("/")] = json.dumps(setting)
    approved = draw(st.booleans())
    order = draw(st.permutations(_DIRS))
    return files, approved, list(order)


@settings(max_examples=40, deadline=None)
@given(_trees())
def test_shared_prefixes_never_change_a_discovery(
    case: tuple[dict[str, str], bool, list[str]],
) -> None:
    files, approved, order = case
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(os.path.realpath(name))
        repo = git_init(tmp / "repo")
        build(repo, files)
        for directory in _DIRS:
            (repo / directory).mkdir(parents=True, exist_ok=True)
        if approved:
            _approve(tmp, repo)
        _check_every_order(tmp, repo, [repo / d for d in order])


def test_past_what_it_may_hold_a_memo_keeps_no_more_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain thousands of directories deep, a file in each, would hold the square of its
    depth: past `MAX_HELD` the rest is discovered from the root, with the same results."""
    from assembler.discovery import prefixes

    monkeypatch.setattr(prefixes, "MAX_HELD", 12)
    repo = git_init(tmp_path / "repo")
    chain = [repo.joinpath(*["d"] * depth) for depth in range(8)]
    build(tmp_path, {str(d.relative_to(tmp_path) / "CLAUDE.md"): f"{d.name}\n" for d in chain})
    shared: Prefixes[Any] = Prefixes()
    for cwd in chain:
        _same(_discover(repo, tmp_path, cwd, shared), _discover(repo, tmp_path, cwd, None))
    assert 0 < shared.held <= 12


def test_a_root_importing_from_every_package_keeps_a_few_variants(tmp_path: Path) -> None:
    """Each package decides the root's imports differently: past `MAX_VARIANTS` kept
    variants of the root's level, a package's start walks from the root, with the same
    results (trying hundreds of variants made every start slower than walking)."""
    from assembler.discovery import prefixes

    packages = [f"p{i}" for i in range(prefixes.MAX_VARIANTS + 4)]
    repo = git_init(tmp_path / "repo")
    build(
        repo,
        {
            "CLAUDE.md": "root\n" + "\n".join(f"@{p}/doc.md" for p in packages) + "\n",
            **{f"{p}/doc.md": f"doc {p}\n" for p in packages},
            **{f"{p}/CLAUDE.md": f"package {p}\n" for p in packages},
        },
    )
    _check_every_order(tmp_path, repo, [repo / p for p in packages])
