"""Instruction trees of the Cursor and Copilot clients: every rule kind, nested scopes, and
the touched files that attach them (shared by the client tests and the golden files)."""

from __future__ import annotations

from pathlib import Path

from assembler import Assembly, assemble

from .trees import build, git_init, machine

CURSOR_TREE: dict[str, str | None] = {
    # always (alwaysApply: true), with a description too
    "repo/.cursor/rules/style.mdc": "---\ndescription: House style\nalwaysApply: true\n---\nUse tabs.\n",
    # auto attached, globs as a comma string, in a subdirectory of the rules directory
    "repo/.cursor/rules/web/react.mdc": (
        '---\nglobs: "src/**/*.tsx, src/**/*.{js,jsx}"\nalwaysApply: false\n---\n'
        "Function components only.\n"
    ),
    # auto attached, globs as a YAML list, with a description (globs decide)
    "repo/.cursor/rules/python.mdc": (
        "---\ndescription: Python\nglobs:\n  - '**/*.py'\n  - scripts/*.sh\n---\n"
        "Type hints everywhere.\n"
    ),
    # agent requested (a description only)
    "repo/.cursor/rules/migrations.mdc": (
        "---\ndescription: Writing database migrations\nalwaysApply: false\n---\n"
        "Migrations are reversible.\n"
    ),
    # manual (nothing that applies it)
    "repo/.cursor/rules/release.mdc": "---\nalwaysApply: false\n---\nRelease checklist.\n",
    # not .mdc: Cursor ignores it
    "repo/.cursor/rules/notes.md": "Never read.\n",
    "repo/.cursorrules": "Legacy rules.\n",
    "repo/AGENTS.md": "Root agents.\n",
    # a nested scope: its own AGENTS.md and .cursor/rules (globs relative to pkg/api)
    "repo/pkg/api/AGENTS.md": "API agents.\n",
    "repo/pkg/api/.cursor/rules/api.mdc": "---\nalwaysApply: true\n---\nAPI always rule.\n",
    "repo/pkg/api/.cursor/rules/handlers.mdc": "---\nglobs: handlers/*.py\n---\nHandlers rule.\n",
    "repo/pkg/api/.cursorrules": "Nested legacy file: never read.\n",
    "repo/src/app.tsx": "",
    "repo/src/util.js": "",
    "repo/scripts/deploy.sh": "",
    "repo/README.md": "",
    "repo/pkg/api/handlers/user.py": "",
}

COPILOT_TREE: dict[str, str | None] = {
    "repo/.github/copilot-instructions.md": "Repository-wide.\n",
    "repo/.github/instructions/all.instructions.md": '---\napplyTo: "**"\n---\nAll files.\n',
    "repo/.github/instructions/frontend/ts.instructions.md": (
        '---\napplyTo: "src/**/*.ts,src/**/*.tsx"\n---\nTypeScript.\n'
    ),
    "repo/.github/instructions/review.instructions.md": (
        '---\napplyTo: "**"\nexcludeAgent: "coding-agent"\n---\nReview only.\n'
    ),
    "repo/.github/instructions/python.instructions.md": (
        '---\napplyTo: "**/*.py"\nexcludeAgent: "code-review"\n---\nPython, agent only.\n'
    ),
    "repo/.github/instructions/loose.instructions.md": "No applyTo: attached by hand.\n",
    "repo/AGENTS.md": "Root agents.\n",
    "repo/pkg/AGENTS.md": "Pkg agents.\n",
    "repo/pkg/api/AGENTS.md": "API agents.\n",
    "repo/src/app.ts": "",
    "repo/src/deep/view.tsx": "",
    "repo/pkg/api/x.py": "",
    "repo/pkg/lib/y.py": "",
}


def tree(tmp: Path, files: dict[str, str | None]) -> Path:
    """`files` under `tmp`, its `repo/` a git repository; the repository's path."""
    repo = git_init(tmp / "repo")
    build(tmp, files)
    return repo


def cursor_assembly(tmp: Path) -> Assembly:
    """The Cursor tree at its root, with a React file and a nested handler touched."""
    repo = tree(tmp, CURSOR_TREE)
    a = assemble(repo, policy="cursor", **machine(tmp))
    return a.touch(repo / "src" / "app.tsx").touch(repo / "pkg" / "api" / "handlers" / "user.py")


def copilot_assembly(tmp: Path) -> Assembly:
    """The Copilot tree in `pkg/`, with a TypeScript file and a Python file touched."""
    repo = tree(tmp, COPILOT_TREE)
    a = assemble(repo / "pkg", policy="copilot", **machine(tmp))
    return a.touch(repo / "src" / "app.ts").touch(repo / "pkg" / "api" / "x.py")
