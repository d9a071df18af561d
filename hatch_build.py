"""A hatchling build hook: records the commit a wheel or sdist is built from as
`assembler/_data/commit`, which `ctxasm --version` prints (`assembler/version.py`).

Built without git (or from an sdist, which carries its record already), nothing is written
and `--version` prints the version alone. An editable install asks git at run time instead.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.config import BuilderConfig
from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _version_module(root: Path) -> ModuleType:
    """`assembler/version.py`, loaded by its path: the package's dependencies are not
    installed in the build environment, so `assembler` itself cannot be imported."""
    spec = importlib.util.spec_from_file_location(
        "_ctxasm_version", root / "assembler" / "version.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CommitRecord(BuildHookInterface[BuilderConfig]):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return  # the checkout itself is imported: version.py asks git there
        module = _version_module(Path(self.root))
        commit = module.commit_of(Path(self.root))
        if commit is None:
            return
        self._scratch = tempfile.mkdtemp(prefix="ctxasm-build-")
        record = Path(self._scratch) / "commit"
        record.write_text(commit + "\n", encoding="ascii")
        build_data["force_include"][str(record)] = "/".join(("assembler", *module.RECORD))

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
