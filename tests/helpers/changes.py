"""The kinds of change on disk that a kept result must notice, shared by the `Assembler` and
the plain `assemble()` reuse tests."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers.trees import build

CHANGES = (
    "edit",
    "same-size-edit",
    "atomic-save",
    "delete",
    "new-local",
    "new-rules-dir",
    "new-rule",
    "import-target",
    "settings-exclude",
    "project-config",
    "git-root",
    "memory",
    "skill",
    "symlink-target",
)


def apply_change(
    change: str, tmp_path: Path, repo: Path, cwd: Path, before: Any, settle: Callable[[], Any]
) -> None:
    """Make `change` to the tree of `tests.live.test_assembler.project` (cwd: `repo/src`);
    `before` is the result kept so far, `settle()` keeps a new one (for two-step changes)."""
    if change == "edit":
        (repo / "CLAUDE.md").write_text("Root, edited. @docs/guide.md")
    elif change == "same-size-edit":  # and the old modification time put back
        path = repo / "CLAUDE.md"
        st = path.stat()
        path.write_text("Toor. @docs/guide.md")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif change == "atomic-save":
        (repo / ".CLAUDE.md.swp").write_text("Root, saved atomically.")
        os.replace(repo / ".CLAUDE.md.swp", repo / "CLAUDE.md")
    elif change == "delete":
        (repo / "CLAUDE.md").unlink()
    elif change == "new-local":
        (cwd / "CLAUDE.local.md").write_text("Mine.")
    elif change == "new-rules-dir":
        build(cwd, {".claude/rules/deep/new.md": "New rule."})
    elif change == "new-rule":
        (repo / ".claude" / "rules" / "new.md").write_text("New rule.")
    elif change == "import-target":
        (cwd / "CLAUDE.md").write_text("Sources. @later.md")
        settle()
        (cwd / "later.md").write_text("Imported once it exists.")
    elif change == "settings-exclude":
        build(
            tmp_path,
            {"home/.claude/settings.json": json.dumps({"claudeMdExcludes": ["**/src/CLAUDE.md"]})},
        )
    elif change == "project-config":
        (repo / ".ctxasm.toml").write_text('[render]\nboundary = ""\n')
    elif change == "git-root":
        (cwd / ".git").mkdir()
    elif change == "memory":
        from assembler.clients.claude_code.settings import auto_memory

        found = auto_memory(before.context, before.state)
        assert found is not None
        build(found.path.parent, {"MEMORY.md": "- remembered"})
    elif change == "skill":
        build(repo, {".claude/skills/deploy/SKILL.md": "---\ndescription: Ship it.\n---\nSteps."})
    elif change == "symlink-target":  # an imported symlink pointed elsewhere
        build(repo, {"docs/other.md": "Other guide.", "docs/link.md": "Linked."})
        (cwd / "CLAUDE.md").write_text("Sources. @link.md")
        os.symlink(repo / "docs" / "other.md", cwd / "link.md")
        settle()
        (cwd / "link.md").unlink()
        os.symlink(repo / "docs" / "link.md", cwd / "link.md")
    else:
        raise AssertionError(f"unknown change {change!r}")
