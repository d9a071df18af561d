"""A client's numbers live with the client: its package (`assembler/clients/<agent>`) or its
policy file (`policies/<agent>.toml`). Claude Code's limits (200 lines and 25,000 bytes of
guidance, 40,000 characters before its large-file warning, a 200-line / 25,000-character
memory index) once sat in `model.py`'s defaults and `codes.py`'s summaries, and every other
agent's policy inherited them."""

from __future__ import annotations

import ast
from pathlib import Path

from assembler.model import Limits, LintSettings
from assembler.policy import load_policy

PACKAGE = Path(__file__).resolve().parent.parent / "assembler"
# Where a run's limits are decided and said: none of them may hold a client's number.
NEUTRAL = (
    "model.py",
    "codes.py",
    "budget.py",
    "policy.py",
    "assembly.py",
    "lint",
    "output",
    "live",
)
NUMBERS = {25_000, 40_000}
WORDS = ("200-line", "200 lines", "25,000", "40,000")


def _modules() -> list[Path]:
    found: list[Path] = []
    for name in NEUTRAL:
        path = PACKAGE / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def test_no_client_number_outside_its_client() -> None:
    hits = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Constant):
                continue
            value = node.value
            if (isinstance(value, int) and not isinstance(value, bool) and value in NUMBERS) or (
                isinstance(value, str) and any(word in value for word in WORDS)
            ):
                hits.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {value!r:.60}")
    assert not hits, "a client's number outside its client:\n" + "\n".join(hits)


def test_the_neutral_defaults_hold_no_limit() -> None:
    limits, lint = Limits(), LintSettings()
    assert (limits.large_file_chars, limits.index_lines, limits.index_chars) == (0, 0, 0)
    assert (lint.max_lines, lint.max_bytes) == (0, 0)


def test_only_claude_code_and_the_seed_have_its_limits() -> None:
    for name in ("codex", "gemini", "cursor", "copilot"):
        policy = load_policy(name)
        assert policy.lint.max_lines == policy.lint.max_bytes == 0, name
        assert policy.limits.large_file_chars == policy.limits.index_lines == 0, name
    claude = load_policy("claude-code")
    assert (claude.lint.max_lines, claude.lint.max_bytes) == (200, 25_000)
    assert (claude.limits.large_file_chars, claude.limits.index_lines) == (40_000, 200)
    assert load_policy("bootstrap").limits.index_chars == 25_000
