"""Whole-repository lint gives the findings captured before (`tests/helpers/lint_identity.py`):
the demo fixture, and every tree of the shared corpus."""

from __future__ import annotations

import json

import pytest

from tests.helpers import lint_identity as identity
from tests.helpers import render_identity

STORED = json.loads(identity.DATA.read_text(encoding="utf-8"))


def _compare(actual: dict[str, object]) -> None:
    # Never a skip: the trees are made in name order on tmpfs (`identity.WORK`), which lists
    # in the order entries are made; a kernel that lists otherwise must re-record the digests.
    assert actual["listing order"] == STORED["listing order"], (
        "tmpfs lists directories in another order here than where the digests were taken: "
        "re-record them (the module's doc says how)"
    )
    got = actual["cases"]
    assert isinstance(got, dict)
    differing = [name for name in got if got[name] != STORED["cases"].get(name)]
    assert not differing, f"lint findings changed: {', '.join(differing)}"


def test_the_demo_lints_as_before() -> None:
    _compare(identity.capture(corpus=False))


@pytest.mark.slow
@pytest.mark.skipif(not render_identity.CORPUS.is_dir(), reason="the shared corpus is not here")
def test_the_corpus_lints_as_before() -> None:
    _compare(identity.capture(corpus=True))
