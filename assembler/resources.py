"""Find the shipped data directories (`policies/`, `templates/`) in a wheel or a checkout."""

from __future__ import annotations

import functools
from pathlib import Path

from .errors import AssemblerError

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def data_dir(name: str) -> Path:
    """`name` inside the installed wheel (`assembler/_data/`), else the checkout's top level."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise AssemblerError(f"{_PACKAGE}: the '{name}' data directory is missing; reinstall ctxasm")
