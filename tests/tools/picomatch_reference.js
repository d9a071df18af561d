// Reference data for `claudeMdExcludes`: what the client decides with picomatch.
//
// Claude Code asks `picomatch.isMatch(absolutePath, patterns, {dot: true})`: each pattern
// is tested on its own and a file is excluded when any matches, so `!x` matches every path
// `x` does not. Claude Code 2.1.88 bundles picomatch 4.0.3 (4.0.1 to 4.0.3 are the same).
//
// Regenerate (node and npm needed here only, never in CI):
//   npm install --prefix /tmp/pm403 picomatch@4.0.3
//   NODE_PATH=/tmp/pm403/node_modules node tests/tools/picomatch_reference.js \
//     > tests/data/excludes-picomatch.jsonl
// Each line: {"patterns": [...], "path": absolute path, "excluded": bool}.
'use strict'
const picomatch = require('picomatch')

const {rand, pick} = require('./random')(9)

const GLOBS = ['**/CLAUDE.md', '**/a/b/c/CLAUDE.md', '/p/**', '/p/a/**', '/h/.claude/CLAUDE.md',
  '**/.claude/**', '/p/*.md', '/p/a/*/CLAUDE.md', '**/{a,b}/CLAUDE.md', '**/CLAUDE.local.md',
  '/p/docs/*.md', '**/*.md', '/h/**', '**/rules/*.md', '/p/a/b/c/CLAUDE.md', '**/x?.md',
  '/p/[ab]/CLAUDE.md', '**']
const PATHS = ['/h/.claude/CLAUDE.md', '/h/.claude/rules/r.md', '/p/CLAUDE.md', '/p/CLAUDE.local.md',
  '/p/.claude/CLAUDE.md', '/p/.claude/rules/x1.md', '/p/a/CLAUDE.md', '/p/a/b/c/CLAUDE.md',
  '/p/a/b/c/docs/x.md', '/p/docs/guide.md', '/p/b/CLAUDE.md', '/p/a/b/CLAUDE.md', '/q/CLAUDE.md',
  '/p/xy.md', '/p/a/b/c/.claude/rules/r.md']

const rows = []
const seen = new Set()
while (rows.length < 600) {
  const n = 1 + Math.floor(rand() * 3)
  const patterns = []
  for (let i = 0; i < n; i++) {
    const bangs = pick(['!', '!', '', '', '!!', '!!!'])
    patterns.push(bangs + pick(GLOBS))
  }
  const path = pick(PATHS)
  const key = JSON.stringify([patterns, path])
  if (seen.has(key)) continue
  seen.add(key)
  rows.push({patterns, path, excluded: picomatch.isMatch(path, patterns, {dot: true})})
}
for (const row of rows) process.stdout.write(JSON.stringify(row) + '\n')
