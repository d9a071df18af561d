"""`ctxasm report`: one self-contained HTML page of what every agent loads in a directory.

`build` gathers what `explain --policy all`, `lint` and `cache` compute into one `Report`
(nothing here decides what an agent loads); `page` renders it through the shipped Jinja2
template `templates/report/page.html.j2`, every text escaped. See docs/report.md.
"""
