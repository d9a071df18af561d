"""Comparing the instruction context an agent sent with ctxasm's prediction, file by file and
byte by byte, and the report of every difference: which files, which bytes, where.

Both sides arrive as `Part`s split by the same function (`Headless.start_parts` and
`read_parts`), so they agree exactly when the sequences are equal. Parts are matched by their
label in order (difflib over the labels); a file on one side only, a file in another place
and a file whose bytes differ are each one `Difference`.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Sequence
from typing import NamedTuple

from ..clients.headless import Part
from ..display import shown

WINDOW = 40  # bytes of context shown on each side of the first differing byte


class Kind(enum.Enum):
    ONLY_CLIENT = "only the client sent it"
    ONLY_CTXASM = "only ctxasm predicted it"
    MOVED = "both have it, in another place"
    BYTES = "the bytes differ"


class Difference(NamedTuple):
    """One difference at one step (`where`: at start, or after reading a file)."""

    where: str
    label: str
    kind: Kind
    detail: tuple[str, ...] = ()  # the lines that show it


def differences(where: str, client: Sequence[Part], ours: Sequence[Part]) -> list[Difference]:
    """Every difference between what the client sent and what ctxasm predicted."""
    if list(client) == list(ours):
        return []
    found: list[Difference] = []
    matcher = difflib.SequenceMatcher(
        a=[p.label for p in client], b=[p.label for p in ours], autojunk=False
    )
    only_client: list[int] = []
    only_ours: list[int] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            found += (
                _bytes(where, theirs, mine)
                for theirs, mine in zip(client[a0:a1], ours[b0:b1], strict=True)
                if theirs.text != mine.text
            )
        else:
            only_client += range(a0, a1)
            only_ours += range(b0, b1)
    for i in only_client:
        part = client[i]
        j = next((j for j in only_ours if ours[j].label == part.label), None)
        if j is None:
            found.append(Difference(where, part.label, Kind.ONLY_CLIENT, _opening(part)))
            continue
        only_ours.remove(j)  # the same label elsewhere: it moved
        place = f"part {i + 1} of {len(client)} in the client's, {j + 1} of {len(ours)} in ctxasm's"
        found.append(Difference(where, part.label, Kind.MOVED, (place,)))
        if part.text != ours[j].text:
            found.append(_bytes(where, part, ours[j]))
    found += (
        Difference(where, ours[j].label, Kind.ONLY_CTXASM, _opening(ours[j])) for j in only_ours
    )
    return found


def _bytes(where: str, theirs: Part, mine: Part) -> Difference:
    """Where two texts of one part first differ: byte offset, line and column, and the
    bytes around it on each side."""
    a, b = theirs.text.encode("utf-8", "surrogatepass"), mine.text.encode("utf-8", "surrogatepass")
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    line = a.count(b"\n", 0, at) + 1
    column = at - (a.rfind(b"\n", 0, at) + 1) + 1
    detail = (
        f"first at byte {at} of the part (line {line}, column {column}); "
        f"the client sent {len(a)} bytes, ctxasm predicted {len(b)}",
        f"client: {_window(a, at)}",
        f"ctxasm: {_window(b, at)}",
    )
    return Difference(where, theirs.label, Kind.BYTES, detail)


def _window(data: bytes, at: int) -> str:
    start = max(0, at - WINDOW)
    head = data[start:at].decode("utf-8", "backslashreplace")
    tail = data[at : at + WINDOW].decode("utf-8", "backslashreplace")
    before = "…" if start else ""
    after = "…" if at + WINDOW < len(data) else ""
    tail = tail or "(end)"
    return f"{before}{_escaped(head)}⟦{_escaped(tail)}⟧{after}"


def _escaped(text: str) -> str:
    return shown(text).replace("\ufeff", "\\ufeff")


def _opening(part: Part) -> tuple[str, ...]:
    """Its size and first line of content (the header's lines, which name it, skipped)."""
    lines = part.text.strip("\n").splitlines()
    first = next((ln for ln in lines if ln.strip() and part.label not in ln and ln[:1] != "<"), "")
    return (
        f"{len(part.text.encode('utf-8', 'surrogatepass'))} bytes, starting {shown(first, 100)}",
    )


def report(head: str, found: Sequence[Difference], steps: Sequence[str]) -> str:
    """The readable report: `head`, then each step's differences (or that they agree)."""
    if not found:
        return f"{head}: the same instruction context, byte for byte ({', '.join(steps)})\n"
    lines = [f"{head}: {len(found)} difference(s)"]
    for where in steps:
        here = [d for d in found if d.where == where]
        if here:
            lines.append(f"{where}:")
            for difference in here:
                lines.append(f"  {shown(difference.label)}: {difference.kind.value}")
                lines += (f"    {line}" for line in difference.detail)
    return "\n".join(lines) + "\n"
