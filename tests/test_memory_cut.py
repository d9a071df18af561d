"""The MEMORY.md cut against the client's `truncateEntrypointContent` run by node: every cut
(lines, characters, both, one huge line), LF and CRLF, characters outside the Basic
Multilingual Plane on every side of the 25,000-unit limit (`tests/tools/memory_cut_reference.js`
made `tests/data/memory-cut.jsonl`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from assembler.clients.claude_code.memory_index import truncate_index
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


def _crlf_memory(tmp_path: Path, lines: int) -> None:
    """A repository and its auto memory index of `lines` CRLF lines."""
    git_init(tmp_path / "repo")
    memory = tmp_path / f"home/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_bytes("\r\n".join(f"- entry {i}" for i in range(lines)).encode())


def test_a_crlf_index_keeps_its_line_endings_through_the_cut(tmp_path: Path) -> None:
    _crlf_memory(tmp_path, 250)
    (source,) = run(tmp_path, "repo", client_version="2.1.197").sources
    kept, warning = source.content.split("\n\n> WARNING", 1)
    assert kept == "\r\n".join(f"- entry {i}" for i in range(200)) + "\r"
    assert warning.startswith(": MEMORY.md is 250 lines (limit: 200).")


def test_from_2_1_332_a_crlf_index_is_made_lf_before_the_cut(tmp_path: Path) -> None:
    """SPEC 4b.3: CRLF becomes LF before the cut, and the warning says what was cut."""
    _crlf_memory(tmp_path, 261)
    (source,) = run(tmp_path, "repo", client_version="2.1.332").sources
    assert source.content == "\n".join(f"- entry {i}" for i in range(200)) + (
        "\n\n> WARNING: MEMORY.md is 261 lines (limit: 200). Only part of it was loaded: "
        '61 of 261 lines were cut off, starting at line 201 ("- entry 200"). Keep index '
        "entries to one line under ~200 chars; move detail into topic files."
    )


def _detail(text: str) -> str:
    cut = truncate_index(text, 200, 25_000, "MEMORY.md", detail=True)
    assert cut is not None
    return cut[0].split("Only part of it was loaded", 1)[1]


def test_the_2_1_332_warning_says_where_the_cut_is() -> None:
    """Claude Code 2.1.332's truncation function (`HMo`, read from the release): the lines cut
    and the first of them, trimmed and shortened to 80 UTF-16 units at a word; or, with no
    line break before the limit, the characters of line 1 kept."""
    tail = "Keep index entries to one line under ~200 chars; move detail into topic files."
    lines = [f"line {i}" for i in range(300)]
    lines[200] = "   " + "word " * 30 + "  "
    assert _detail("\n".join(lines)) == (
        f': 100 of 300 lines were cut off, starting at line 201 ("{"word " * 14}word\u2026"). {tail}'
    )
    lines[200] = " " * 4
    assert (
        _detail("\n".join(lines))
        == f": 100 of 300 lines were cut off, starting at line 201. {tail}"
    )
    wide = "\n".join(["y" * 200] * 150)  # 30,149 units: cut at the last line break
    assert _detail(wide).startswith(": 26 of 150 lines were cut off, starting at line 125 (")
    assert _detail("z" * 30_000) == (
        f": everything after the first 25000 characters of line 1 was cut off. {tail}"
    )
    astral = "x" + "\U0001f600" * 20_000  # half a character kept: still 25,000 units
    assert _detail(astral) == (
        f": everything after the first 25000 characters of line 1 was cut off. {tail}"
    )


def test_a_cut_inside_a_character_keeps_a_replacement_character() -> None:
    """No newline before the limit: the client cuts at UTF-16 unit 25,000, half way through
    a character outside the BMP; its half becomes U+FFFD on the way to the model."""
    text = "x" + "\U0001f600" * 20_000
    (cut, _why) = truncate_index(text, 200, 25_000, "MEMORY.md") or ("", "")
    kept = cut.split("\n\n> WARNING")[0]
    assert kept == "x" + "\U0001f600" * 12_499 + "\ufffd"
