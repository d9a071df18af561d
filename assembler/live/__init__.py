"""Watching a run and running it again: the incremental `Assembler`, `ctxasm watch`, and
`ctxasm explain` (every candidate a run considered and what became of it)."""
