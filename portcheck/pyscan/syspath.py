"""The folders a module adds to `sys.path`, where it spells them relative to its own file.

`sys.path.append(os.path.dirname(os.path.abspath(__file__)))`, `sys.path.insert(0, os.path.join(ROOT, "..",
"third_party"))` with `ROOT = Path(__file__).resolve().parent`, `site.addsitedir(str(FILE.parents[1]))`: each is
a folder relative to the module's own (`.`, `../third_party`, `..`), and the module's absolute imports may then
load a module below it. An edit spelt any other way (a command-line argument, the working folder, a literal
path, which is relative to wherever the run starts) names no folder the scan can know: the answer is then None,
and the caller takes any folder (`portcheck.reach`).
"""

from __future__ import annotations

import ast
import posixpath
from typing import Dict, List, Optional, Set, cast

_FILE = "<file>"  # the module's own file: its folder is `dirname` of it
# Calls that hand their path argument on unchanged, as far as the folder goes.
_SAME = frozenset({"abspath", "realpath", "normpath", "str", "fspath", "Path", "PurePath", "expanduser"})
_SAME_METHODS = frozenset({"resolve", "absolute", "expanduser"})


def added_folders(text: str) -> Optional[List[str]]:
    """The folders, relative to the module's own (posix, `.` for its own), that the module adds to `sys.path`;
    None when an edit names a folder some other way, or the text does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    # names bound to a folder (`ROOT = Path(__file__).resolve().parents[1]`), in the order of the text; one bound
    # twice to different folders, or bound some other way too (a loop, a tuple), names neither for sure
    names: Dict[str, Optional[str]] = {}
    conflicted = _bound_otherwise(tree)
    assignments = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    ]
    for node in sorted(assignments, key=lambda n: (n.lineno, n.col_offset)):
        name = cast(ast.Name, node.targets[0]).id
        value = _path(node.value, names)
        if name in names and names[name] != value:
            conflicted.add(name)
        names[name] = value
    for name in conflicted:
        names[name] = None
    out: List[str] = []
    for found in ast.walk(tree):
        edit = _edit(found)
        if edit is None:
            continue
        for argument in edit:
            folder = _path(argument, names)
            if folder is None or folder == _FILE:
                return None
            out.append(folder)
    return out


def _bound_otherwise(tree: ast.Module) -> Set[str]:
    """The names bound other than by a plain assignment to one name: a loop, `with ... as`, an augmented or
    tuple assignment."""
    out: Set[str] = set()
    for node in ast.walk(tree):
        targets: List[ast.expr] = []
        if isinstance(node, (ast.For, ast.AsyncFor, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Assign) and (len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name)):
            targets = list(node.targets)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
        out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def _edit(node: ast.AST) -> Optional[List[ast.expr]]:
    """The path arguments of a `sys.path` edit (`append`, `insert`, `extend` or `+=` of a list, `site.addsitedir`);
    None for any other node. An edit of another shape gives a non-path expression, which names no folder."""
    if isinstance(node, ast.AugAssign) and _is_sys_path(node.target):
        return list(node.value.elts) if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
    if isinstance(node, ast.Assign) and any(_is_sys_path(t) for t in node.targets):
        return [node.value]  # `sys.path = [...]`: no folder this reads
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    method, owner = node.func.attr, node.func.value
    if method == "addsitedir":
        return list(node.args[:1]) or [node.func]
    if not _is_sys_path(owner):
        return None
    if method == "append":
        return list(node.args[:1]) or [node.func]
    if method == "insert":
        return list(node.args[1:2]) or [node.func]
    if method == "extend":
        value = node.args[0] if node.args else node.func
        return list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return None


def _is_sys_path(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) and (
        node.value.id == "sys"
    )


def _path(node: ast.AST, names: Dict[str, Optional[str]]) -> Optional[str]:
    """The folder `node` spells relative to the module's own (`_FILE` for the file itself), or None."""
    if isinstance(node, ast.Name):
        return _FILE if node.id == "__file__" else names.get(node.id)
    if isinstance(node, ast.Call):
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if isinstance(func, ast.Attribute) and last in _SAME_METHODS and not node.args:
            return _path(func.value, names)
        if node.keywords or not node.args:
            return None
        if last in _SAME and len(node.args) == 1:
            return _path(node.args[0], names)
        if last == "dirname" and len(node.args) == 1:
            return _up(_path(node.args[0], names))
        if last == "join":
            base = _path(node.args[0], names)
            parts = [_literal(a) for a in node.args[1:]]
            return _down(base, parts)
        return None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        return _up(_path(node.value, names))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and index.value >= 0:
            folder = _up(_path(node.value.value, names))
            for _ in range(index.value):
                folder = _up(folder)
            return folder
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # `Path(__file__).parent / "src"`
        return _down(_path(node.left, names), [_literal(node.right)])
    return None


def _literal(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _up(folder: Optional[str]) -> Optional[str]:
    if folder is None:
        return None
    return "." if folder == _FILE else posixpath.normpath(posixpath.join(folder, ".."))


def _down(folder: Optional[str], parts: List[Optional[str]]) -> Optional[str]:
    if folder is None or folder == _FILE or any(p is None or p.startswith("/") for p in parts):
        return None
    return posixpath.normpath(posixpath.join(folder, *[p for p in parts if p is not None]))
