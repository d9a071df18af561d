"""YAML values as Claude Code's parser gives them: `Bun.YAML.parse`, YAML 1.2's core schema.

PyYAML's safe loader is YAML 1.1: it turns `2021-02-03` into a date, `yes` into True and
`1:20` into 4800, and raises `ValueError` (not a YAML error) for a value it cannot convert
(`2021-02-30`, a time of `23:59:60`, an integer of over 4,300 digits), which no
`except yaml.YAMLError` catches. Bun (1.4.0 in Claude Code 2.1.197, 1.4.6 in 2.1.332) has no
such values: a date is a string, an explicit tag never fails (`!!int abc` is "abc",
`!!timestamp 2021-02-30` the string), a number too large for a double is Infinity.

So the values are not constructed by PyYAML. Its parser and composer build the node graph
(libyaml's when present; every scalar tagged only "plain" or "string", no resolver of
PyYAML's consulted), and `value_of` turns nodes into Python values with functions that cannot
fail, whatever a scalar holds:
- a quoted or block scalar, or a plain one tagged `!!str`, is a string;
- an untagged plain scalar is resolved as the core schema does: null (`null`, `Null`,
  `NULL`, `~`, empty), bool (`true`/`True`/`TRUE`, the same for false), int (decimal, `0o`
  octal, `0x` hex, as Bun: a sign on hex too), float (with `.inf`, `.nan`), else a string; an
  integer beyond 2**53 is a float, as JavaScript's number is, one beyond a double `inf`, a
  hex or octal one of 2**64 or more a string;
- a tagged plain scalar is resolved for its tag only: `!!int` and `!!float` a number, `!!bool`
  a boolean, `!!null` a null, anything else a string (empty: null, but "" for `!!str`). Two
  spellings PyYAML's parser does not tell apart are resolved like their twins, where Bun
  gives the string: the verbatim `!<tag:yaml.org,2002:int>` (as `!!int`) and the
  non-specific `!` (as no tag);
- mapping keys are strings as JavaScript makes them (`true`, `null`, `16` for `0x10`, `a,b`
  for a list), in JavaScript's order (array indexes first, by value); `<<` merges a mapping
  or a list of mappings where it stands (a key already there wins, a later one overrides);
  the last of two equal keys wins;
- an alias is the same Python object as its anchor (no copy: a value aliased 19,000 times is
  held once).

Checking the size of a document (nodes, depth, characters after aliases) is the caller's
(`frontmatter._check_size`); this module only builds values.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

PLAIN = "ctxasm:plain"  # an untagged plain scalar: resolved by `_core`
STRING = "tag:yaml.org,2002:str"

_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_TRUE = re.compile(r"(?:true|True|TRUE)\Z")
_FALSE = re.compile(r"(?:false|False|FALSE)\Z")
_DECIMAL = re.compile(r"[-+]?[0-9]+\Z")
_OCTAL = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"[-+]?0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INFINITY = re.compile(r"([-+]?)\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")
_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")  # an array index: listed first, by value
_SAFE_INTEGER = 2**53  # JavaScript's Number.MAX_SAFE_INTEGER + 1
_MAX_DIGITS = 300  # a decimal longer than this is read as a float (it is one in JavaScript)


class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's parser and composer with no resolver: a scalar is `PLAIN` or `STRING`."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            return PLAIN if implicit[0] else STRING
        if kind is yaml.SequenceNode:
            return "tag:yaml.org,2002:seq"
        return "tag:yaml.org,2002:map"


def compose(text: str) -> yaml.Node | None:
    """The node graph of the one document in `text` (None when it is empty); YAMLError when
    the text is not YAML."""
    return yaml.compose(text, Loader=Loader)  # builds nodes only: nothing is constructed


def value_of(node: yaml.Node) -> Any:
    """The Python value of `node`, as Bun.YAML.parse gives it. Never raises: every scalar has
    a value. Depth is the caller's bound (a document is checked before it is composed)."""
    return _Builder().value(node)


class _Builder:
    def __init__(self) -> None:
        self.built: dict[int, Any] = {}  # id(node) -> its value: an alias is its anchor's value

    def value(self, node: yaml.Node) -> Any:
        key = id(node)
        if key in self.built:
            return self.built[key]
        if isinstance(node, yaml.ScalarNode):
            # libyaml's plain style is "" (PyYAML's None); a quoted or block scalar is text.
            result: Any = node.value if node.style else _plain(node.value, node.tag)
        elif isinstance(node, yaml.SequenceNode):
            result = []
            self.built[key] = result
            result.extend(self.value(item) for item in node.value)
        else:
            result = {}
            self.built[key] = result
            self._fill(result, node)
        self.built[key] = result
        return result

    def _fill(self, result: dict[str, Any], node: yaml.Node) -> None:
        for key_node, value_node in node.value:
            if _is_merge(key_node, value_node):
                many = isinstance(value_node, yaml.SequenceNode)
                for source in value_node.value if many else [value_node]:
                    value = self.value(source)
                    for name in value if isinstance(value, dict) else ():
                        result.setdefault(name, value[name])  # an earlier key wins
                continue
            result[js_key(self.value(key_node))] = self.value(value_node)
        if any(map(_is_index, result)):  # JavaScript lists these first
            ordered = sorted(filter(_is_index, result), key=int)
            rest = [(k, result[k]) for k in result if not _is_index(k)]
            items = [(k, result[k]) for k in ordered] + rest
            result.clear()
            result.update(items)


def _is_index(name: str) -> bool:
    """Whether `name` is an array index to JavaScript (a canonical integer below 2**32 - 1)."""
    return _INDEX.match(name) is not None and int(name) < 2**32 - 1


def _is_merge(key: yaml.Node, value: yaml.Node) -> bool:
    if not (isinstance(key, yaml.ScalarNode) and not key.style and key.value == "<<"):
        return False
    if isinstance(value, yaml.MappingNode):
        return True
    return isinstance(value, yaml.SequenceNode) and all(
        isinstance(item, yaml.MappingNode) for item in value.value
    )


def _plain(text: str, tag: str) -> Any:
    """A plain scalar resolved as Bun does it: untagged by YAML 1.2's core schema; tagged
    `!!int` or `!!float` only if it is a number, `!!bool` a boolean, `!!null` a null (empty:
    null), otherwise (`!!str`, `!!timestamp`, `!!binary`, `!custom`, ...) a string."""
    if tag == PLAIN:
        return _core(text, True, True, True)
    if tag in (_INT, _FLOAT_TAG):
        return _core(text, False, False, True) if text else None
    if tag == _BOOL:
        return _core(text, False, True, False) if text else None
    if tag == _NULL_TAG:
        return _core(text, True, False, False)
    return text if text or tag == STRING else None


_INT, _FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_BOOL, _NULL_TAG = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
_MAX_RADIX = 2**64  # a hex or octal integer at or over this is a string in Bun


def _core(text: str, null: bool, boolean: bool, number: bool) -> Any:
    """`text` as a null, a boolean or a number of the core schema, of the kinds allowed,
    else the string."""
    if null and _NULL.match(text):
        return None
    if boolean and _TRUE.match(text):
        return True
    if boolean and _FALSE.match(text):
        return False
    if number:
        return _core_number(text)
    return text


def _core_number(text: str) -> Any:
    if _DECIMAL.match(text):
        digits = text.lstrip("+-").lstrip("0") or "0"
        return _number(int(text) if len(digits) <= _MAX_DIGITS else float(text))
    radix = 8 if _OCTAL.match(text) else 16 if _HEX.match(text) else 0
    if radix:
        magnitude = int(text.lstrip("+-")[2:], radix)
        if magnitude >= _MAX_RADIX:
            return text
        return _number(-magnitude if text.startswith("-") else magnitude)
    if _FLOAT.match(text):
        return float(text)  # any length: Python's float() has no digit limit
    infinity = _INFINITY.match(text)
    if infinity:
        return -math.inf if infinity.group(1) == "-" else math.inf
    if _NAN.match(text):
        return math.nan
    return text


def _number(value: int | float) -> int | float:
    """An integer as JavaScript holds it: exact up to 2**53, a float beyond, `inf` beyond a
    double."""
    if isinstance(value, float) or -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
        return value
    if value.bit_length() > 1024:
        return math.inf if value > 0 else -math.inf
    return float(value)


def js_key(value: Any) -> str:
    """A mapping key as a JavaScript object's property name."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_float(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_key(item) for item in value)
    return "[object Object]"


def _js_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)
