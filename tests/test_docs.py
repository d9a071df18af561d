"""The docs speak in the third person (issue 23, item 5): of ctxasm, the user and the caller,
never as "I" or "we" to a "you", and never to the team that writes them.

Code (fenced blocks and code spans) is quoted, not spoken: `/home/me/.bashrc` or an
instruction file's "before you push" stay as they are.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
_FENCED = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`[^`]*`")
_PERSONAL = re.compile(
    r"(?<![\w/'-])(?:(?-i:I|I'm|I've|I'd)|me|my|mine|we|we're|we've|us|our|ours|you|you're|your|yours)"
    r"(?![\w/'-])|\bthe lead\b",
    re.IGNORECASE,
)


def _prose(text: str) -> str:
    """`text` with its code blanked out, line breaks kept (so line numbers stay)."""
    for code in (_FENCED, _SPAN):
        text = code.sub(lambda m: "\n" * m.group().count("\n"), text)
    return text


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_doc_speaks_in_the_third_person(doc: Path) -> None:
    spoken: list[str] = []
    for number, line in enumerate(_prose(doc.read_text(encoding="utf-8")).splitlines(), 1):
        spoken += (f"{number}: {m.group()!r} in {line.strip()!r}" for m in _PERSONAL.finditer(line))
    assert not spoken, "\n".join(spoken)
