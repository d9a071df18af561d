"""Names from a hostile repository keep every diagnostic on one line and every JSON valid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assembler.display import PATTERN_CHARS, dumps, shown
from tests.helpers.trees import build, git_init

# A newline that forges a diagnostic line, an ANSI escape that clears the screen, a bidi
# override, and a byte that is not UTF-8 (os.fsdecode gives it as a lone surrogate).
EVIL = "a\nCLAUDE.md: error: forged [CTX000]\x1b[2J\u202e" + os.fsdecode(b"\xff") + ".md"
EVIL_SHOWN = "a\\nCLAUDE.md: error: forged [CTX000]\\x1b[2J\\u202e\\xff.md"


def test_the_display_form_is_one_printable_line() -> None:
    assert shown(EVIL) == EVIL_SHOWN
    assert shown("plain/path é.md") == "plain/path é.md"
    assert shown("\t\r\x7f\x85\u2028") == "\\t\\r\\x7f\\x85\\u2028"


def test_a_long_pattern_is_shown_as_its_head_and_tail() -> None:
    pattern = "*a" * 500 + "*z"
    short = shown(pattern, PATTERN_CHARS)
    assert len(short) == PATTERN_CHARS - 1
    assert short.startswith("*a*a") and short.endswith("*a*z") and "…" in short
    assert shown("x" * PATTERN_CHARS, PATTERN_CHARS) == "x" * PATTERN_CHARS


def test_json_carries_a_name_that_is_not_utf8_in_its_display_form() -> None:
    text = dumps({"path": EVIL})
    # JSON escapes control characters itself; only the lone surrogate needs the display form.
    assert json.loads(text.encode("utf-8")) == {"path": EVIL.replace(EVIL[-4], "\\xff")}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args],
        capture_output=True,
        cwd=cwd,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "400"},
    )


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A repository whose rules have hostile names: one binary (an error at load), one loaded."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "root"})
    rules = repo / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / EVIL).write_bytes(b"a\0b")
    (rules / ("ok " + EVIL)).write_text("a rule")
    return repo


def _machine(repo: Path) -> tuple[str, ...]:
    (repo.parent / "home").mkdir(exist_ok=True)
    return ("--home", str(repo.parent / "home"), "--managed-dir", str(repo.parent / "managed"))


def _clean(data: bytes, *, human: bool = True) -> str:
    text = data.decode("utf-8")  # valid UTF-8, whatever the names
    assert "\x1b" not in text
    if human:  # JSON may carry any character but a lone surrogate: it is data
        assert "\u202e" not in text
    return text


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json", "anthropic", "openai"])
def test_render_stays_one_line_per_diagnostic_and_valid(hostile: Path, fmt: str) -> None:
    result = _cli("render", ".", "--format", fmt, *_machine(hostile), cwd=hostile)
    assert result.returncode == 1, result.stderr
    assert _clean(result.stderr) == (
        f".claude/rules/{EVIL_SHOWN}: error: file is binary (NUL byte at offset 1); "
        "not loaded: replace it with text [CTX003]\n"
    )
    out = _clean(result.stdout, human=fmt in ("xml", "markdown"))
    if fmt in ("json", "anthropic", "openai"):
        json.loads(out)
    if fmt == "xml":
        assert f'<project_instructions source=".claude/rules/ok {EVIL_SHOWN}">' in out


def test_explain_and_lint_stay_one_line_per_finding_and_valid(hostile: Path) -> None:
    explained = _cli("explain", ".", *_machine(hostile), cwd=hostile)
    text = _clean(explained.stdout)
    assert f"  3  .claude/rules/{EVIL_SHOWN}: file is binary (NUL byte at offset 1)" in text
    assert "forged [CTX000]" not in text.replace(EVIL_SHOWN, "")
    explained = _cli("explain", ".", "--json", *_machine(hostile), cwd=hostile)
    json.loads(_clean(explained.stdout, human=False))
    target = f".claude/rules/{EVIL}"
    lint_text = _clean(_cli("lint", target, *_machine(hostile), cwd=hostile).stdout)
    assert lint_text.splitlines() == [
        f".claude/rules/{EVIL_SHOWN}:1:1: error CTX003 the file is binary (NUL byte at offset "
        "1); not loaded: replace it with text"
    ]
    for fmt in ("json", "sarif"):
        found = _cli("lint", target, "--format", fmt, *_machine(hostile), cwd=hostile)
        assert found.returncode == 1
        json.loads(_clean(found.stdout, human=False))
