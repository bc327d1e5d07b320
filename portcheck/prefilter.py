"""A textual pre-filter: which rules could possibly match a file, judged from its raw text.

Every matcher derives the strings any match must spell out (a qualified name's segments, a device
string, a method name, the module a rule `requires`), so a file that lacks them is never parsed
for that rule. Two steps:

1. the gate: a rule passes when one of its matchers' `tokens()` occurs (the cheap search below);
2. the requirement: a rule that passed the gate stays only when one of its matchers'
   `token_clauses()` is met (`torch.linalg.qr` needs `linalg` *and* `qr`; a method rule that
   requires torch needs `torch` too). Everyday words (`any`, `where`, `model`) then select only
   files that also hold the rest of what a match spells.
"""

from __future__ import annotations

import bisect
import re
from types import ModuleType
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from portcheck.catalog import CompiledRule
from portcheck.pyscan.matchers import Attr, Member, Word

_aho: Optional[ModuleType]
try:  # optional: every token in one pass over the text (Aho-Corasick, compiled); see bench/PROFILE.md
    import ahocorasick_rs

    _aho = ahocorasick_rs
except ImportError:  # the containment search below gives the same answer
    _aho = None

_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
# Requirement strings that must stand as a whole identifier (matchers' `Word`), or as one after a
# dot or in an import's name list (`Member`), are kept under these prefixes, which no source text
# holds, so `det` the substring and `det` the word stay apart.
_WHOLE = "\x00w:"
_MEMBER = "\x00m:"
_ATTR = "\x00a:"
_PREFIXES = (_WHOLE, _MEMBER, _ATTR)

Clauses = Tuple[Tuple[Tuple[str, ...], ...], ...]


def _key(token: str) -> str:
    if isinstance(token, Word):
        return _WHOLE + token
    if isinstance(token, Member):
        return _MEMBER + token
    if isinstance(token, Attr):
        return _ATTR + token
    return str(token)


def matcher_clauses(matcher) -> Clauses:
    """A matcher's requirement; a matcher without `token_clauses` needs one of its `tokens()`."""
    derive = getattr(matcher, "token_clauses", None)
    if derive is not None:
        return tuple(tuple(tuple(_key(t) for t in alt) for alt in clause) for clause in derive())
    tokens = [t for t in matcher.tokens()]
    if not tokens or any(not t for t in tokens):
        return ()
    return (tuple((t,) for t in tokens),)


def holds(clauses: Clauses, present: Callable[[str], bool]) -> bool:
    """Every clause has an alternative whose strings are all `present`."""
    return all(any(all(present(t) for t in alt) for alt in clause) for clause in clauses)


def _is_ident(char: str) -> bool:
    return char.isalnum() or char == "_"


# An import's name list: `import`, then names, `as` and commas; in parentheses across lines and
# comments too, else on one line (and its backslash continuations).
_IMPORT_LIST = re.compile(r"import[ \t]*(?:\((?:[\s\w,]|#[^\n]*)*\)?|(?:[ \t\w,]|\\\r?\n)*)")


class _Source:
    """A text being searched, with the spans of its import name lists (found on first need)."""

    __slots__ = ("text", "_lists")

    def __init__(self, text: str) -> None:
        self.text = text
        self._lists: Optional[Tuple[List[int], List[int]]] = None

    def in_import_list(self, start: int) -> bool:
        if self._lists is None:
            spans = [(m.start(), m.end()) for m in _IMPORT_LIST.finditer(self.text)]
            self._lists = ([a for a, _ in spans], [b for _, b in spans])
        starts, ends = self._lists
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and start < ends[i]

    def occurs(self, kind: str, start: int, end: int) -> bool:
        """The string at `start:end` qualifies as `kind`: a whole identifier; for an attribute also
        right after a dot (PEP 8); for a member after a dot or in an import's name list."""
        text = self.text
        if (start > 0 and _is_ident(text[start - 1])) or (end < len(text) and _is_ident(text[end])):
            return False
        if kind == _WHOLE:
            return True
        if start > 0 and text[start - 1] == ".":
            return True
        return kind == _MEMBER and self.in_import_list(start)

    def find(self, kind: str, word: str) -> bool:
        """Some occurrence of `word` qualifies as `kind`."""
        text = self.text
        at = text.find(word)
        size = len(word)
        while at >= 0:
            if self.occurs(kind, at, at + size):
                return True
            at = text.find(word, at + 1)
        return False


class Prefilter:
    def __init__(self, rules: Sequence[CompiledRule], accelerate: bool = True) -> None:
        self.rules = tuple(r for r in rules if r.matchers)
        by_token: Dict[str, List[int]] = {}
        always = []
        # Per rule: the matchers' requirements, or None when one matcher has none (it always passes).
        self._needs: List[Optional[Tuple[Clauses, ...]]] = []
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
            needs = tuple(matcher_clauses(m) for m in entry.matchers)
            self._needs.append(None if open_ended or any(not n for n in needs) else needs)
        self.always: Tuple[int, ...] = tuple(always)
        self.by_token = by_token
        self.tokens: Tuple[str, ...] = tuple(sorted(by_token, key=len, reverse=True))
        # Strings the requirements name beyond the gate tokens: looked up only for rules that passed the gate.
        self.extra_tokens: FrozenSet[str] = frozenset(
            t for needs in self._needs if needs for n in needs for clause in n for alt in clause for t in alt
        ) - set(by_token)
        # The search also knows each token's longest word (`flash_attn` in `from flash_attn`) as a
        # gate that selects no rule: a file without the word cannot hold any token built on it.
        self._selects: Dict[str, Tuple[int, ...]] = {word: () for word in _gates(by_token)}
        self._selects.update((token, tuple(indices)) for token, indices in by_token.items())
        self._roots, self._inside = _containment_forest(self._selects)
        self._automaton = None
        # The automaton finds gate and requirement strings in the same pass; a whole word is searched
        # as its plain string, and each occurrence's neighbours say whether it stands alone.
        self._kinds: Dict[str, Tuple[str, ...]] = {}
        for token in sorted(self.extra_tokens):
            for kind in _PREFIXES:
                if token.startswith(kind):
                    self._kinds[token[len(kind):]] = self._kinds.get(token[len(kind):], ()) + (kind,)
        plain = set(t for t in by_token if t) | set(t for t in self.extra_tokens if not t.startswith(_PREFIXES))
        self._listed = tuple(sorted(plain | set(self._kinds)))
        # An empty token is in every text; the automaton is given only the others.
        self._everywhere = frozenset(always).union(*(by_token[t] for t in by_token if not t))
        if accelerate and _aho is not None and self._listed:
            self._automaton = _aho.AhoCorasick(list(self._listed))

    @property
    def accelerated(self) -> bool:
        return self._automaton is not None

    def candidates(self, text: str) -> Tuple[CompiledRule, ...]:
        """The rules whose requirements the text meets (in catalog order)."""
        return tuple(self.rules[i] for i in self.candidate_indices(text))

    def candidate_indices(self, text: str) -> List[int]:
        source = _Source(text)
        found = self._found(source)
        present: Callable[[str], bool]
        if found is None:
            memo: Dict[str, bool] = {}

            def search(token: str) -> bool:
                known = memo.get(token)
                if known is None:
                    if token.startswith(_PREFIXES):
                        kind = token[: len(_WHOLE)]
                        known = memo[token] = source.find(kind, token[len(kind) :])
                    else:
                        known = memo[token] = token in text
                return known

            present = search
            gated = self._gate_search(text, memo)
        else:
            present = found.__contains__
            gated = set(self._everywhere)
            for token in found:
                gated.update(self.by_token.get(token, ()))
        needs = self._needs
        return [i for i in sorted(gated) if (need := needs[i]) is None or any(holds(n, present) for n in need)]

    def _found(self, source: _Source) -> Optional[Set[str]]:
        """Every listed string in `text`, by the automaton; None when the pure-Python search must run."""
        if self._automaton is None:
            return None
        try:
            # Overlapping matches: every occurrence of every token, so none hides another.
            matches = self._automaton.find_matches_as_indexes(source.text, overlapping=True)
        except UnicodeEncodeError:
            return None  # a lone surrogate (JSON of a notebook may hold one) is no UTF-8: search below
        listed, kinds = self._listed, self._kinds
        found = set()
        for index, start, end in matches:
            token = listed[index]
            found.add(token)
            for kind in kinds.get(token, ()):
                if source.occurs(kind, start, end):
                    found.add(kind + token)
        return found

    def _gate_search(self, text: str, memo: Dict[str, bool]) -> Set[int]:
        hit = set(self.always)
        # A token that holds another token or gate (`is_cuda` holds `cuda`) cannot occur where the
        # shorter one does not, so it is searched for only after the shorter one was found. Most
        # files contain none of the short ones, and then their longer relatives cost nothing.
        pending = list(self._roots)
        selects, inside = self._selects, self._inside
        for token in selects:
            memo[token] = False
        while pending:
            token = pending.pop()
            if token in text:
                memo[token] = True
                hit.update(selects[token])
                pending.extend(inside[token])
        return hit


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
