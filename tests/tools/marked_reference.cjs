// What Claude Code does to an instruction file's text, run with the real `marked` lexer.
//
// Reads JSON lines `{"doc": "..."}` on stdin, writes JSON lines `{"text": ..., "imports": [...]}`:
// `text` is the file's content after frontmatter removal and comment stripping, `imports` the
// absolute paths of its `@imports` for a file at /p/CLAUDE.md with the home at /h, in the
// client's order (a Set of resolved paths). The logic mirrors Claude Code 2.1.x
// (`parseFrontmatter`, `stripHtmlCommentsFromTokens`, `extractIncludePathsFromTokens`,
// `expandPath`); see docs/markdown.md. Run through `tests/tools/markdown_corpus.py`.
"use strict";

const path = require("path");
const readline = require("readline");
const { Lexer } = require(process.env.MARKED || "marked");

const FRONTMATTER = /^---\s*\n([\s\S]*?)---\s*\n?/;
const BASE = "/p/CLAUDE.md";
const HOME = "/h";

function withoutFrontmatter(raw) {
  const match = raw.match(FRONTMATTER);
  return match ? raw.slice(match[0].length) : raw;
}

function stripComments(content, tokens) {
  if (!content.includes("<!--")) return content;
  let result = "";
  const commentSpan = /<!--[\s\S]*?-->/g;
  for (const token of tokens) {
    if (token.type === "html") {
      const trimmed = token.raw.trimStart();
      if (trimmed.startsWith("<!--") && trimmed.includes("-->")) {
        const residue = token.raw.replace(commentSpan, "");
        if (residue.trim().length > 0) result += residue;
        continue;
      }
    }
    result += token.raw;
  }
  return result;
}

function expandPath(p, baseDir) {
  const trimmed = p.trim();
  if (!trimmed) return path.posix.normalize(baseDir);
  if (trimmed === "~") return HOME;
  if (trimmed.startsWith("~/")) return path.posix.join(HOME, trimmed.slice(2));
  if (path.posix.isAbsolute(trimmed)) return path.posix.normalize(trimmed);
  return path.posix.resolve(baseDir, trimmed);
}

function imports(tokens) {
  const found = new Set();
  function fromText(text) {
    const includeRegex = /(?:^|\s)@((?:[^\s\\]|\\ )+)/g;
    let match;
    while ((match = includeRegex.exec(text)) !== null) {
      let p = match[1];
      if (!p) continue;
      const hash = p.indexOf("#");
      if (hash !== -1) p = p.substring(0, hash);
      if (!p) continue;
      p = p.replace(/\\ /g, " ");
      const valid =
        p.startsWith("./") ||
        p.startsWith("~/") ||
        (p.startsWith("/") && p !== "/") ||
        (!p.startsWith("@") && !p.match(/^[#%^&*()]+/) && p.match(/^[a-zA-Z0-9._-]/));
      if (valid) found.add(expandPath(p, path.posix.dirname(BASE)));
    }
  }
  function walk(elements) {
    for (const element of elements) {
      if (element.type === "code" || element.type === "codespan") continue;
      if (element.type === "html") {
        const raw = element.raw || "";
        const trimmed = raw.trimStart();
        if (trimmed.startsWith("<!--") && trimmed.includes("-->")) {
          const residue = raw.replace(/<!--[\s\S]*?-->/g, "");
          if (residue.trim().length > 0) fromText(residue);
        }
        continue;
      }
      if (element.type === "text") fromText(element.text || "");
      if (element.tokens) walk(element.tokens);
      if (element.items) walk(element.items);
    }
  }
  walk(tokens);
  return [...found];
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  const content = withoutFrontmatter(JSON.parse(line).doc);
  const tokens = new Lexer({ gfm: false }).lex(content);
  const out = { text: stripComments(content, tokens), imports: imports(tokens) };
  process.stdout.write(JSON.stringify(out) + "\n");
});
