"""One frozen value carries a request; `assemble()`, `explain()`, `lint()` and the
`Assembler` take the same options."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler import Assembler, Request, assemble
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
