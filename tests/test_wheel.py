"""The wheel ships `policies/` and `templates/`, and renders from a fresh venv outside the
checkout; it names the commit it was built from; and the README's install story works as
written: `pipx install .` in a clone, then `ctxasm --version`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from assembler.version import commit_of
from tests.helpers.checkout import git, git_env, snapshot
from tests.helpers.trees import ROOT

pytestmark = pytest.mark.slow  # builds a wheel and a venv


def test_wheel_installs_and_renders_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("ctxasm-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "assembler/_data/policies/claude-code.toml" in names
    assert "assembler/_data/templates/xml.j2" in names
    assert "assembler/py.typed" in names

    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    workspace = tmp_path / "workspace"
    (tmp_path / "home").mkdir()
    shutil.copytree(ROOT / "fixtures" / "bootstrap", workspace)
    result = subprocess.run(
        [str(env / "bin" / "ctxasm"), "render", str(workspace), "--policy", "bootstrap",
         "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("<soul>\n你是小橙")
    located = subprocess.run(
        [str(python), "-c", "from assembler.resources import data_dir; print(data_dir('templates'))"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert located.stdout.strip().endswith("site-packages/assembler/_data/templates")
    # The conversation runtime's prompts ship too, and load from the installed wheel.
    assert "assembler/_data/templates/conversation/nine-part.txt" in names
    loaded = subprocess.run(
        [str(python), "-c", "from assembler.conversation import prompt; print(prompt().text[:9])"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert loaded.stdout == "CRITICAL:\n"

    # The commit it was built from, recorded at build time: printed with no git at all.
    commit = commit_of(ROOT)
    if commit is not None:
        assert zipfile.ZipFile(wheel).read("assembler/_data/commit") == f"{commit}\n".encode()
    shown = subprocess.run(
        [str(env / "bin" / "ctxasm"), "--version"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env={"PATH": str(tmp_path)},
    )  # fmt: skip
    assert (
        shown.stdout == "ctxasm, version 0.1.0" + (f" (commit {commit})" if commit else "") + "\n"
    )

    # The report's page template ships, and renders from the installed wheel.
    assert "assembler/_data/templates/report/page.html.j2" in names
    report = subprocess.run(
        [str(env / "bin" / "ctxasm"), "report", str(workspace), "--out", "page.html",
         "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert (report.returncode, report.stdout) == (0, "page.html\n"), report.stderr
    assert "What every agent loads" in (tmp_path / "page.html").read_text(encoding="utf-8")


def _readme_install() -> str:
    """The shell lines of the README's install block, comments and alternatives left out."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Install") :]
    (block,) = re.findall(r"```sh\n(.*?)```", section[: section.index("\n## ")], re.DOTALL)
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return "\n".join(line for line in lines if line and not line.startswith("#"))


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "pipx").exists(), reason="pipx is in the test extra"
)
def test_the_readme_install_story_works_as_written(tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    commit = snapshot(tmp_path / "upstream", env)
    script = _readme_install()
    assert script.splitlines() == ["pipx install .", "ctxasm --version"]  # nothing to fill in
    git(tmp_path, env, "clone", "-q", str(tmp_path / "upstream"), "ctxasm")  # "in the clone"
    bin_dir = tmp_path / "bin"  # where pipx puts the command, first on PATH
    env.update(
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(tmp_path / "man"),
        PATH=os.pathsep.join((str(bin_dir), str(Path(sys.executable).parent), env["PATH"])),
    )
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path / "ctxasm", env=env, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[-1] == f"ctxasm, version 0.1.0 (commit {commit[:12]})"
    assert git(tmp_path / "ctxasm", env, "tag") == ""  # no tag was needed anywhere
