"""JSON settings files, read through the run's `Disk`: the one reader of every client's
`settings.json` (each client says which files, how large, and what it does to the text).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .disk import Disk
from .reader import ReadStatus


def read_json(
    path: Path, disk: Disk, max_bytes: int, prepare: Callable[[str], str] | None = None
) -> tuple[dict[str, Any] | None, str]:
    """A JSON object, or None and why not ("" when the file is simply not there).
    `prepare`: what the client does to the text first (one that allows comments strips them). Kept by
    the run's observer for an unchanged file (lint discovers hundreds of directories): the
    object is shared, never to be changed."""
    name = str(path)
    return disk.cached(
        name,
        ("json", max_bytes, prepare),
        None,
        lambda st: _read_json(name, disk, max_bytes, prepare, st),
    )


def _read_json(
    path: str,
    disk: Disk,
    max_bytes: int,
    prepare: Callable[[str], str] | None,
    st: os.stat_result | None,
) -> tuple[dict[str, Any] | None, str]:
    result = disk.read(path, max_bytes, st)
    if result.status in (ReadStatus.MISSING, ReadStatus.BROKEN_LINK):
        return None, ""
    if result.status is ReadStatus.TOO_LARGE:
        return None, f"is {result.size:,} bytes, over the {max_bytes:,}-byte limit; it is ignored"
    if result.status is ReadStatus.BINARY:
        return None, f"not JSON text ({result.detail}); fix the file"
    if not result.ok:
        return None, f"cannot read ({result.detail or result.status.value}); fix its permissions"
    return json_object(result.data, prepare)


def json_object(
    data: bytes, prepare: Callable[[str], str] | None = None
) -> tuple[dict[str, Any] | None, str]:
    """The JSON object of a settings file's bytes, read as the client reads them (a leading
    byte-order mark dropped, `prepare` applied), or None and what is wrong."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 ({err.reason} at byte {err.start}); re-save it as UTF-8"
    if prepare is not None:
        text = prepare(text)
    try:
        parsed = json.loads(text)
    except RecursionError:
        return None, "invalid JSON (nested too deeply); fix the file"
    except ValueError as err:  # JSONDecodeError, or an integer too long to convert
        return None, f"invalid JSON ({err}); fix the syntax"
    if not isinstance(parsed, dict):
        return None, "not a JSON object; it is ignored"
    return parsed, ""
