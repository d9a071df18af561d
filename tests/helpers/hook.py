"""The pre-commit hook's `files:` is the registry's: every registered client's
`instruction_files` (`assembler.lint.files.instruction_files_pattern`), so that a new client's
files reach the hook with no list to update by hand. After adding a client, rewrite it with

    .venv/bin/python -m tests.helpers.hook

and commit `.pre-commit-hooks.yaml` and `.pre-commit-config.yaml` (`tests/clients/test_seam.py`
checks that they are current).
"""

from __future__ import annotations

import re

from assembler.lint.files import instruction_files_pattern
from tests.helpers.trees import ROOT

HOOKS = ROOT / ".pre-commit-hooks.yaml"
CONFIG = ROOT / ".pre-commit-config.yaml"  # this repository's own use of the hook
_FILES = re.compile(r"(?m)^(\s+files: )(.*)$")


def files_line(text: str) -> str:
    """The `files:` value of the hook definition `text`."""
    found = _FILES.search(text)
    assert found is not None, "no `files:` in the hook definition"
    return found.group(2)


def written(text: str) -> str:
    """`text` with its `files:` set to the registry's pattern."""
    pattern = instruction_files_pattern()
    return _FILES.sub(lambda m: m.group(1) + pattern, text, count=1)


def main() -> None:
    for path in (HOOKS, CONFIG):
        path.write_text(written(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
