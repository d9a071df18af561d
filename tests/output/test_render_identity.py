"""`ctxasm render` output is byte-identical to the digests captured before the package was
reshaped (`tests/tools/render_identity.py`): every format, every fixture, and every tree of
the shared corpus at its root, one nested directory and with touched files."""

from __future__ import annotations

import json

import pytest

from tests.helpers import render_identity as identity

STORED = json.loads(identity.DATA.read_text(encoding="utf-8"))


def _compare(actual: dict[str, object], names: list[str]) -> None:
    if actual["listing order"] != STORED["listing order"]:
        pytest.skip(
            "this filesystem lists directories in another order than where the digests were taken"
        )
    got = actual["cases"]
    assert isinstance(got, dict)
    differing = [
        f"{name} ({fmt})"
        for name in names
        for fmt, expected in STORED["cases"][name].items()
        if got.get(name, {}).get(fmt) != expected
    ]
    assert not differing, f"render output changed: {', '.join(differing)}"


def test_fixtures_render_as_before() -> None:
    names = [n for n in STORED["cases"] if "__" not in n]
    _compare(identity.capture(corpus=False), names)


@pytest.mark.slow
@pytest.mark.skipif(not identity.CORPUS.is_dir(), reason="the shared corpus is not here")
def test_corpus_renders_as_before() -> None:
    _compare(identity.capture(corpus=True), list(STORED["cases"]))
