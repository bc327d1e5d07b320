"""A textual pre-filter: which rules could possibly match a file, judged from its raw text.

Every matcher derives the tokens any match must spell out (a qualified name's segment, a device
string, a method name), so a file that holds none of a rule's tokens is never parsed for that rule.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Sequence, Tuple

from portcheck.catalog import CompiledRule


class Prefilter:
    def __init__(self, rules: Sequence[CompiledRule]) -> None:
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
        # Search longer tokens first only for readability of profiles; order does not change results.
        self.tokens: Tuple[str, ...] = tuple(sorted(by_token, key=len, reverse=True))

    def candidates(self, text: str) -> Tuple[CompiledRule, ...]:
        """The rules whose tokens occur in `text` (in catalog order)."""
        hit = set(self.always)
        for token in self.tokens:
            if token in text:
                hit.update(self.by_token[token])
        return tuple(self.rules[i] for i in sorted(hit))

    def token_set(self) -> FrozenSet[str]:
        return frozenset(self.by_token)
