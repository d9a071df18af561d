from __future__ import annotations

from pathlib import Path

import pytest

from assembler import assemble
from tests.conftest import TouchedTheRealMachine


def test_library_defaults_are_refused_in_tests(tmp_path: Path) -> None:
    with pytest.raises(TouchedTheRealMachine):
        assemble(tmp_path)


def test_reading_the_real_claude_dir_fails_loudly() -> None:
    real = Path("~/.claude/CLAUDE.md").expanduser()
    with pytest.raises(TouchedTheRealMachine):
        real.open()
