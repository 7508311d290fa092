"""Label selectors for shards, matched by the operator (kopf's handler filter).

Kubernetes' own syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
`k`, `!k`, joined by commas.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

Requirement = Callable[[Mapping[str, str]], bool]

_SET = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQUALITY = re.compile(r"^\s*([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([\w./-]+)\s*$")


def _terms(selector: str) -> list[str]:
    """Split on the commas outside parentheses: `a in (x,y),b` is two terms."""
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [t for t in (*terms, current) if t.strip()]


def _requirement(term: str) -> Requirement:
    if found := _SET.match(term):
        key, operator, listed = found.groups()
        values = {v.strip() for v in listed.split(",") if v.strip()}
        if operator == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if found := _EQUALITY.match(term):
        key, operator, value = found.groups()
        if operator == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if found := _EXISTS.match(term):
        negated, key = found.groups()
        return lambda labels: (key in labels) != bool(negated)
    raise ValueError(f"not a label selector term: {term.strip()!r}")


def selector_matcher(selector: str) -> Callable[[Mapping[str, str] | None], bool]:
    """A predicate over an object's labels; ValueError names a malformed term."""
    requirements = [_requirement(term) for term in _terms(selector)]
    return lambda labels: all(match(labels or {}) for match in requirements)
