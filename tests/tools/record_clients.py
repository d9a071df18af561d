"""Records the reference requests of the real clients on the project's fixture trees:
`tests/data/clients/<client>-<version>/<case>.json` (tests/helpers/client_cases.py).

It is `ctxasm verify`'s own capture (`assembler.verify.check.session`: the stand-in
provider, the program's launch and bounded run, the scripted reads), run on each case laid
out as the tests lay it out, with each pinned version `make clients` installed:

    make clients
    .venv/bin/python -m tests.tools.record_clients            # every case and version
    .venv/bin/python -m tests.tools.record_clients demo-api   # one case

A `subagent-NAME` case makes the main agent call the Agent tool for that agent type at its
first turn, and records the subagent's requests (its start, then after each of its reads).

The tests that read the references need no node (tests/verify/test_references.py).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from assembler.verify.check import session
from tests.helpers.client_cases import (
    BY_NAME,
    CASES,
    case_headless,
    lay_out,
    reads,
    recorded,
    reference_path,
)
from tests.helpers.clients import CACHE, installed


def record(name: str) -> list[Path]:
    case = BY_NAME[name]
    written = []
    for pin in case.pins():
        program = installed(pin)
        if program is None:
            raise SystemExit(f"{pin.package}@{pin.version} is not installed: run make clients")
        root = Path(tempfile.mkdtemp(prefix="ctxasm-golden-", dir="/tmp"))
        try:
            cwd = lay_out(case, root)
            headless = case_headless(case, root)
            with session(headless, str(program), root / "home", reads(case, root)) as run:
                version = run.version(cwd)
                turns = run.capture(cwd)
        finally:
            shutil.rmtree(root)
        reference = {
            "case": case.name,
            "client": case.client,
            "version": version,
            "package": f"{pin.package}@{pin.version}",
            "recorder": "python -m tests.tools.record_clients",
            "turns": recorded(turns, headless.kept, root, pin.prefix(CACHE)),
        }
        path = reference_path(case, pin)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(reference, indent=1, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    for name in argv or [case.name for case in CASES]:
        for path in record(name):
            print(
                f"recorded {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
