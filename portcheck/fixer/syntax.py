"""Small libcst helpers the recipes share: walking a tree, reading names and strings, building code."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Set

import libcst as cst
from libcst.helpers import get_full_name_for_node


def parse_expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def walk(tree: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `tree`, parents before children, without recursion."""
    stack: List[cst.CSTNode] = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def parent_map(tree: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    """id(child) -> parent for every node under `tree`."""
    parents: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [tree]
    while stack:
        node = stack.pop()
        for child in node.children:
            parents[id(child)] = node
            stack.append(child)
    return parents


# The attributes of statements and their clauses that hold more statements, in source order.
_NESTED = ("body", "handlers", "orelse", "finalbody", "cases")


def small_statements(tree: cst.CSTNode) -> Iterator[cst.BaseSmallStatement]:
    """Every simple statement (`import x`, `a = b`, ...) under `tree` in source order, reading only the
    attributes that hold statements (libcst's `children` builds every child list, expressions too)."""
    stack: List[cst.CSTNode] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseSmallStatement):
            yield node
            continue
        if isinstance(node, cst.BaseExpression):
            continue
        nested: List[cst.CSTNode] = []
        for name in _NESTED:
            value = getattr(node, name, None)
            if isinstance(value, cst.CSTNode):
                nested.append(value)
            elif isinstance(value, (list, tuple)):
                nested.extend(v for v in value if isinstance(v, cst.CSTNode))
        stack.extend(reversed(nested))


def dotted(node: Optional[cst.CSTNode]) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        return get_full_name_for_node(node)
    return None


def string_value(node: cst.CSTNode) -> Optional[str]:
    """The value of a plain (non-bytes, non-f) string literal, else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # malformed escapes: leave such a literal alone
            return None
        return value if isinstance(value, str) else None
    return None


def quote_like(value: str, like: cst.SimpleString) -> cst.SimpleString:
    """A string literal holding `value`, written with the prefix and quotes of `like`."""
    prefix = "".join(ch for ch in like.prefix if ch.lower() == "u")
    quote = like.quote
    body = value.replace("\\", "\\\\")
    if len(quote) == 1:
        body = body.replace(quote, "\\" + quote).replace("\n", "\\n").replace("\r", "\\r")
    else:
        body = body.replace(quote, "\\" + quote)
    return cst.SimpleString(f"{prefix}{quote}{body}{quote}")


def fstring_like(expr_code: str, rest: str, like: cst.SimpleString) -> cst.BaseExpression:
    """`f"{expr}rest"` written with the quotes of `like`; `rest` is literal text (braces escaped)."""
    quote = like.quote
    body = rest.replace("\\", "\\\\").replace("{", "{{").replace("}", "}}")
    if len(quote) == 1:
        body = body.replace(quote, "\\" + quote).replace("\n", "\\n").replace("\r", "\\r")
    return parse_expr(f"f{quote}{{{expr_code}}}{body}{quote}")


def keyword_arg(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional_args(call: cst.Call) -> List[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def argument(call: cst.Call, name: Optional[str], position: Optional[int]) -> Optional[cst.Arg]:
    """The argument passed as keyword `name` or at `position`."""
    if name is not None:
        found = keyword_arg(call, name)
        if found is not None:
            return found
    if position is not None:
        positional = positional_args(call)
        if position < len(positional):
            return positional[position]
    return None


def without_arg(call: cst.Call, victim: cst.Arg) -> cst.Call:
    """`call` without the argument `victim`; the comma layout of the rest is kept."""
    args = list(call.args)
    index = next((i for i, a in enumerate(args) if a is victim), None)
    if index is None:
        return call
    removed = args.pop(index)
    if index == len(args) and args:
        # The removed one was last: its predecessor takes over its trailing comma (or lack of one).
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=args)


def kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def with_args(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Call:
    """`call` with `args`: a comma between every two, and the old last argument's trailing comma kept."""
    trailing = call.args[-1].comma if call.args else cst.MaybeSentinel.DEFAULT
    out: List[cst.Arg] = []
    for i, arg in enumerate(args):
        if i < len(args) - 1:
            if arg.comma is cst.MaybeSentinel.DEFAULT:
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        else:
            arg = arg.with_changes(comma=trailing)
        out.append(arg)
    return call.with_changes(args=out)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def dotted_names(expr: cst.CSTNode) -> Iterator[str]:
    """The outermost dotted names (`torch.accelerator.synchronize`) in an expression."""
    skip: Set[int] = set()
    for node in walk(expr):
        if id(node) in skip:
            continue
        if isinstance(node, (cst.Attribute, cst.Name)):
            name = dotted(node)
            if name:
                for sub in walk(node):
                    skip.add(id(sub))
                yield name
