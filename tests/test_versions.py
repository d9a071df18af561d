"""Choosing the client release a run models: exact, latest, between two models, unknown,
malformed, installed; and that the choice reaches the run, the assembly and what is kept."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from assembler import Assembler, assemble
from assembler.errors import RequestError
from assembler.live.side_by_side import side_by_side
from assembler.versions import ClientVersion, Fact, VersionTable, checked_asked
from tests.helpers.cli import ctxasm
from tests.helpers.trees import RELATIVE_PATH, build, git_init, machine, plant_programs, run

TABLE = VersionTable(
    "Toy",
    ("1.2", "2.0.5"),
    (Fact("new", "2.0.5", None, "test"), Fact("gone", None, "2.0.5", "test")),
)


def test_exact_latest_and_a_release_a_model_stands_for() -> None:
    assert TABLE.choose(None) == ClientVersion("2.0.5")
    assert TABLE.choose("latest") == ClientVersion("2.0.5", "latest")
    assert TABLE.choose("2.0.5") == ClientVersion("2.0.5", "2.0.5")
    assert TABLE.choose("1.2.7") == ClientVersion("1.2", "1.2.7", "1.2.7")  # 1.2 is every 1.2.x


def test_a_release_between_two_models_uses_the_nearest_older_and_says_so() -> None:
    chosen = TABLE.choose("2.0.1")
    assert chosen.modelled == "1.2"
    assert (
        chosen.note
        == "Toy 2.0.1 is not modelled: modelling 1.2, the nearest older version ctxasm models"
    )


@pytest.mark.parametrize("asked", ["1.1", "2.0.6", "3"])
def test_a_release_outside_the_models_is_a_usage_error(asked: str) -> None:
    with pytest.raises(
        RequestError, match=f"Toy {asked} is not modelled \\(ctxasm models 1.2, 2.0.5\\)"
    ):
        TABLE.choose(asked)


@pytest.mark.parametrize("asked", ["2.x", "", "v2.1", "2.1.332-beta", "1" * 70, 2])
def test_a_malformed_release_is_a_usage_error(asked: object) -> None:
    with pytest.raises(RequestError):
        checked_asked(asked)


def test_facts_hold_for_their_range() -> None:
    assert TABLE.facts_at("1.2") == {"new": False, "gone": True}
    assert TABLE.facts_at("2.0.5") == {"new": True, "gone": False}
    assert TABLE.facts_at("") == TABLE.facts_at("2.0.5")  # "": the newest


def test_the_library_models_the_newest_by_default_and_the_release_asked(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    assert run(tmp_path, "repo").client_version == "2.1.332"
    old = run(tmp_path, "repo", client_version="2.1.197")
    assert (old.client_version, old.diagnostics) == ("2.1.197", ())
    between = run(tmp_path, "repo", client_version="2.1.250")
    assert between.client_version == "2.1.197"
    assert [(d.code, d.path) for d in between.diagnostics] == [("CTX604", "<client-version>")]
    assert run(tmp_path, "repo", policy="codex").client_version == "0.171"
    assert run(tmp_path, "repo", policy="cursor").client_version == ""
    with pytest.raises(RequestError, match="models no particular release of Cursor"):
        run(tmp_path, "repo", policy="cursor", client_version="1.0")


def test_the_assembler_keeps_results_per_release(tmp_path: Path) -> None:
    """The release is part of the request an Assembler answers: two Assemblers of the same
    tree at two releases answer differently, each the same as `assemble()`."""
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/AGENTS.md": "agents only"})
    new = Assembler(tmp_path / "repo", **machine(tmp_path)).assemble()
    old = Assembler(tmp_path / "repo", **machine(tmp_path), client_version="2.1.197").assemble()
    assert [s.content for s in new.sources] == ["agents only"]
    assert old.sources == ()
    assert (new.client_version, old.client_version) == ("2.1.332", "2.1.197")


def _machine_args(tmp_path: Path) -> list[str]:
    """`--home` and `--managed-dir` of an empty machine inside `tmp_path`."""
    for name in ("h", "m"):
        (tmp_path / name).mkdir(exist_ok=True)
    return ["--home", str(tmp_path / "h"), "--managed-dir", str(tmp_path / "m")]


def _fake_client(bin_dir: Path, name: str, prints: str) -> None:
    """An executable `name` on PATH that prints `prints` (and the variables it was given)."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\necho \'{prints}\'\necho "$DISABLE_AUTOUPDATER" > "$0.env"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def _installed(tmp_path: Path, prints: str) -> dict[str, object]:
    """A repository, a fake `claude` printing `prints`, and the options that ask it."""
    git_init(tmp_path / "repo")
    _fake_client(tmp_path / "bin", "claude", prints)
    environ = {"PATH": str(tmp_path / "bin")}
    return {"home": tmp_path / "h", "managed_dir": tmp_path / "m", "environ": environ}


def test_installed_asks_the_client_on_the_runs_path(tmp_path: Path) -> None:
    options = _installed(tmp_path, "2.1.197 (Claude Code)")
    a = assemble(tmp_path / "repo", client_version="installed", **options)  # type: ignore[arg-type]
    assert a.version == ClientVersion("2.1.197", "installed", "2.1.197")
    assert (tmp_path / "bin" / "claude.env").read_text() == "1\n"  # off the network


def test_the_assembler_asks_the_installed_client_once(tmp_path: Path) -> None:
    options = _installed(tmp_path, "2.1.332 (Claude Code)")
    live = Assembler(tmp_path / "repo", client_version="installed", **options)  # type: ignore[arg-type]
    assert live.assemble().client_version == "2.1.332"
    (tmp_path / "bin" / "claude").unlink()  # not asked again
    (tmp_path / "repo" / "CLAUDE.md").write_text("new")
    assert [s.content for s in live.assemble().sources] == ["new"]


def test_installed_without_the_client_or_its_version_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    git_init(tmp_path / "repo")
    home = _machine_args(tmp_path)
    args = ["render", str(tmp_path / "repo"), *home]
    env = {"PATH": str(tmp_path / "bin")}
    done = ctxasm([*args, "--client-version", "installed"], env=env)
    assert done.exit_code == 2
    assert done.stderr == (
        "ctxasm: claude: Claude Code is not installed (not on PATH); pass --client-version "
        "with a modelled version (or latest)\n"
    )
    _fake_client(tmp_path / "bin", "claude", "claude, a build without a number")
    done = ctxasm([*args, "--client-version", "installed"], env=env)
    assert (done.exit_code, done.stderr.count("\n")) == (2, 1)
    assert "printed no release number" in done.stderr


def test_installed_looks_for_the_client_in_no_relative_path_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`render --client-version installed` in a repository that holds its own `./claude`
    and `./node_modules/.bin/claude`, with a PATH whose empty, `.` and `node_modules/.bin`
    entries name them: neither runs; the user's own claude does, and render says which
    entries it passed over."""
    repo, marker = git_init(tmp_path / "repo"), tmp_path / "marker"
    build(repo, {"CLAUDE.md": "Use tabs."})
    plant_programs(repo, marker)
    monkeypatch.chdir(repo)
    args = ["render", str(repo), *_machine_args(tmp_path), "--client-version", "installed"]
    passed_over = (
        'relative PATH entries not looked in ("", ".", "node_modules/.bin": they name the '
        "directory ctxasm runs in, which may be the repository's)"
    )
    done = ctxasm(args, env={"PATH": RELATIVE_PATH})
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == (
        f"ctxasm: claude: Claude Code is not installed (not on PATH; {passed_over}); pass "
        "--client-version with a modelled version (or latest)\n"
    )
    _fake_client(tmp_path / "bin", "claude", "2.1.197 (Claude Code)")
    done = ctxasm(args, env={"PATH": f"{RELATIVE_PATH}:{tmp_path / 'bin'}"})
    assert done.exit_code == 0
    assert done.stderr == (
        f"PATH: warning: {passed_over} looking for claude; ran {tmp_path / 'bin' / 'claude'} "
        "[CTX606]\n"
    )
    assert not marker.exists()


def test_installed_that_hangs_is_cut_off(tmp_path: Path) -> None:
    """A client whose `--version` hangs is cut off at the limit, which the environment's
    `CTXASM_VERSION_TIMEOUT` sets (Gemini CLI took 21 s where the limit was a fixed 10 s)."""
    from assembler.clients import installed

    (tmp_path / "bin").mkdir()
    sleeper = tmp_path / "bin" / "claude"
    sleeper.write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 30\n")
    sleeper.chmod(0o755)
    environ = {"PATH": str(tmp_path / "bin"), "CTXASM_VERSION_TIMEOUT": "1"}
    with pytest.raises(RequestError, match=r"did not answer within 1 s; set CTXASM_VERSION_TIM"):
        installed.installed_version("Claude Code", ("claude", "--version"), environ, {})
    for bad in ("0", "601", "1e3", "-5", "ten"):
        with pytest.raises(RequestError, match="give a whole number of seconds from 1 to 600"):
            installed.installed_version(
                "Claude Code",
                ("claude", "--version"),
                {**environ, "CTXASM_VERSION_TIMEOUT": bad},
                {},
            )


@pytest.mark.parametrize("command", ["render", "explain", "lint", "cache"])
def test_every_command_takes_the_version_and_refuses_a_bad_one(
    tmp_path: Path, command: str
) -> None:
    git_init(tmp_path / "repo")
    home = _machine_args(tmp_path)
    where = ["--cwd" if command == "lint" else "", str(tmp_path / "repo")]
    args = [a for a in (command, *where, *home) if a]
    good = ctxasm([*args, "--client-version", "2.1.197"])
    assert good.exit_code in (0, 1), good.stderr
    malformed = ctxasm([*args, "--client-version", "2.1.x"])
    assert malformed.exit_code == 2
    assert "Invalid value for '--client-version': client version '2.1.x' is not a release" in (
        malformed.stderr
    )
    unknown = ctxasm([*args, "--client-version", "9.9.9"])
    assert unknown.exit_code == 2
    assert unknown.stderr == (
        "ctxasm: Claude Code 9.9.9 is not modelled (ctxasm models 2.1.197, 2.1.332); "
        "pass --client-version with one of them, or latest\n"
    )


def test_render_says_in_one_line_which_model_it_used(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    home = _machine_args(tmp_path)
    done = ctxasm(["render", str(tmp_path / "repo"), *home, "--client-version", "2.1.300"])
    assert done.exit_code == 0
    assert done.stderr == (
        "<client-version>: warning: Claude Code 2.1.300 is not modelled: modelling 2.1.197, "
        "the nearest older version ctxasm models [CTX604]\n"
    )
    json_out = ctxasm(["render", str(tmp_path / "repo"), *home, "--format", "json"])
    assert '"client_version": "2.1.332"' in json_out.stdout


def test_explain_all_takes_latest_or_installed_only(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    home = _machine_args(tmp_path)
    done = ctxasm(
        ["explain", str(tmp_path / "repo"), *home, "--policy", "all", "--client-version", "2.1.197"]
    )
    assert done.exit_code == 2
    assert "with every agent pass latest or installed" in done.stderr
    shown = ctxasm(["explain", str(tmp_path / "repo"), *home, "--policy", "all", "--json"])
    assert (
        '"client_version": "0.171"' in shown.stdout
        and '"client_version": "2.1.332"' in shown.stdout
    )


def test_explain_all_asks_each_installed_agent_and_models_the_others_as_they_are(
    tmp_path: Path,
) -> None:
    """`--policy all --client-version installed`: each agent with a version table asks its
    own program; Cursor and Copilot, modelled at no particular release, are not an error."""
    options = _installed(tmp_path, "2.1.197 (Claude Code)")
    _fake_client(tmp_path / "bin", "codex", "codex-cli 0.171.0")
    _fake_client(tmp_path / "bin", "gemini", "0.61.0")
    side = side_by_side(tmp_path / "repo", client_version="installed", **options)  # type: ignore[arg-type]
    assert {run.client: run.explanation.assembly.client_version for run in side.agents} == {
        "claude-code": "2.1.197",
        "codex": "0.171",
        "gemini": "0.61",
        "cursor": "",
        "copilot": "",
    }
