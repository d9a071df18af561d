"""`ctxasm render` output is byte-identical to the digests captured before the package was
reshaped (`tests/tools/render_identity.py`): every format, every fixture, and every tree of
the shared corpus at its root, one nested directory and with touched files; at the default
release of Claude Code and at 2.1.197."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers import render_identity as identity

STORED = json.loads(identity.DATA.read_text(encoding="utf-8"))
# Every render at Claude Code 2.1.197, the release modelled before 2.1.332 became the default.
OLD = json.loads(identity.OLD_DATA.read_text(encoding="utf-8"))


def _compare(actual: dict[str, object], names: list[str], stored: dict[str, Any] = STORED) -> None:
    # Never a skip: the trees are made in name order on tmpfs (`identity.WORK`), which lists
    # in the order entries are made; a kernel that lists otherwise must re-record the digests.
    assert actual["listing order"] == stored["listing order"], (
        "tmpfs lists directories in another order here than where the digests were taken: "
        "re-record them (the module's doc says how)"
    )
    got = actual["cases"]
    assert isinstance(got, dict)
    differing = [
        f"{name} ({fmt})"
        for name in names
        for fmt, expected in stored["cases"][name].items()
        if got.get(name, {}).get(fmt) != expected
    ]
    assert not differing, f"render output changed: {', '.join(differing)}"


def test_fixtures_render_as_before() -> None:
    names = [n for n in STORED["cases"] if "__" not in n]
    _compare(identity.capture(corpus=False), names)


def test_fixtures_render_as_before_at_2_1_197() -> None:
    names = [n for n in OLD["cases"] if "__" not in n]
    _compare(identity.capture(corpus=False, client_version=identity.OLD_RELEASE), names, OLD)


@pytest.mark.slow
@pytest.mark.skipif(not identity.CORPUS.is_dir(), reason="the shared corpus is not here")
def test_corpus_renders_as_before() -> None:
    _compare(identity.capture(corpus=True), list(STORED["cases"]))


@pytest.mark.slow
@pytest.mark.skipif(not identity.CORPUS.is_dir(), reason="the shared corpus is not here")
def test_corpus_renders_as_before_at_2_1_197() -> None:
    capture = identity.capture(corpus=True, client_version=identity.OLD_RELEASE)
    _compare(capture, list(OLD["cases"]), OLD)
