"""`ctxasm --version`: the version and the commit this copy was built from (issue 26, item 1);
the version alone, and never a traceback, where git cannot tell."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from assembler.version import PACKAGE, commit_of, recorded
from tests.helpers.trees import ROOT

_NUMBER = version("ctxasm")


def _version(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", "--version"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _head() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.mark.skipif(
    PACKAGE.parent != ROOT or not (ROOT / ".git").exists(),
    reason="names the commit of the checkout ctxasm is imported from (an editable install)",
)
def test_a_checkout_names_the_commit_it_is_on() -> None:
    ran = _version(dict(os.environ))
    assert (ran.returncode, ran.stderr) == (0, "")
    assert ran.stdout == f"ctxasm, version {_NUMBER} (commit {_head()})\n"


def test_without_git_the_version_alone(tmp_path: Path) -> None:
    ran = _version({**os.environ, "PATH": str(tmp_path)})  # no git on PATH
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, f"ctxasm, version {_NUMBER}\n", "")


def test_a_git_that_fails_or_says_nonsense_gives_the_version_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "git"
    fake.write_text("#!/bin/sh\necho 'fatal: not a git repository' >&2; echo HEAD; exit 128\n")
    fake.chmod(0o755)
    ran = _version({**os.environ, "PATH": str(tmp_path)})
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, f"ctxasm, version {_NUMBER}\n", "")
    fake.write_text("#!/bin/sh\necho '$(rm -rf ~)'\n")  # exit 0, and no hash
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "top" / ".git").mkdir(parents=True)
    assert commit_of(tmp_path / "top") is None


def test_only_the_top_of_a_work_tree_names_a_commit(tmp_path: Path) -> None:
    # A wheel in a virtual environment inside some repository must not name its commit.
    inside = tmp_path / "repo" / ".venv" / "lib"
    inside.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    assert commit_of(inside) is None
    assert commit_of(tmp_path / "repo") is None  # a repository with no commit yet


def test_the_record_a_wheel_carries(tmp_path: Path) -> None:
    package = tmp_path / "assembler"
    assert recorded(package) is None  # none: a checkout, or a build without git
    (package / "_data").mkdir(parents=True)
    (package / "_data" / "commit").write_text("0123456789ab\n")
    assert recorded(package) == "0123456789ab"
    (package / "_data" / "commit").write_bytes(b"\xff\xfe not a hash")
    assert recorded(package) is None
