"""The catalogue of diagnostic codes: one table for render, explain, watch and lint."""

from __future__ import annotations

import json
import re
from pathlib import Path

from assembler import codes
from assembler.clients import registry
from assembler.model import Severity
from tests.helpers.cli import ctxasm
from tests.helpers.trees import ROOT, build, git_init, machine, run
from tests.helpers.trees import codes as codes_of


def test_codes_and_names_are_unique_and_well_formed() -> None:
    entries = registry.catalogue()
    assert len({e.code for e in entries}) == len(entries)
    assert len({e.name for e in entries}) == len(entries)
    for entry in entries:
        assert re.fullmatch(r"CTX\d{3}", entry.code), entry
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", entry.name), entry
        assert entry.lint is not None or entry.load is not None, entry
        assert entry.summary and "\n" not in entry.summary


def test_render_and_lint_report_the_same_code_for_the_same_fact(tmp_path: Path) -> None:
    """A missing import: info at load (the client skips it), a warning in lint."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "See @gone.md for more."})
    assembly = run(tmp_path, repo)
    assert codes_of(assembly) == ["CTX201"]
    assert assembly.diagnostics[0].severity is codes.IMPORT_MISSING.load is Severity.INFO
    from assembler.lint import lint

    found = lint(["CLAUDE.md"], base=repo, **machine(tmp_path))
    assert [(f.code, f.severity) for f in found.findings] == [("CTX201", Severity.WARNING)]


def test_ctxasm_codes_prints_the_catalogue() -> None:
    text = ctxasm(["codes"], env={"COLUMNS": "1000"})
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["code", "lint", "load", "name", "summary"]
    assert len(lines) == 1 + len(registry.catalogue())
    assert lines[1].split()[:4] == ["CTX001", "error", "error", "unreadable"]
    as_json = ctxasm(["codes", "--json"])
    rows = json.loads(as_json.stdout)
    assert rows[0] == {
        "code": "CTX001",
        "name": "unreadable",
        "summary": codes.UNREADABLE.summary,
        "lint": "error",
        "load": "error",
    }
    assert [r["code"] for r in rows] == [e.code for e in registry.catalogue()]


def test_ctxasm_codes_fits_80_columns() -> None:
    """At 80 columns (lines went to 188): each code on a line of its own with its severities
    and name, its summary below, indented and wrapped; piped with no COLUMNS, one line each."""
    narrow = ctxasm(["codes"], env={"COLUMNS": "80"})
    lines = narrow.stdout.splitlines()
    assert narrow.exit_code == 0 and max(map(len, lines)) <= 80
    assert lines[:2] == ["code    lint     load     name", "        summary"]
    heads = [i for i, line in enumerate(lines) if line.startswith("CTX")]
    entries = registry.catalogue()
    assert len(heads) == len(entries)
    for at, end, entry in zip(heads, [*heads[1:], len(lines)], entries, strict=True):
        assert lines[at].split() == [
            entry.code,
            entry.lint.value if entry.lint else "-",
            entry.load.value if entry.load else "-",
            entry.name,
        ]
        below = lines[at + 1 : end]
        assert all(line.startswith(" " * 8) for line in below)
        assert " ".join(line.strip() for line in below) == entry.summary
    wide = codes.catalogue_text(entries)
    assert len(wide.splitlines()) == 1 + len(entries)


def test_every_code_is_documented() -> None:
    documented = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    missing = [e.code for e in registry.catalogue() if f"`{e.code}`" not in documented]
    assert missing == [], f"docs/lint.md does not list {missing}"
