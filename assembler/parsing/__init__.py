"""Pure functions of an instruction file's text: frontmatter and `paths:` globs, HTML comment
stripping as the client's `marked` lexer does it, `@import` tokens, and one memoized parse."""
