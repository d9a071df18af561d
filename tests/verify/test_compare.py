"""Planted differences between a tree and what Claude Code 2.1.197 sent for it (the recorded
reference): the comparison names each file, the kind of difference and, for bytes, where
(byte, line, column) with the bytes around it on each side. No node needed."""

from __future__ import annotations

from pathlib import Path

from assembler.clients.headless import Part
from assembler.verify.compare import Kind, differences, report
from tests.helpers.client_cases import BY_NAME, reference_differences
from tests.helpers.clients import PINS

PIN = PINS[0]  # Claude Code 2.1.197, the modelled version
CASE = BY_NAME["demo-api"]


def _found(root: Path, plant: object) -> list[tuple[str, str, Kind]]:
    _, found = reference_differences(CASE, PIN, root, plant)  # type: ignore[arg-type]
    return [(d.where, d.label.removeprefix(str(root)), d.kind) for d in found]


def test_the_unplanted_tree_agrees(fixed_tmp: Path) -> None:
    assert reference_differences(CASE, PIN, fixed_tmp)[1] == ()


def test_a_changed_byte_is_named_with_its_place(fixed_tmp: Path) -> None:
    def plant(root: Path) -> None:
        path = root / "repo/services/api/CLAUDE.md"
        path.write_bytes(path.read_bytes().replace(b"FastAPI app.", b"FastAPI app!"))

    shown, found = reference_differences(CASE, PIN, fixed_tmp, plant)
    assert [(d.where, d.label, d.kind) for d in found] == [
        ("at start", f"{fixed_tmp}/repo/services/api/CLAUDE.md", Kind.BYTES)
    ]
    place, client, ours = found[0].detail
    # The entry: "\n\nContents of <path> (<words>):\n\n# API service\n\nFastAPI app."
    assert "(line 7, column 12)" in place
    assert client.endswith(
        "\\n\\n# API service\\n\\nFastAPI app⟦. Run `make -C services/api test`. Endpo⟧…"
    )
    assert ours.endswith(
        "\\n\\n# API service\\n\\nFastAPI app⟦! Run `make -C services/api test`. Endpo⟧…"
    )
    text = report("Claude Code 2.1.197", found, shown)
    assert text.startswith("Claude Code 2.1.197: 1 difference(s)\nat start:\n  ")
    assert "the bytes differ" in text


def test_a_line_ending_is_shown_escaped(fixed_tmp: Path) -> None:
    def plant(root: Path) -> None:
        path = root / "repo/CLAUDE.local.md"
        path.write_bytes(path.read_bytes().replace(b"; never", b";\r\nnever"))

    _, found = reference_differences(CASE, PIN, fixed_tmp, plant)
    assert [d.kind for d in found] == [Kind.BYTES]
    assert "⟦\\r\\nnever print it.⟧" in found[0].detail[2]


def test_a_file_only_the_client_loaded_and_one_only_ctxasm_predicts(fixed_tmp: Path) -> None:
    def plant(root: Path) -> None:
        (root / "repo/CLAUDE.local.md").unlink()
        (root / "repo/services/api/CLAUDE.local.md").write_text("Use the staging API.\n")

    found = _found(fixed_tmp, plant)
    assert found == [
        ("at start", "/repo/CLAUDE.local.md", Kind.ONLY_CLIENT),
        ("at start", "/repo/services/api/CLAUDE.local.md", Kind.ONLY_CTXASM),
    ]


def test_a_read_that_attaches_differently(fixed_tmp: Path) -> None:
    def plant(root: Path) -> None:
        (root / "repo/services/api/src/handlers/CLAUDE.md").unlink()

    found = _found(fixed_tmp, plant)
    assert found == [
        (
            "after reading repo/services/api/src/handlers/users.ts",
            "/repo/services/api/src/handlers/CLAUDE.md",
            Kind.ONLY_CLIENT,
        )
    ]


def test_the_same_files_in_another_order() -> None:
    a, b, c = (Part(name, f"text of {name}") for name in "abc")
    found = differences("at start", [a, b, c], [a, c, b])
    assert [(d.label, d.kind) for d in found] == [("c", Kind.MOVED)]
    assert found[0].detail == ("part 3 of 3 in the client's, 2 of 3 in ctxasm's",)


def test_nothing_on_both_sides_agrees() -> None:
    assert differences("at start", [], []) == []
    assert report("x", [], ["at start"]) == (
        "x: the same instruction context, byte for byte (at start)\n"
    )
