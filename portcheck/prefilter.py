"""A textual pre-filter: which rules could possibly match a file, judged from its raw text.

Every matcher derives the tokens any match must spell out (a qualified name's segment, a device
string, a method name), so a file that holds none of a rule's tokens is never parsed for that rule.
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Sequence, Tuple

from portcheck.catalog import CompiledRule

try:  # optional: every token in one pass over the text (Aho-Corasick, compiled); see bench/PROFILE.md
    import ahocorasick_rs as _aho
except ImportError:  # the containment search below gives the same answer
    _aho = None

_WORD = re.compile(r"[A-Za-z0-9_]{3,}")


class Prefilter:
    def __init__(self, rules: Sequence[CompiledRule], accelerate: bool = True) -> None:
        self.rules = tuple(r for r in rules if r.matchers)
        self.always: Tuple[int, ...] = ()
        by_token: Dict[str, List[int]] = {}
        always = []
        for index, entry in enumerate(self.rules):
            tokens = set()
            open_ended = False
            for matcher in entry.matchers:
                found = matcher.tokens()
                if not found:
                    open_ended = True
                tokens.update(found)
            if open_ended:
                always.append(index)
            for token in tokens:
                by_token.setdefault(token, []).append(index)
        self.always = tuple(always)
        self.by_token = by_token
        self.tokens: Tuple[str, ...] = tuple(sorted(by_token, key=len, reverse=True))
        # The search also knows each token's longest word (`flash_attn` in `from flash_attn`) as a
        # gate that selects no rule: a file without the word cannot hold any token built on it.
        self._selects: Dict[str, Tuple[int, ...]] = {word: () for word in _gates(by_token)}
        self._selects.update((token, tuple(indices)) for token, indices in by_token.items())
        self._roots, self._inside = _containment_forest(self._selects)
        self._automaton = None
        self._listed = tuple(t for t in by_token if t)
        # An empty token is in every text; the automaton is given only the others.
        self._everywhere = frozenset(always).union(*(by_token[t] for t in by_token if not t))
        if accelerate and _aho is not None and self._listed:
            self._automaton = _aho.AhoCorasick(list(self._listed))

    @property
    def accelerated(self) -> bool:
        return self._automaton is not None

    def candidates(self, text: str) -> Tuple[CompiledRule, ...]:
        """The rules whose tokens occur in `text` (in catalog order)."""
        if self._automaton is not None:
            try:
                # Overlapping matches: every occurrence of every token, so none hides another.
                found = {index for index, _, _ in self._automaton.find_matches_as_indexes(text, overlapping=True)}
            except UnicodeEncodeError:
                pass  # a lone surrogate (JSON of a notebook may hold one) is no UTF-8: search below
            else:
                hit = set(self._everywhere)
                for index in found:
                    hit.update(self.by_token[self._listed[index]])
                return tuple(self.rules[i] for i in sorted(hit))
        hit = set(self.always)
        # A token that holds another token or gate (`is_cuda` holds `cuda`) cannot occur where the
        # shorter one does not, so it is searched for only after the shorter one was found. Most
        # files contain none of the short ones, and then their longer relatives cost nothing.
        pending = list(self._roots)
        selects, inside = self._selects, self._inside
        while pending:
            token = pending.pop()
            if token in text:
                hit.update(selects[token])
                pending.extend(inside[token])
        return tuple(self.rules[i] for i in sorted(hit))


def _gates(tokens: Iterable[str]) -> List[str]:
    """For each token that is more than one word (`from flash_attn`), its longest word (`flash_attn`)."""
    out = []
    for token in tokens:
        words = _WORD.findall(token)
        if words:
            longest = max(words, key=len)
            if longest != token:
                out.append(longest)
    return out


def _containment_forest(tokens: Iterable[str]) -> Tuple[Tuple[str, ...], Dict[str, Tuple[str, ...]]]:
    """Roots (tokens that hold no other token) and, per token, the tokens whose parent it is.

    A token's parent is the longest other token it holds, so a token is searched for only when
    every token on its path to a root has been found.
    """
    ordered = sorted(set(tokens), key=lambda t: (len(t), t))
    roots: List[str] = []
    inside: Dict[str, List[str]] = {t: [] for t in ordered}
    for i, token in enumerate(ordered):
        parent = next((p for p in reversed(ordered[:i]) if len(p) < len(token) and p in token), None)
        if parent is None:
            roots.append(token)
        else:
            inside[parent].append(token)
    return tuple(roots), {t: tuple(kids) for t, kids in inside.items()}
