"""Turning an assembly into text: the native sections and the boundary (`sections`), the one
format registry (`formats`), Jinja2 templates (`render`), stability tiers and cache
breakpoints (`tiers`), provider request shapes (`provider`) and the cache report (`cache`)."""
