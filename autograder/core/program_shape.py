"""A program's shape, for finding students whose programs are the same: the multiset of its
dataflow nodes, each node hashed with its operation, its attributes and types, and its operands'
own hashes (never their names). Two programs written with other names, comments or an order of
independent lines have the same multiset; near-copies share most of it (``likeness``).

Read from a module's text (StableHLO); locations and channel numbers, which depend on where and in
what order things were written, are left out. A value defined inside a region (a loop's body, a
reduction's) counts by its operation alone where it reads the region's arguments.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

_DEF = re.compile(r"^\s*(%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+)*)\s*=\s*(.*)$")
_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_LOC = re.compile(r"\s*loc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")
_HANDLE = re.compile(r"handle = \d+")  # a collective's channel: numbered in the order written


def nodes(module_text: str) -> list[str]:
    """The program's nodes, each a short hash of what it computes from what, sorted."""
    known: dict[str, str] = {}
    found = []
    for line in module_text.splitlines():
        definition = _DEF.match(line)
        if not definition:
            continue
        results, rest = definition.groups()
        said = _HANDLE.sub("handle = #", _LOC.sub("", rest))
        node = hashlib.sha1(_VALUE.sub(lambda v: known.get(v.group(0), "%arg"), said).encode()).hexdigest()[:12]
        found.append(node)
        for name, count in _results(results):
            known[name] = node
            known.update({f"{name}#{i}": f"{node}#{i}" for i in range(count)})
    return sorted(found)


def likeness(a: list[str], b: list[str]) -> float:
    """The share of two programs' nodes they have in common (multiset Jaccard): 1.0 for the same
    program however written, 0.0 for nothing in common."""
    ca, cb = Counter(a), Counter(b)
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 0.0


def _results(results: str) -> list[tuple[str, int]]:
    """The values a definition names, with how many results each stands for (``%3:2``)."""
    named = []
    for part in results.split(","):
        name, _, count = part.strip().partition(":")
        named.append((name, int(count) if count else 1))
    return named
