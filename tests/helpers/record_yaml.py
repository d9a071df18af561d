"""Record how Claude Code's YAML parser reads frontmatter values: `Bun.YAML.parse` of Bun
1.4.0, the Bun inside Claude Code 2.1.197 (2.1.332 has 1.4.6, not on npm; 1.4.5 gives the
same bytes). The cases are scalars of every tag and style, plus keys, merges and the keys
each file kind reads; `tests/parsing/test_yaml_values.py` compares ctxasm with the record.

    python3 -m tests.helpers.record_yaml [OUT]   # default tests/data/yaml/bun-1.4.0.jsonl

It installs `@oven/bun-linux-x64@1.4.0` from npm into a temporary directory (nothing of a
repository is run: the cases are built here). Standard library only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

BUN = "@oven/bun-linux-x64@1.4.0"
OUT = Path(__file__).resolve().parents[1] / "data" / "yaml" / "bun-1.4.0.jsonl"

SCALARS = (
    "2021-02-30", "2021-02-03", "2001-12-14t21:59:43.10-05:00", "2021-13-01", "23:59:60",
    "1:20", "190:20:30", "9" * 5000, "9" * 400, "9" * 310, "9" * 20, "9007199254740993",
    "-" + "9" * 30, "0x" + "f" * 300, "0xFF", "-0x1F", "+0x10", "0X1F", "0x10000000000000000",
    "0xffffffffffffffff", "0o17", "0o" + "7" * 400, "017", "0b101", "1_000", "+12", "-0",
    "00", "1e5", "1e400", "-1e400", "1.", ".5", "+.5e-3", "1e", ".inf", "-.Inf", "+.INF",
    ".nan", ".NaN", "-.nan", "NaN", "inf", "yes", "no", "on", "off", "y", "n", "true", "True",
    "TRUE", "tRue", "false", "False", "FALSE", "null", "Null", "NULL", "~", "nUll", "", "<<",
    "=", "src/**/*.ts", "*.{ts,tsx}", "a, b, c", "12e03", "0.1.2", "1,000", "$1", "0x", "0o",
    "é", "\u00a0x",
)  # fmt: skip
# Tags PyYAML's parser reports as Bun reads them (not the verbatim `!<...>` or the bare `!`).
TAGS = ("", "!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!timestamp ",
        "!!binary ", "!!merge ", "!!set ", "!custom ")  # fmt: skip
DOCUMENTS = (
    "1: x\ntrue: y\nnull: z\n~: w\n1.5: v\n0x10: u\n1e3: t\n.inf: s\n-0: r",
    "b: 1\n2: x\n<<: {1: y, a: z}\n4294967295: q\n4294967294: r\n01: s\n-1: t",
    "? [a, b]\n: c", "? {a: 1}\n: c", "? [a, [b, c], ~, 1.5]\n: d",
    "<<: {b: 1}\nc: 2", "<<: [{a: 1}, {b: 2}]\nc: 3", "<<: [{a: 1}, {a: 2}]", "a: 1\n<<: {a: 2}",
    "<<: {a: 1}\na: 2", "a: 1\n<<: {a: 2, b: 3}\nc: 4", "<<: 5\nc: 1", "x: &x {a: 1}\n<<: *x\nb: 2",
    "a: 1\na: 2", "v: &x 2021-02-30\nw: *x", "v: !!set {x, y}", "v: !!omap [a: 1, b: 2]",
    "v: !!pairs [a: 1, a: 2]", "v: !!map {b: 1}", "v: !!seq [1]", "v: !!str [1]",
    "v: !foo {x: 1}", "v: |\n  x\n  y\n", "v: >\n  x\n  y\n", "v: |-\n  2021-02-30\n",
    "paths: 2021-02-03", "paths: [2021-02-30, 23:59:60, yes, 1:20]", "tools: [Read, 1, true, ~]",
    "tools: Read, 2021-02-30", "name: 2021-02-30\ndescription: 23:59:60", "name: 1e400",
    "alwaysApply: yes", "alwaysApply: 'true'", "alwaysApply: TRUE", "alwaysApply: 1",
    "applyTo: 2021-02-30", "globs: 1:20, 2:30", "excludeAgent: !!str 12", "model: 0x10",
)  # fmt: skip

_RECORD = """
const docs = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const enc = (k, v) => typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))
  ? {"$number": Object.is(v, -0) ? "-0" : String(v)} : v;
for (const doc of docs) {
  let out;
  try { out = {yaml: doc, value: Bun.YAML.parse(doc)}; }
  catch (e) { out = {yaml: doc, error: String(e.message).split("\\n")[0]}; }
  console.log(JSON.stringify(out, enc));
}
"""


def cases() -> list[str]:
    """Every scalar with every tag, plain (where YAML allows it), double- and single-quoted,
    as the value of `v`; then the documents."""
    out = []
    for scalar in SCALARS:
        long = len(scalar) > 100  # a few tags only: the record stays small
        for tag in ("", "!!int ", "!!str ", "!!timestamp ") if long else TAGS:
            out.append(f"v: {tag}{scalar}")
            out.append(f"v: {tag}{json.dumps(scalar)}")
            if not long:
                out.append(f"v: {tag}'" + scalar.replace("'", "''") + "'")
    return out + list(DOCUMENTS)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["npm", "install", "--no-save", "--prefix", tmp, BUN], check=True, timeout=600
        )
        bun = Path(tmp) / "node_modules" / "@oven" / "bun-linux-x64" / "bin" / "bun"
        (Path(tmp) / "cases.json").write_text(json.dumps(cases()), encoding="utf-8")
        (Path(tmp) / "record.js").write_text(_RECORD, encoding="utf-8")
        ran = subprocess.run(
            [str(bun), "record.js", "cases.json"], cwd=tmp, check=True, timeout=120,
            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": tmp},
        )  # fmt: skip
    out.write_text(ran.stdout, encoding="utf-8")
    print(f"record_yaml: {ran.stdout.count(chr(10))} cases in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
