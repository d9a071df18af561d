// Reference data for the MEMORY.md cut: what the client's truncateEntrypointContent gives.
//
// The client trims the index, splits it on "\n" (a CRLF line keeps its "\r"), keeps 200
// lines, then cuts at the last "\n" at or before UTF-16 index 25,000 (or at 25,000 when
// there is none) and appends its warning; JavaScript counts UTF-16 code units, so a
// character outside the Basic Multilingual Plane counts 2 and a cut with no newline can
// split one. Such a half character is written as U+FFFD here (what `toWellFormed` and the
// API's JSON make of it), which is what ctxasm keeps.
//
// Regenerate (node only, no package):
//   node tests/tools/memory_cut_reference.js > tests/data/memory-cut.jsonl
// Each line: the case ({eol, unit, width, count, shift}: `shift` x's, then `count` lines of
// `width` repetitions of `unit` joined by `eol`), and the result's UTF-16 length, its last 24
// code units and the SHA-256 of its UTF-16LE bytes.
'use strict'
const crypto = require('crypto')

const MAX_LINES = 200
const MAX_BYTES = 25000

const formatFileSize = size => {
  const kb = size / 1024
  if (kb < 1) return `${size} bytes`
  if (kb < 1024) return `${kb.toFixed(1).replace(/\.0$/, '')}KB`
  const mb = kb / 1024
  return `${mb.toFixed(1).replace(/\.0$/, '')}MB`
}

const truncate = raw => {
  const trimmed = raw.trim()
  const lines = trimmed.split('\n')
  const byLines = lines.length > MAX_LINES
  const byBytes = trimmed.length > MAX_BYTES
  if (!byLines && !byBytes) return trimmed
  let truncated = byLines ? lines.slice(0, MAX_LINES).join('\n') : trimmed
  if (truncated.length > MAX_BYTES) {
    const cutAt = truncated.lastIndexOf('\n', MAX_BYTES)
    truncated = truncated.slice(0, cutAt > 0 ? cutAt : MAX_BYTES)
  }
  const reason = byBytes && !byLines
    ? `${formatFileSize(trimmed.length)} (limit: ${formatFileSize(MAX_BYTES)}) — index entries are too long`
    : byLines && !byBytes
      ? `${lines.length} lines (limit: ${MAX_LINES})`
      : `${lines.length} lines and ${formatFileSize(trimmed.length)}`
  return truncated + `\n\n> WARNING: MEMORY.md is ${reason}. Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files.`
}

const rows = []
for (const eol of ['\n', '\r\n']) {
  for (const unit of ['a', 'é', '\u{1F600}', 'a\u{1F600}']) {
    const step = unit.length
    const widths = [1, 60, 124, 125, 199, 200]
    for (const limit of [MAX_BYTES - 2, MAX_BYTES - 1, MAX_BYTES, MAX_BYTES + 1, MAX_BYTES + 3]) {
      widths.push(Math.floor(limit / step))
    }
    for (const width of widths) {
      for (const count of [1, 2, 10, 199, 200, 201, 250]) {
        if (width * step * count > 8000000 || (width > 1000 && count > 10)) continue
        for (const shift of [0, 1]) {
          const text = 'x'.repeat(shift) + Array(count).fill(unit.repeat(width)).join(eol)
          const out = truncate(text).toWellFormed()
          const sha = crypto.createHash('sha256').update(Buffer.from(out, 'utf16le')).digest('hex')
          rows.push({eol, unit, width, count, shift, units: out.length, end: out.slice(-24), sha})
        }
      }
    }
  }
}
for (const row of rows) process.stdout.write(JSON.stringify(row) + '\n')
