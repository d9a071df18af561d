// Reference data for `paths:` globs: what the client decides with the npm `ignore` package.
//
// Claude Code splits a rule's `paths:` at top-level commas, expands `{a,b}` braces, drops a
// trailing `/**` and empty patterns, then asks `ignore().add(patterns).ignores(relative)`
// with ignore's defaults (case-insensitive). Claude Code 2.1.88 bundles ignore 7.0.5
// byte for byte; 2.1.332 carries its own port of it, which decides every line of the data
// alike. A pattern whose regex JavaScript refuses matches nothing (the client since
// 2.1.207), so it is left out of the list here.
//
// Regenerate (node and npm needed here only, never in CI):
//   npm install --prefix /tmp/ignore-ref ignore@7.0.5
//   NODE_PATH=/tmp/ignore-ref/node_modules node tests/tools/ignore_reference.js \
//     > tests/data/globs-ignore.jsonl
// Each line: {"paths": [raw values of the YAML list], "path": relative path, "match": bool}.
'use strict'
const ignore = require('ignore')

const {rand, pick, chance} = require('./random')(20261130)

// The client's splitPathInFrontmatter / expandBraces, as SPEC section 4 describes them.
const expandBraces = pattern => {
  const m = pattern.match(/^([^{]*)\{([^}]+)\}(.*)$/s)
  if (!m) return [pattern]
  return m[2].split(',').map(a => a.trim()).flatMap(a => expandBraces(m[1] + a + m[3]))
}
const split = input => {
  if (Array.isArray(input)) return input.flatMap(split)
  const parts = []
  let current = ''
  let depth = 0
  for (const ch of input) {
    if (ch === '{') depth++
    else if (ch === '}') depth--
    else if (ch === ',' && depth === 0) {
      if (current.trim()) parts.push(current.trim())
      current = ''
      continue
    }
    current += ch
  }
  if (current.trim()) parts.push(current.trim())
  return parts.flatMap(expandBraces)
}
const clientPatterns = value => split(value)
  .map(p => p.endsWith('/**') ? p.slice(0, -3) : p)
  .filter(p => p.length > 0)

const usable = pattern => {
  try {
    ignore().add([pattern]).ignores('x')
    return true
  } catch (e) {
    return false
  }
}
const decide = (value, path) => {
  const patterns = clientPatterns(value).filter(usable)
  return ignore().add(patterns).ignores(path)
}

// --- what rule authors write --------------------------------------------------------------
const DIRS = ['src', 'lib', 'app', 'tests', 'docs', 'api', 'Src', 'SRC', 'packages', 'web',
  '.github', 'node_modules', 'my dir', 'v1.2', '.config', 'a', 'b', 'x', 'Foo', 'déjà']
const STEMS = ['index', 'app', 'main', 'README', 'test_x', 'foo.test', 'Button', 'a', 'b',
  '.env', 'config', 'my file', 'data.v2', 'ÉTÉ', 'x']
const EXTS = ['.ts', '.tsx', '.js', '.md', '.py', '.TS', '.Md', '.json', '', '.d.ts', '.yml']
const NAMEPARTS = () => pick(STEMS) + pick(EXTS)

const segmentGlob = () => pick([
  () => pick(DIRS),
  () => '*',
  () => '*' + pick(EXTS.filter(Boolean)),
  () => pick(STEMS) + '.*',
  () => '*.{' + pick(['ts,tsx', 'js,jsx', 'md,MD', 'py, pyi']) + '}',
  () => '{' + pick(DIRS) + ',' + pick(DIRS) + '}',
  () => pick(STEMS) + '?' + pick(EXTS),
  () => '?' + pick(['', 'b', '.ts']),
  () => '[' + pick(['abc', 'a-z', 'A-Z', '0-9', '!a', '^a', 'tT', 'a-', '-a', '.', ' ']) + ']' + pick(['*', '', 'pp', '.ts']),
  () => NAMEPARTS(),
  () => pick(DIRS).toUpperCase(),
  () => pick(['*', '']) + pick(STEMS) + pick(['*', '']),
  () => '.*',
  () => '*.',
  () => pick(['a b', 'a\\ b', 'my\\ dir', 'x  y']),
  () => '\\' + pick(['*', '?', '[', '!', '#', 'a']) + pick(['', 'b']),
  () => '***',
])()

const patternOf = () => {
  const n = 1 + Math.floor(rand() * 3)
  const segments = []
  for (let i = 0; i < n; i++) {
    segments.push(chance(0.25) ? '**' : segmentGlob())
  }
  let p = segments.join('/')
  if (chance(0.15)) p = '/' + p
  else if (chance(0.08)) p = './' + p
  else if (chance(0.08)) p = '**/' + p
  if (chance(0.1)) p += '/'
  else if (chance(0.1)) p += '/**'
  else if (chance(0.05)) p += '/*'
  if (chance(0.06)) p = ' ' + p
  if (chance(0.06)) p += pick([' ', '  ', '\\ '])
  if (chance(0.05)) p = '#' + p
  if (chance(0.05)) p = '\\#' + p
  if (chance(0.15)) p = p.split('').map(c => chance(0.3) ? c.toUpperCase() : c).join('')
  return p
}

// A path that the pattern was meant for, more or less.
const instantiate = pattern => {
  const out = []
  for (const seg of pattern.replace(/^[!/.]+/, '').split('/')) {
    if (!seg) continue
    if (seg === '**') {
      for (let i = Math.floor(rand() * 3); i > 0; i--) out.push(pick(DIRS))
      continue
    }
    let s = expandBraces(seg)
    s = pick(s)
      .replace(/\\(.)/g, '$1')
      .replace(/\[[^\]]*\]/g, () => pick(['a', 'b', 'T', 'z', '0', '!', '^', '-']))
      .replace(/\*+/g, () => pick(['', 'x', 'index', 'a.b', 'Foo']))
      .replace(/\?/g, () => pick(['a', 'Z', '.', '1']))
      .trim()
    if (s) out.push(s)
  }
  if (chance(0.3)) out.push(NAMEPARTS())
  if (chance(0.2)) out.unshift(pick(DIRS))
  return out
}

const randomPath = () => {
  const out = []
  for (let i = Math.floor(rand() * 3); i > 0; i--) out.push(pick(DIRS))
  out.push(NAMEPARTS())
  return out
}

const caseFlip = s => s.split('').map(c => chance(0.2) ? (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) : c).join('')

const valid = segs => segs.length && segs.every(s => s && s !== '.' && s !== '..')

const rows = []
const seen = new Set()
const want = 2600
while (rows.length < want) {
  const k = chance(0.8) ? 1 : 2 + Math.floor(rand() * 2)
  const value = []
  for (let i = 0; i < k; i++) {
    let p = patternOf()
    if (i > 0 && chance(0.5)) p = '!' + p
    else if (chance(0.04)) p = '!' + p
    value.push(chance(0.1) && i === 0 ? p + ', ' + patternOf() : p)
  }
  let segs = chance(0.7) ? instantiate(pick(value)) : randomPath()
  if (chance(0.3)) segs = segs.map(caseFlip)
  if (!valid(segs)) continue
  const path = segs.join('/')
  const key = JSON.stringify([value, path])
  if (seen.has(key)) continue
  seen.add(key)
  rows.push({paths: value, path, match: decide(value, path)})
}

// The issue's own example and a few fixed forms, first.
const fixed = [
  [['src/**/*.TS'], 'src/app.ts'],
  [['*.{ts,tsx}'], 'src/App.TSX'],
  [['src/**', '!src/gen'], 'src/gen/x.ts'],
  [['docs/'], 'docs/a.md'],
  [['/lib/*.py'], 'lib/x.py'],
  [['./lib/*.py'], 'lib/x.py'],
]
const head = fixed.map(([paths, path]) => ({paths, path, match: decide(paths, path)}))
for (const row of [...head, ...rows]) process.stdout.write(JSON.stringify(row) + '\n')
