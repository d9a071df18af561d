"""A port of `marked`'s lexer (`gfm: false`): the token boundaries that Claude Code's comment
stripping and `@import` scan depend on, which no CommonMark parser reproduces
(docs/markdown.md). `parsing.markdown` walks the tokens as the client does.

- `blocks`: the block rules (`Lexer.rules.block.normal`) and the block procedures of
  `marked`'s `Tokenizer` and `Lexer`, line by line;
- `inline`: the inline rules (`Lexer.rules.inline.normal`) and `Lexer.inlineTokens`, as far
  as the import scan reads them;
- `jsre`: what those JavaScript patterns and string trims mean, in Python `re`.

Upstream: `marked` 17 (github.com/markedjs/marked: `src/rules.ts`, `src/Tokenizer.ts`,
`src/Lexer.ts`). `tests/data/markdown-corpus.jsonl` is what `marked` 17.0.6 answers for
3,500 documents drawn by `tests/tools/markdown_corpus.py`, byte for byte, and
`tests/parsing/test_markdown_corpus.py` holds the port to it. `marked` 4 to 17 behave alike on such documents; 18 changed its tokens, so the port
stays on 17 while the client does.

Re-syncing with another `marked` (needs node and npm; the tests do not):

1. `npm install --prefix /tmp/marked marked@VERSION`, and read what changed in the three
   files above since the version named here;
2. port each change rule for rule (patterns are `marked`'s own sources, through
   `jsre.compile_js`; procedures follow its code, quirks included);
3. when the client's use of `marked` changed, update `tests/tools/marked_reference.cjs`;
   then regenerate the corpus with that `marked`:
   `MARKED=/tmp/marked/node_modules/marked .venv/bin/python -m tests.tools.markdown_corpus`,
   read the diff of the data file, and run
   `pytest tests/parsing/test_markdown_corpus.py tests/parsing/test_markdown.py`;
4. name the new version here and in docs/markdown.md.
"""
