"""The wheel ships `policies/` and `templates/`, and renders from a fresh venv outside the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

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
    # The report's page template ships, and renders from the installed wheel.
    assert "assembler/_data/templates/report/page.html.j2" in names
    report = subprocess.run(
        [str(env / "bin" / "ctxasm"), "report", str(workspace), "--out", "page.html",
         "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert (report.returncode, report.stdout) == (0, "page.html\n"), report.stderr
    assert "What every agent loads" in (tmp_path / "page.html").read_text(encoding="utf-8")
