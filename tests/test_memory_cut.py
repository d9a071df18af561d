"""The MEMORY.md cut against the client's `truncateEntrypointContent` run by node: every cut
(lines, characters, both, one huge line), LF and CRLF, characters outside the Basic
Multilingual Plane on every side of the 25,000-unit limit (`tests/tools/memory_cut_reference.js`
made `tests/data/memory-cut.jsonl`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from assembler.budget import truncate_index
from assembler.clients.claude_code.settings import slug
from tests.helpers.trees import DATA, git_init, run


def _text(case: dict[str, object]) -> str:
    line = str(case["unit"]) * int(str(case["width"]))
    return "x" * int(str(case["shift"])) + str(case["eol"]).join([line] * int(str(case["count"])))


def _ours(text: str) -> str:
    cut = truncate_index(text, 200, 25_000, "MEMORY.md")
    return text.strip() if cut is None else cut[0]


def test_every_cut_is_the_clients() -> None:
    rows = [json.loads(line) for line in (DATA / "memory-cut.jsonl").read_text().splitlines()]
    assert len(rows) > 500
    for row in rows:
        ours = _ours(_text(row))
        utf16 = ours.encode("utf-16-le")
        assert (len(utf16) // 2, ours[-len(row["end"]) :]) == (row["units"], row["end"]), row
        assert hashlib.sha256(utf16).hexdigest() == row["sha"], row


def test_a_crlf_index_keeps_its_line_endings_through_the_cut(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    memory = tmp_path / f"home/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_bytes("\r\n".join(f"- entry {i}" for i in range(250)).encode())
    (source,) = run(tmp_path, "repo").sources
    kept, warning = source.content.split("\n\n> WARNING", 1)
    assert kept == "\r\n".join(f"- entry {i}" for i in range(200)) + "\r"
    assert warning.startswith(": MEMORY.md is 250 lines (limit: 200).")


def test_a_cut_inside_a_character_keeps_a_replacement_character() -> None:
    """No newline before the limit: the client cuts at UTF-16 unit 25,000, half way through
    a character outside the BMP; its half becomes U+FFFD on the way to the model."""
    text = "x" + "\U0001f600" * 20_000
    (cut, _why) = truncate_index(text, 200, 25_000, "MEMORY.md") or ("", "")
    kept = cut.split("\n\n> WARNING")[0]
    assert kept == "x" + "\U0001f600" * 12_499 + "\ufffd"
