"""How a module takes part in a run, from its text alone: whether it does work at module level (a
script run by path), and which modules it loads by computed name. `portcheck.reach` closes over these
facts; the project cache keeps them per file.

The facts are strings, so a frozenset of them fits the cache: `runs`, `main` (an `if __name__ ==
"__main__":` guard), `loads-any` (a computed import
without a literal package, or a loader that may load anything: Hydra's `instantiate`), `loads-config` (a
Python config file run by path, detectron2's `LazyConfig.load`: any module may be one, and what it imports
runs; the names it uses it spells), and
`loads:<prefix>` for each literal prefix (`import_module(f"basicsr.archs.{name}")` gives
`loads:basicsr.archs.`), `imports:<name>` for each dotted name an import statement spells (`from utils
import torch_utils` gives `imports:utils` and `imports:utils.torch_utils`; a relative one keeps its dots:
`imports:.ops`), `sys-path` where the module changes `sys.path` in a way the text does not tell (its absolute
imports may then name a module below any folder), `sys-path-dir:<folder>` for each folder it adds, spelt from its
own file's (`sys-path-dir:..` for `sys.path.append(str(Path(__file__).parents[1]))`), and `tests` where it
holds tests (a `test*` function or method, a `TestCase`, an import of a test framework): a `test_*.py` without
any is a script named for what it evaluates.
"""

from __future__ import annotations

import builtins
import keyword
import re
from typing import FrozenSet, List, Optional, Set, Tuple

from portcheck.pyscan.syspath import added_folders

RUNS = "runs"
MAIN = "main"
LOADS_ANY = "loads-any"
LOADS_CONFIG = "loads-config"
LOADS_NAMED = "loads-named"
LOADS = "loads:"
NAMED = "named:"
IMPORTS = "imports:"
SYS_PATH = "sys-path"
SYS_PATH_DIR = "sys-path-dir:"
IDLE = "idle"
TESTS = "tests"

# Calls that load modules by a computed name: with a literal prefix, below it only.
PREFIXED_LOADERS = frozenset({"import_module", "__import__"})
# Calls that load a module by a dotted name spelt elsewhere (a config file's `_target_`, a registry's strings).
NAMED_LOADERS = frozenset(
    {
        "instantiate",  # hydra.utils.instantiate(cfg): `_target_: pkg.mod.Class` in a YAML file
        "load_hyperpyyaml",  # HyperPyYAML (SpeechBrain, CosyVoice): `!new:pkg.mod.Class` in a YAML file
        "locate",  # pydoc.locate, hydra's _locate
        "get_class",
        "get_method",
        "import_string",
    }
)
# Calls that may load any module (a dotted name from a config file, a path).
ANY_LOADERS = NAMED_LOADERS | frozenset(
    {
        "spec_from_file_location",
        "run_path",
        "run_module",
        "load_source",
        "load_entry_point",
        "entry_points",
        "SourceFileLoader",
        "DEFINE_config_file",  # ml_collections config_flags: `--config=configs/ve/x.py` runs its get_config()
    }
)
LOADER_WORDS = PREFIXED_LOADERS | ANY_LOADERS
_PREFIXED_CALL = re.compile(r"(?<!def )\b(?:import_module|__import__)\s*\(\s*(?:[rfbRFB]{1,2})?(['\"]?)([\w.]*)")
# A string literal that spells a dotted name (`"src.models.sequence.ssm.S4"`, `"pkg.mod:Class"`): what a loader
# given names may load.
_DOTTED_LITERAL = re.compile(r"""["']([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?::[A-Za-z_]\w*)?["']""")
# A Hydra override naming what to build, inside a longer string (SAM 2's `build_sam2_video_predictor`:
# `"++model._target_=sam2.sam2_video_predictor.SAM2VideoPredictor"`).
_TARGET_OVERRIDE = re.compile(r"""_target_['"]?\s*[=:]\s*['"]?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)""")
# Calls that list a folder's files, and `pkgutil`'s that list its Python modules.
_FILE_LISTINGS = "listdir|iterdir|scandir|glob|iglob|rglob"
_MODULE_LISTINGS = "walk_packages|iter_modules"
# Lists a folder: modules loaded by computed names may be every file there, spelt nowhere.
_LISTS_FILES = re.compile(rf"\b(?:{_FILE_LISTINGS}|{_MODULE_LISTINGS})\s*\(")
# A listing of Python modules: `pkgutil`'s, or a listing of files in a module that spells a `'.py'` string.
_LISTS_MODULES = re.compile(
    rf"\b(?:{_MODULE_LISTINGS})\s*\(|\b(?:{_FILE_LISTINGS})\s*\((?=[\s\S]*[\"'][^\"'\n]*\.py[\"'])"
)
# A Python identifier, as the project pass and `portcheck.reach` split texts into names.
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# A comment, where no quote comes before it on its line (`# from .test import single_gpu_test`, `x = f()  # g`):
# commented-out code names nothing the program uses.
_COMMENT = re.compile(r"^([^'\"#\n]*)#.*$", re.MULTILINE)


def without_comments(text: str) -> str:
    """`text` with its comments blanked (those no quote precedes on their line); lines keep their places."""
    return _COMMENT.sub(r"\1", text) if "#" in text else text
# An import statement, from its first line (with the names of a parenthesised or backslash-continued list:
# giraffe's `from im2scene.giraffe.models import (` then `decoder, generator, ...)` on the next line).
IMPORT_STATEMENT = re.compile(
    r"^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import[ \t]*(?:\([^)]*\).*|(?:.*\\\n)*.*)|import[ \t]+(?:.*\\\n)*.*)$",
    re.MULTILINE,
)
# An import statement commented out on a line of its own (not a parenthesised list, not prose: `# import this first`
# has no second word after a module name that is not `as`/`,`)
_COMMENTED_IMPORT = re.compile(
    r"^[ \t]*#[ \t]*(from[ \t]+[.\w]+[ \t]+import[ \t]+\w+(?:[ \t]+as[ \t]+\w+)?"
    r"(?:[ \t]*,[ \t]*\w+(?:[ \t]+as[ \t]+\w+)?)*"
    r"|import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?)[ \t]*$",
    re.MULTILINE,
)
def _bound_names(statement: str) -> Set[str]:
    """The names an import statement binds: `config` of `from configs import unet_config as config`, `a` of `import
    a.b`."""
    found = _FROM.match(statement) or _IMPORT.match(statement)
    if found is None:
        return set()
    names = found.group(found.lastindex or 1).strip().strip("()")
    out = set()
    for part in names.split(","):
        words = part.split()
        if len(words) == 3 and words[1] == "as":
            out.add(words[2])
        elif words:
            out.add(words[0].split(".")[0])
    return out


# Import lines of PyTorch's own packages: `from torch.nn import functional as F` names torch's
# `functional`, never a module of the project's (XMem's vendored `syncbn/modules/functional/`).
TORCH_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+(?:torch|torchvision|torchaudio)\b(?![ \t]*,)")
_FROM = re.compile(r"\s*from\s+(\.*[\w.]*)\s+import\b(.*)", re.DOTALL)
_IMPORT = re.compile(r"\s*import\b(.*)", re.DOTALL)
_DOTTED = re.compile(r"\.*\w+(?:\.\w+)*$")
_SYS_PATH = re.compile(r"\bsys\.path\s*(?:\.\s*(?:insert|append|extend)\b|\+=|=)|\baddsitedir\b")


def imported_names(statement: str) -> Set[str]:
    """The dotted names an import statement (as `IMPORT_STATEMENT` finds it) may load: `from a.b import
    c, d as e` -> {a.b, a.b.c, a.b.d}, `import a.b as c, d` -> {a.b, d}, `from . import x` -> {., .x};
    a star adds nothing. Each `;`-separated statement on the line counts; PyTorch's own packages none."""
    out: Set[str] = set()
    for part in re.sub(r"#[^\n]*", "", statement).replace("\\\n", " ").split(";"):
        if TORCH_IMPORT.match(part):
            continue
        found = _FROM.match(part)
        if found:
            base, names = found.group(1), found.group(2)
            out.add(base)
            for name in re.sub(r"[()]", " ", names).split(","):
                words = name.split()
                if words and words[0].isidentifier():
                    out.add(base + words[0] if base.endswith(".") else f"{base}.{words[0]}")
            continue
        found = _IMPORT.match(part)
        if found:
            for name in found.group(1).split(","):
                words = name.split()
                if words and _DOTTED.match(words[0]):
                    out.add(words[0])
    return out


def loading_facts(text: str) -> FrozenSet[str]:
    """Text searches only (no parse), so the cache can keep them for every file it reads."""
    out: Set[str] = set()
    facts_text = text
    hinted = _LOADER_HINT.search(text)
    if hinted:
        text = _unaliased(text)  # what follows reads loader calls by their own names (an alias adds none)
    # called, not only spelt: "# locate the cell of each box" loads nothing
    words = set(_LOADER_CALL.findall(text)) if hinted else set()
    # a loader of what configs name loads what some text spells (`loads-named`), unless the module lists
    # files to load (plugins found by `os.listdir`, spelt nowhere): then any module, as a loader given paths
    if words & (ANY_LOADERS - NAMED_LOADERS):
        # (a path or name the function's caller gives: wetectron's `import_file(module_name, file_path)` of
        # `spec_from_file_location`, mmcv's `run_path(args[0])` of a command its test helper is given)
        calls = [(found.start(), _argument(text, found.end())) for found in _PATH_LOADER_CALL.finditer(text)]
        given = all(_given_by_caller(text, at, argument) for at, argument in calls)
        listed = any(_listing_feeds(text, at, argument) for at, argument in calls)
        out.add(LOADS_NAMED if given and not listed else LOADS_ANY)
    elif words & NAMED_LOADERS:
        # (Python modules listed: a listing of data files, SparseTrack's `glob` of result files beside its
        # `instantiate(cfg.model)`, loads nothing a config does not name)
        out.add(LOADS_ANY if _LISTS_MODULES.search(text) else LOADS_NAMED)
    if "LazyConfig" in text and _LAZY_CONFIG.search(text):  # (the word first: the pattern opens with `\b`)
        # detectron2's `LazyConfig.load(args.config_file)` (detrex, Stable-DINO, MP-Former): runs the Python config
        # file a command line names, and what that file imports; the names it uses it spells, as any module
        out.add(LOADS_CONFIG)
    if words & PREFIXED_LOADERS:
        for found in _PREFIXED_CALL.finditer(text):
            quote, prefix = found.group(1), found.group(2)
            # (a string that is no package's name is no prefix: `".".join(parts[:i])`, TF StyleGAN's `tfutil`)
            argument = "" if quote and prefix.strip(".") else _argument(text, text.index("(", found.start()) + 1)
            if quote and prefix.strip("."):
                out.add(LOADS + prefix)
            elif not quote and _LOADS_NOTHING_NEW.match(argument):
                continue
            elif (
                _given_by_caller(text, found.start(), argument)
                and not _listing_feeds(text, found.start(), argument)
            ):
                # `get_obj_from_str(string)` of LDM's `instantiate_from_config` (`module, cls = string.rsplit(".",
                # 1)`), mmcv's `import_modules_from_strings(imports)`: what the caller names, a config's
                # `target:` or a string, as a loader given names
                out.add(LOADS_NAMED)
                # and a name built below a package from what the caller gives (snap-research/CAT's
                # `distiller_filename = "distillers." + distiller_name + "_distiller"`): a module there
                prefix = _bound_prefix(text, found.start(), argument)
                if prefix:
                    out.add(LOADS + prefix)
            else:
                out.add(LOADS_ANY)  # `import_module(name)`: any module (a name typed on a command line too)
    if LOADS_ANY not in out and _LISTS_MODULES.search(text) and _hands_listed_files_to_a_loader(text):
        out.add(LOADS_ANY)
    text = facts_text
    if "." in text:
        out.update(NAMED + found for found in _DOTTED_LITERAL.findall(text))
        out.update(NAMED + found for found in _TARGET_OVERRIDE.findall(text))
    statements = IMPORT_STATEMENT.findall(text)
    out.update(IMPORTS + name for statement in statements for name in imported_names(statement))
    if "#" in text:
        # `# from configs import panet_config as config` under `from configs import unet_config as config` (cvlab-epfl's
        # PA-net picks its model and config so): an alternative one edit away, imported as the line above is. Not an
        # import that binds a name no import of the file binds (NeuSample's `apis/__init__.py` comments out
        # `# from .test import single_gpu_test`: switched off)
        commented = _COMMENTED_IMPORT.findall(text)
        if commented:
            bound = {name for statement in statements for name in _bound_names(statement)}
            out.update(
                IMPORTS + name
                for statement in commented
                if _bound_names(statement) & bound
                for name in imported_names(statement)
            )
    if ("sys.path" in text or "addsitedir" in text) and _SYS_PATH.search(text):
        # (the one parse here, of the few modules that edit `sys.path`: a folder spelt from `__file__` is a folder
        # of the project, any other spelling may be any folder)
        folders = added_folders(text)
        if folders is None:
            out.add(SYS_PATH)
        else:
            out.update(SYS_PATH_DIR + folder for folder in folders)
    guards = list(_MAIN_GUARD.finditer(text))
    # (an empty `if __name__ == '__main__': pass`, Get3DHuman's `diff_render/renderer.py`, runs nothing)
    if any(not _empty_block(text, found.end()) for found in guards):
        out.add(MAIN)
    if _HOLDS_TESTS.search(text):
        out.add(TESTS)
    if any(not _SETTING.match(found.group()) for found in _MODULE_LEVEL_WORK.finditer(text)):
        out.add(RUNS)
    if MAIN not in out and RUNS not in out:
        guard_lines = {text.count("\n", 0, found.start()) for found in guards}
        if _only_definitions(text, guard_lines):
            out.add(IDLE)
    return frozenset(out)


def _empty_block(text: str, at: int) -> bool:
    """Whether the block of the statement whose header ends at `at` holds only `pass`, `...` or a string."""
    rest = text[at:].split("\n")
    header = rest[0].split(":", 1)[1].strip() if ":" in rest[0] else ""
    body = [header] if header else []
    for line in rest[1:]:
        if line.strip() and not line[:1].isspace():
            break
        body.append(line.strip())
    statements = [s for s in body if s and not s.startswith("#")]
    return bool(statements) and all(s in ("pass", "...") or s[:1] in _QUOTES for s in statements)


_QUOTES = ("'", '"')
# What a statement at column 0 may open with in a module that only defines: an import, a docstring, the
# `try`/`except` around an optional import, a bracket closing a statement above.
_DEFINING_HEADS = ("import ", "from ", "try:", "except", "else:", "finally:", ")", "]", "}", *_QUOTES)


def _only_definitions(text: str, guard_lines: Set[int]) -> bool:
    """Whether the module, run, only defines (at least one function or class) and imports: every statement at
    column 0 a definition, a decorator, an import, a docstring, a `try`/`except` around imports, an assignment
    that calls nothing, or an empty `__main__` guard (`guard_lines`, 0-based). A module that only defines does
    nothing when run by path: it takes part when something imports it."""
    defines = False
    in_string = False
    for number, line in enumerate(without_comments(text).split("\n")):
        quotes = line.count('"""') + line.count("'''")
        if in_string or not line or line[:1].isspace() or number in guard_lines:
            in_string = in_string != (quotes % 2 == 1)
            continue
        in_string = quotes % 2 == 1
        if line.startswith(("def ", "class ", "async def ")):
            defines = True
            continue
        if line.startswith(("@", *_DEFINING_HEADS)):
            continue
        if (_ASSIGNMENT.match(line) and "(" not in line) or _SETTING.match(line):
            continue
        return False
    return defines


# A computed name that loads no module of the project the run has not imported already: a module's own
# name or its class's (`import_module(__name__)`, `import_module(type(self).__module__)`), its top package
# (`__name__.split(".")[0]`), or a file copied into a temporary folder put on `sys.path`: the config loader
# of mmcv and its copies (`import_module(temp_module_name)`, DAB-DETR's `util/slconfig.py`).
_LOADS_NOTHING_NEW = re.compile(
    r"[\w.()]*__(?:name|module|package)__(?:\.r?split\([^()]*\)\[[-\d:]*\])?$|te?mp_\w*$"
)


def _given_by_caller(text: str, at: int, argument: str) -> bool:
    """Whether `argument` (a name, at offset `at` of `text`) is a parameter of the function holding that offset, or
    a name the function binds, line by line before it, from one (`module, cls = string.rsplit(".", 1)`, `for imp in
    imports:`; StyleGAN's `dnnlib.util.get_module_from_obj_name`: `parts = obj_name.split(".")`, then `name_pairs`
    from `parts`, then `for module_name, local_obj_name in name_pairs:`): a value its callers give. Read from the
    text: the nearest `def` above, indented less than the line."""
    found = _holder(text, at)
    names = _free_names(argument)
    if found is None or not names:
        return False
    return names <= _derived(text, found.end(), at, set(_PARAMETER.findall(_signature(text, found.end()))))


def _free_names(argument: str) -> Set[str]:
    """The names an argument's value comes from, strings, attributes and builtins aside: `args[0]`, `cfg.path` ->
    `args`, `cfg`; `".".join(parts[:i])` -> `parts`, `i`."""
    bare = re.sub(r"([\"'])(?:\\.|(?!\1).)*\1", "", argument)
    return {
        found.group()
        for found in IDENTIFIER.finditer(bare)
        if not bare[: found.start()].rstrip().endswith(".") and found.group() not in BUILTIN_NAMES
    }


BUILTIN_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist)  # names no module of the project defines


def _derived(text: str, start: int, at: int, seeds: Set[str], listed: bool = False) -> Set[str]:
    """`seeds` and the names the text binds from them, line by line from offset `start` (a function's `def`) up to
    offset `at`; with `listed`, also those a line binds from a folder listing (`for name in os.listdir(folder):`)."""
    out = set(seeds)
    end = text.rfind("\n", 0, at) + 1
    for bound in _ANY_BINDING.finditer(text, start, end):
        source = bound.group(2)
        if out & set(IDENTIFIER.findall(source)) or (listed and _LISTS_FILES.search(source)):
            out.update(IDENTIFIER.findall(bound.group(1)))
    return out


def _holder(text: str, at: int) -> Optional["re.Match[str]"]:
    """The `def` of the function holding offset `at` of `text`: the nearest above, indented less than its line."""
    start = text.rfind("\n", 0, at) + 1
    line = text[start:at]
    indent = len(line) - len(line.lstrip(" \t"))
    for found in reversed(list(_DEF.finditer(text, 0, start))):
        if len(found.group(1)) < indent:
            return found
    return None


def _hands_listed_files_to_a_loader(text: str) -> bool:
    """Whether the text hands a file it lists to a function of its project named for loading or importing: HyperCUT's
    `models/__init__.py` globs `backbones/*.py` and passes each to `load_module_from_file` (`spec_from_file_location`
    in `utils/common_utils.py`), which builds the backbone a command line names. Not `torch.load(path)` of a listed
    checkpoint: an attribute call is a library's."""
    for found in _OWN_LOADER_CALL.finditer(text):
        holder = _holder(text, found.start())
        listed = _derived(text, holder.end() if holder is not None else 0, found.start(), set(), listed=True)
        if _free_names(_argument(text, found.end())) & listed:
            return True
    return False


# A bare call of a function named for loading or importing (`load_module_from_file(path)`, `import_plugin(f)`), not
# its `def` nor an attribute call (`torch.load`, `json.load`).
_OWN_LOADER_CALL = re.compile(r"(?<![.\w])(?<!def )\w*(?:load|import)\w*[ \t]*\(", re.IGNORECASE)


def _listing_feeds(text: str, at: int, argument: str) -> bool:
    """Whether a folder listing of `text` may give the name the loader call at offset `at` loads (`argument`): one at
    module level, one in a function that calls the one holding the call, or one in that function the name is bound
    from. Not a listing elsewhere in the module, nor one beside the call that gives something else: StyleGAN's
    `dnnlib/util.py` walks a folder to copy a run's sources and globs its download cache while
    `get_module_from_obj_name` imports what its caller names; its `custom_ops.py` globs for MSVC and lists the
    sources it hashes, then imports the extension it built under the name its caller gives."""
    listings = [found.start() for found in _LISTS_FILES.finditer(text)]
    if not listings:
        return False
    holder = _holder(text, at)
    if holder is None:
        return True
    spans = _function_spans(text)
    name = _DEF_NAME.match(text, holder.start())
    callers = re.compile(r"\b%s\s*\(" % re.escape(name.group(1))) if name is not None else None
    for offset in listings:
        span = next((s for s in spans if s[0] <= offset < s[1]), None)
        if span is None:
            return True  # at module level
        if span[0] == holder.start():
            if _free_names(argument) & _derived(text, holder.end(), at, set(), listed=True):
                return True
        elif callers is not None and callers.search(text, span[0] + 1, span[1]):
            return True
    return False


def _function_spans(text: str) -> List[Tuple[int, int]]:
    """(start, end) offsets of each module-level or nested `def`, from its `def` line to the next line indented no more
    than it (blank lines, comments and closing brackets aside), the latest first: the first that holds an offset is
    the innermost."""
    spans: List[Tuple[int, int]] = []
    for found in _DEF.finditer(text):
        indent = len(found.group(1))
        # (from the line after the `def`'s: `^` matches at line starts only, not at the search's start)
        ends = (line.start() for line in _CODE_LINE.finditer(text, found.end()) if len(line.group(1)) <= indent)
        spans.append((found.start(), next(ends, len(text))))
    return sorted(spans, key=lambda s: -s[0])


# The indentation of a line that starts with code (not blank, a comment or a closing bracket).
_CODE_LINE = re.compile(r"^([ \t]*)(?=[^ \t\n#)\]}])", re.MULTILINE)


def _bound_prefix(text: str, at: int, argument: str) -> str:
    """The literal dotted prefix of the string `argument` (a name) was last bound to before offset `at`:
    `distiller_filename = "distillers." + distiller_name + "_distiller"` -> `distillers.`; "" for none."""
    if not argument.isidentifier():
        return ""
    bindings = re.findall(_PREFIX_BINDING.format(name=argument), text[:at], re.MULTILINE)
    return bindings[-1] if bindings else ""


_PREFIX_BINDING = r"^[ \t]*{name}[ \t]*=[ \t]*[rfRF]?[\"']((?:[A-Za-z_]\w*\.)+)"


_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(", re.MULTILINE)
_DEF_NAME = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
# Any line that binds names: group 1 what it binds, group 2 what from (`a, b = f(x)`, `for a, b in pairs:`).
_ANY_BINDING = re.compile(
    r"^[ \t]*(?:for[ \t]+)?(?!(?:if|elif|while|return|assert|not|yield|del|with|print)\b)([\w \t,()]*?)[ \t]*"
    r"(?:(?<![=!<>+\-*/%&|^])=(?!=)|\bin\b)(.*)$",
    re.MULTILINE,
)
# A parameter's name in a signature: after `(`, `,` or `*`, before `,`, `:`, `=` or `)`.
_PARAMETER = re.compile(r"(?:^|[(,*])\s*([A-Za-z_]\w*)\s*(?=[,:=)]|$)")


def _signature(text: str, start: int) -> str:
    """A `def`'s parameters, from offset `start` (just inside its parenthesis) to the matching `)`."""
    depth = 0
    for end in range(start, min(len(text), start + 2000)):
        char = text[end]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return text[start - 1 : end]
            depth -= 1
    return ""


def _argument(text: str, start: int) -> str:
    """The text of a call's first argument from offset `start` (just inside its parenthesis), spaces
    dropped; "" when it does not close on its line."""
    depth = 0
    for end in range(start, min(len(text), start + 200)):
        char = text[end]
        if char in "([{":
            depth += 1
        elif char in ")]}" or (char == "," and depth == 0):
            if depth == 0:
                return re.sub(r"\s+", "", text[start:end])
            depth -= 1
        elif char == "\n" and depth == 0:
            break
    return ""


# `from importlib import import_module as impm` (sail-sg/GP-Nerf's `impm(cfg.render.file)`): a loader by another name.
_LOADER_ALIAS = re.compile(
    r"\bimport[ \t]+(?:[\w., \t]*,[ \t]*)?(" + "|".join(sorted(LOADER_WORDS)) + r")[ \t]+as[ \t]+(\w+)"
)


def _unaliased(text: str) -> str:
    """`text` with each call of a loader imported under another name spelt with the loader's own name."""
    for loader, alias in set(_LOADER_ALIAS.findall(text)):
        if alias != loader:
            text = re.sub(rf"(?<![\w.]){re.escape(alias)}(?=\s*\()", loader, text)
    return text


_LAZY_CONFIG = re.compile(r"\bLazyConfig\.load(?:_rel)?\s*\(")
_PATH_LOADER_CALL = re.compile(r"\b(?:" + "|".join(sorted(ANY_LOADERS - NAMED_LOADERS)) + r")\s*\(")
_LOADER_HINT = re.compile("|".join(sorted(LOADER_WORDS)))
_LOADER_CALL = re.compile(r"\b(" + "|".join(sorted(LOADER_WORDS)) + r")\s*\(")
_MAIN_GUARD = re.compile(
    r"^if\s+(?:__name__\s*==\s*['\"]__main__['\"]|['\"]__main__['\"]\s*==\s*__name__)"
    # sacred's `@ex.automain` runs the function when the module is the script (TencentARC/GVT's `run.py`)
    r"|^@\w+\.automain\b",
    re.MULTILINE,
)
# Test frameworks, by their top-level module (and torch's own testing helpers, `torch.testing`).
TEST_FRAMEWORKS = frozenset({"unittest", "pytest", "nose", "hypothesis"})
# A test a runner collects (`def test_forward(`, also a method), a test case class, or a test framework imported.
_HOLDS_TESTS = re.compile(
    r"^[ \t]*(?:async[ \t]+)?def[ \t]+test\w*[ \t]*\(|^[ \t]*class[ \t]+\w+\([^)]*TestCase\b"
    r"|^[ \t]*(?:import|from)[ \t]+(?:" + "|".join(sorted(TEST_FRAMEWORKS)) + r"|torch\.testing)\b",
    re.MULTILINE,
)
# A statement at column 0 that does work when the module runs: a loop, a `with`, or a call that is not
# assigned (`main()`, `app.run()`, `sys.path.append(...)`). A line of a string at column 0 may look like
# one: the answer then leans to "runs", which only keeps code reached.
# (`async for`/`async with` at module level; `async def` defines, as `def` does)
_MODULE_LEVEL_WORK = re.compile(r"^(?:(?:for|while|with|async(?![ \t]+def\b))\b|[A-Za-z_][\w.]*\s*\()", re.MULTILINE)
# A call that only configures a library for whoever imports the module: YOLOv4's `utils/utils.py` opens
# with `torch.set_printoptions(...)`, `matplotlib.rc(...)` and `cv2.setNumThreads(0)` and runs nothing.
# (and an edit of `sys.path`, which only prepares the module's imports)
_SETTING = re.compile(
    r"[A-Za-z_][\w.]*\.(?:set_?[A-Za-z]\w*|rc|use|filterwarnings|simplefilter|basicConfig|disable_warnings)\s*\("
    r"|sys\.path\.(?:append|insert|extend)\s*\(|(?:site\.)?addsitedir\s*\("
)
# A statement at column 0 that binds names (`X = 1`, `A, B = 1, 2`, `cfg: dict = {}`, `X += [1]`).
_ASSIGNMENT = re.compile(r"^[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?::[^=]*)?[-+*/|&]?=(?!=)")

