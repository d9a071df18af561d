"""The real clients the tests run: their pinned versions, where `make clients` installs them
(a cache directory outside the checkout), and the installer itself.

Standard library only: `make clients` runs it before any virtual environment exists
(`python3 -m tests.helpers.clients install`). Each version goes into its own prefix,
`<cache>/<package>@<version>`, side by side (`npm install --prefix`); the cache is
`$CTXASM_CLIENTS`, else `$XDG_CACHE_HOME/ctxasm/clients`, else `~/.cache/ctxasm/clients`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

INSTALL_TIMEOUT = 900  # seconds for one package (a native binary is a few hundred MB)


class Pin(NamedTuple):
    """One pinned client version: its ctxasm client name, npm package and program."""

    client: str
    package: str
    version: str
    program: str

    @property
    def key(self) -> str:
        return f"{self.client}-{self.version}"

    def prefix(self, cache: Path) -> Path:
        return cache / f"{self.package.rsplit('/', 1)[-1]}@{self.version}"

    def path(self, cache: Path) -> Path:
        return self.prefix(cache) / "node_modules" / ".bin" / self.program


# The versions ctxasm is checked against (docs/verify.md): both modelled Claude Code versions,
# and the newest Codex and Gemini CLI releases (SPEC section 4b).
PINS = (
    Pin("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    Pin("claude-code", "@anthropic-ai/claude-code", "2.1.332", "claude"),
    Pin("codex", "@openai/codex", "0.171.0", "codex"),
    Pin("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
)


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if environ is None else environ
    if env.get("CTXASM_CLIENTS"):
        return Path(env["CTXASM_CLIENTS"])
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "ctxasm" / "clients"


# Read once, when the tests are collected (the test fixtures drop CTXASM_* variables later).
CACHE = cache_dir()


def installed(pin: Pin, cache: Path = CACHE) -> Path | None:
    """The pinned program, when `make clients` installed it (and node is there for it)."""
    path = pin.path(cache)
    if not os.access(path, os.X_OK):
        return None
    needs_node = path.resolve().suffix in (".js", ".cjs", ".mjs")
    return path if not needs_node or shutil.which("node") else None


# Whether a missing client fails the tests instead of skipping them (CI sets it).
REQUIRED = os.environ.get("CTXASM_REQUIRE_CLIENTS") == "1"


def install(pin: Pin, cache: Path) -> float:
    """Install `pin` into its own prefix (nothing when there already) and check the version
    it reports; the seconds it took."""
    started = time.monotonic()
    if installed(pin, cache) is None:
        prefix = pin.prefix(cache)
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--no-save", "--loglevel=error", f"{pin.package}@{pin.version}"],
            check=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    with tempfile.TemporaryDirectory() as home:  # `--version` may write into its home
        out = subprocess.run(
            [str(pin.path(cache)), "--version"], capture_output=True, text=True, timeout=60,
            env={"PATH": os.environ.get("PATH", ""), "HOME": home}, check=True,
        ).stdout  # fmt: skip
    if pin.version not in out:
        raise SystemExit(f"{pin.package}@{pin.version} reports {out.strip()!r}")
    return time.monotonic() - started


def main(argv: list[str]) -> int:
    if argv != ["install"]:
        print("usage: python3 -m tests.helpers.clients install", file=sys.stderr)
        return 2
    cache = cache_dir()
    for pin in PINS:
        seconds = install(pin, cache)
        print(f"clients: {pin.package}@{pin.version} in {pin.prefix(cache)} ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
