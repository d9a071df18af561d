"""A port of the npm `ignore` package: how it turns one gitignore pattern into a regular
expression (`rules`), which `parsing.globs` compiles for RE2. Claude Code matches a rule's
or a skill's `paths:` with it (Gemini CLI its tools' `.gitignore` and `.geminiignore`
filtering, which ctxasm does not model).

Upstream: `ignore` 7.0.5 (github.com/kaelzhang/node-ignore, `index.js`: `REPLACERS`,
`TRAILING_WILD_CARD_REPLACERS`, `checkPattern`, `createRule`), the version Claude Code
2.1.88 bundles byte for byte; 2.1.332 carries its own copy, which decides the reference data
alike. `tests/data/globs-ignore.jsonl` is what `ignore` 7.0.5 decides for 2,600 random
`paths:` values and paths, after the client's comma splitting and brace expansion, and
`tests/parsing/test_globs_ignore.py` holds ctxasm to it line by line.

Re-syncing with another `ignore` (needs node and npm; the tests do not):

1. `npm install --prefix /tmp/ignore-ref ignore@VERSION`, and read what changed in its
   `index.js` since the version named here (the replacers, in their order);
2. port each change in `rules.js_source` (same order, JavaScript's `\\s`, `.` and `$`
   spelled out), and in `rules.to_re2` when it writes regex syntax not handled yet;
3. regenerate the reference data with that `ignore`:
   `NODE_PATH=/tmp/ignore-ref/node_modules node tests/tools/ignore_reference.js
   > tests/data/globs-ignore.jsonl`, read its diff, and run
   `pytest tests/parsing/test_globs_ignore.py tests/parsing/test_globs.py`;
4. name the new version here, in `tests/tools/ignore_reference.js` and in docs/markdown.md.
"""
