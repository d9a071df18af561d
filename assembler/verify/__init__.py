"""`ctxasm verify`: run an agent's own program headless against a local stand-in for its
provider, and compare the instruction context in the request it sends with ctxasm's
prediction, file by file and byte by byte (docs/verify.md).

`provider` is the stand-in (standard library HTTP on 127.0.0.1), `home` the temporary home
the program runs with, `process` the bounded run of the program, `compare` the comparison
and its report, `check` what ties them together (`verify`, and `capture` and `predict`,
which the recorder of the test references shares). Every fact of an agent comes from its
client (`Client.headless`).
"""
