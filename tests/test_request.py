"""One frozen value carries a request; `assemble()`, `explain()`, `lint()` and the
`Assembler` take the same options."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from assembler import Assembler, Request, RequestError, assemble
from assembler.lint import lint
from assembler.live.explain import explain
from tests.helpers.trees import build, git_init, machine


def test_a_request_is_the_options_with_defaults_filled_in(tmp_path: Path) -> None:
    request = Request.of(tmp_path, touched=["a.md"], **machine(tmp_path))
    assert request.cwd == tmp_path and request.home == tmp_path / "home"
    assert request.touched == ("a.md",) and request.max_tokens is None
    assert Request.of(request) is request
    with pytest.raises(TypeError, match="inside the Request"):
        Request.of(request, max_tokens=10)
    with pytest.raises(AttributeError):
        request.cwd = Path("/")  # type: ignore[misc]


def test_every_entry_point_takes_the_same_request(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Root.", "src/CLAUDE.md": "Sources.", "src/a.ts": ""})
    request = Request.of(repo, touched=[repo / "src" / "a.ts"], **machine(tmp_path))
    by_request = assemble(request)
    by_options = assemble(repo, touched=[repo / "src" / "a.ts"], **machine(tmp_path))
    assert by_request.render("json") == by_options.render("json")
    assert [s.display for s in by_request.sources] == ["CLAUDE.md", "src/CLAUDE.md"]
    assert explain(request).assembly.render("json") == by_request.render("json")
    kept = Assembler(repo, **machine(tmp_path)).assemble([repo / "src" / "a.ts"])
    assert kept.render("json") == by_request.render("json")


def test_an_unknown_option_is_an_error_not_ignored(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unknown option 'max_token'; the options are policy, "):
        assemble(tmp_path, max_token=10, **machine(tmp_path))  # type: ignore[call-arg]


def test_a_policy_naming_no_registered_client_is_a_policy_error(tmp_path: Path) -> None:
    from assembler import PolicyError, load_policy

    policy = load_policy("claude-code")._replace(client="cursor-9000")
    with pytest.raises(PolicyError, match="cursor-9000: no such client"):
        assemble(tmp_path, policy=policy, **machine(tmp_path))


BAD_OPTIONS: dict[str, tuple[dict[str, object], str]] = {
    "negative budget": ({"max_tokens": -1}, "max_tokens: -1; pass a whole number of tokens"),
    "budget as text": ({"max_tokens": "5"}, "max_tokens: '5'; pass a whole number"),
    "one touched path": ({"touched": "a.md"}, "touched: one path where a list is expected"),
    "touched as bytes": ({"touched": [b"a.md"]}, "touched: b'a.md' is bytes"),
    "NUL in touched": ({"touched": ["a\0.md"]}, "touched: 'a\\x00.md' holds a NUL byte"),
    "NUL in home": ({"home": "/h\0"}, "home: '/h\\x00' holds a NUL byte"),
    "home as bytes": ({"home": b"/h"}, "home: b'/h' is bytes"),
    "NUL in managed_dir": ({"managed_dir": "/m\0"}, "managed_dir: '/m\\x00' holds a NUL"),
    "NUL in policy": ({"policy": "p\0.toml"}, "policy: 'p\\x00.toml' holds a NUL byte"),
    "policy as bytes": ({"policy": b"p.toml"}, "policy: b'p.toml' is bytes"),
    "NUL in environ": ({"environ": {"CLAUDE_CONFIG_DIR": "/c\0"}}, "environ: CLAUDE_CONFIG_DIR"),
    "bytes in environ": ({"environ": {"CLAUDE_CONFIG_DIR": b"/c"}}, "names and values must be"),
    "now as text": ({"now": "2026-01-31"}, "now: '2026-01-31' is not a datetime.datetime"),
}


@pytest.mark.parametrize("date", ["2026-13-45", "2026-02-30", "20260131", "2026-1-31", 20260131])
def test_a_render_date_that_is_no_calendar_day_is_a_request_error(
    tmp_path: Path, date: object
) -> None:
    assembly = assemble(tmp_path, **machine(tmp_path))
    with pytest.raises(RequestError, match=re.escape(f"date: {date!r} is not a calendar date")):
        assembly.render("claude-code", date=date)  # type: ignore[arg-type]
    assert "Today's date is 2026-02-28." in assembly.render("claude-code", date="2026-02-28")


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_an_unusable_option_is_a_request_error_everywhere(tmp_path: Path, case: str) -> None:
    options, message = BAD_OPTIONS[case]
    given = {**machine(tmp_path), **options}
    calls: dict[str, Callable[[], object]] = {
        "assemble": lambda: assemble(tmp_path, **given),
        "explain": lambda: explain(tmp_path, **given),
        "Assembler": lambda: Assembler(tmp_path, **given).assemble(),
        "lint": lambda: lint([], base=tmp_path, **given),
    }
    for name, call in calls.items():
        if name == "lint" and "touched" in options:
            continue  # lint takes no touched paths
        with pytest.raises(RequestError, match=re.escape(message)):
            call()


def test_bad_paths_elsewhere_are_request_errors_too(tmp_path: Path) -> None:
    build(tmp_path, {"CLAUDE.md": "root"})
    with pytest.raises(RequestError, match="cwd: b'/' is bytes"):
        assemble(b"/", **machine(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(RequestError, match=re.escape("cwd: 'a\\x00' holds a NUL byte")):
        assemble("a\0", **machine(tmp_path))
    kept = Assembler(tmp_path, **machine(tmp_path))
    with pytest.raises(RequestError, match="touched: one path where a list is expected"):
        kept.assemble("CLAUDE.md")  # a str is a Sequence: only a run-time check can tell
    with pytest.raises(RequestError, match="touched: b'x' is bytes"):
        assemble(tmp_path, **machine(tmp_path)).touch(b"x")  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="files: one path where a list is expected"):
        lint("CLAUDE.md", base=tmp_path, **machine(tmp_path))
    with pytest.raises(RequestError, match="files: b'x' is bytes"):
        lint([b"x"], base=tmp_path, **machine(tmp_path))  # type: ignore[list-item]
