"""Which modules of an application nothing runs: no script, test or notebook imports them, directly or
through other modules, and nothing loads modules by computed names.

An application repository (CodeFormer, ControlNet: scripts at the top, no packaging metadata) often
carries a vendored library whose CUDA ops it never imports (`basicsr/ops/fused_act`, `upfirdn2d`). A
porting engineer drops or ignores that code; its findings are `info` with a note. A library (packaging
metadata at its top) is left alone: each of its modules may be what its users import.

A reached module's import statements reach the modules their dotted names resolve to (`reach_imports`),
and a notebook's code cells those theirs. The answer leans to "reached": a name that resolves below no
folder of the importer reaches every module whose name ends so, every package above a reached module is
reached, a module that does work at module level is a script, a loader of what configs name (Hydra's
`instantiate(cfg)`, `get_class`, `locate`, in a module that lists no folder) reaches every module a dotted
name in a string or a config spells (hyena-dna's registry), and a computed import without a literal
package prefix (`importlib.import_module(name)`: a name typed on a command line too) or a loader given
paths (`spec_from_file_location`, `run_path`) makes every module reached. A folder without an `__init__.py`
that the project imports through (`from src.ops.toeplitz import ...`) holds modules as a package does. It
reads per-file facts only (`Sources.loading_facts`, and for unused definitions `Sources.words`,
`Sources.import_words`, `Sources.import_only`, `Sources.lone_definitions`, and `Sources.tied` of the modules
that spell a name it weighs), which the project cache keeps.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from pathlib import Path
from typing import AbstractSet, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from portcheck.project_index import Sources, module_name
from portcheck.pyscan.definitions import (
    SWITCH,
    decode,
    exported_names,
    held_imports,
    import_bindings,
    looks_up_built_names,
)
from portcheck.pyscan.loading import (
    IDENTIFIER,
    IDLE,
    IMPORTS,
    LOADS,
    LOADS_ANY,
    LOADS_CONFIG,
    LOADS_NAMED,
    MAIN,
    NAMED,
    RUNS,
    SYS_PATH,
    SYS_PATH_DIR,
    TESTS,
    TORCH_IMPORT,
    loading_facts,
    without_comments,
)
from portcheck.pyscan.spellings import OWN, decode_tied, may_lead_to
from portcheck.pyscan.testcode import is_collected_test, is_named_test_only, is_test_path

# A dotted name in a config, script or `.env` file (`_target_: src.models.sequence.SequenceModel`).
_DOTTED_WORD = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")

# A Python file named in a tool's configuration: `predict.py`, or `server:app` (a module, and what a tool
# takes from it).
_LAUNCHED = re.compile(r"\b([A-Za-z_]\w*)\.py\b|(?<![\w.:/-])([A-Za-z_]\w*):[A-Za-z_]\w*\b")

UNREACHED_NOTE = (
    "lowered to info: no script, test or notebook of this application imports this module, directly or"
    " through others; it is vendored or unused code a port can leave as it is"
)

# Packaging metadata: a folder holding one of these is a library's top, whose modules are public. A
# `setup.cfg` or `pyproject.toml` only when it holds a packaging table: many hold only linters' settings
# (`[flake8]`, `[yapf]`, `[tool.black]`) in an application (RelightableAvatar's `[pdbr]`).
_PYPROJECT_TABLES = re.compile(r"^\s*\[(?:project|build-system|tool\.poetry)\]", re.MULTILINE)
_SETUP_CFG_TABLES = re.compile(r"^\s*\[(?:metadata|options)(?:\.[\w.-]+)?\]", re.MULTILINE)
# Files whose name says they run as scripts or are loaded by a tool, not imported.
_ENTRY_NAMES = frozenset({"__main__", "setup", "conftest", "hubconf", "manage", "app", "main"})
# Entry files whose module-level names a tool looks up by name (pytest's fixtures, torch.hub's entry points,
# a web app's routes): none of theirs is unused. A `setup.py` calls its own functions, or none does.
_NAMES_LOOKED_UP = _ENTRY_NAMES - {"setup"}


def is_application(paths: Sequence[Path]) -> bool:
    """Every scanned path is a folder, and neither one nor a folder above it, up to the repository's top
    (the folder holding `.git`), carries packaging metadata. A scan of single files (a pre-commit hook)
    sees part of the project only: no module can be called unreached there."""
    if not paths:
        return False
    for path in paths:
        if not path.is_dir():
            return False
        folder: Optional[Path] = path.resolve()
        while folder is not None:
            if _packaging(folder):
                return False
            if (folder / ".git").exists() or folder.parent == folder:
                break
            folder = folder.parent
    return True


def is_whole_repository(paths: Sequence[Path]) -> bool:
    """Every scanned path is the top of a repository (it holds `.git`) or of a package (it holds packaging
    metadata): nothing of the project lies outside the scan, so every call of a name in it is seen."""
    return bool(paths) and all(p.is_dir() and ((p / ".git").exists() or _packaging(p)) for p in paths)


def holds_whole_project(paths: Sequence[Path]) -> bool:
    """Every scanned path is the top of a repository (it holds `.git`), or a folder below no repository whose
    parent holds no Python file (an unpacked tree): no code of the project lies outside the scan."""
    if not paths:
        return False
    for path in paths:
        if not path.is_dir():
            return False
        if (path / ".git").exists():
            continue
        top = path.resolve()
        if any((folder / ".git").exists() for folder in top.parents):
            return False
        try:
            if any(child.suffix == ".py" for child in top.parent.iterdir()):
                return False
        except OSError:
            return False
    return True


def _packaging(folder: Path) -> bool:
    if (folder / "setup.py").is_file():
        return True
    return any(
        _holds(folder / name, tables)
        for name, tables in (("setup.cfg", _SETUP_CFG_TABLES), ("pyproject.toml", _PYPROJECT_TABLES))
    )


def _holds(path: Path, tables: re.Pattern) -> bool:
    if not path.is_file():
        return False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # unreadable: assume a library
    return bool(tables.search(text))


def unreached(
    sources: Sources, notebooks: Iterable[str] = (), texts: Sequence[str] = (), whole: bool = False
) -> Dict[str, str]:
    """The display paths of the Python modules nothing runs, each with the note for its findings.
    `notebooks`: the texts of the project's notebooks, whose imports count like a script's; `texts`: those of
    its configs, scripts and `.env` files, whose dotted names a loader given names may load; `whole`: the scan
    holds the whole project (`holds_whole_project`), so a package nothing outside it names is no one's."""
    notebooks = list(notebooks)
    paths = list(sources.paths())
    names: Dict[str, str] = {}  # dotted module -> path
    packages: Set[str] = set()
    for path in paths:
        module, package = module_name(path)
        names[module] = path
        if package:
            packages.add(module)
    by_last: Dict[str, List[str]] = {}
    for module in names:
        by_last.setdefault(module.rsplit(".", 1)[-1], []).append(module)
    # Folders without an `__init__.py` that the project imports through (`from src.ops.toeplitz import ...`
    # makes `src` and `src.ops` namespace packages, hyena-dna's): their modules are imported, not run by path.
    folders = {m.rsplit(".", 1)[0] for m in names if "." in m}
    namespaces: Set[str] = set()
    for path in paths:
        for fact in sources.loading_facts(path):
            if fact.startswith(IMPORTS) and not fact.startswith(IMPORTS + "."):
                parts = fact[len(IMPORTS) :].split(".")
                namespaces.update(".".join(parts[:i]) for i in range(1, len(parts)))
    namespaces = (namespaces & folders) - set(names) - packages
    holders = packages | namespaces  # what holds modules that are imported

    # the modules a tool's configuration names by file or as `module:attribute` (GP-UNIT's `cog.yaml`, `predict:
    # "predict.py:Predictor"`; a `Procfile`'s `uvicorn server:app`): the tool imports them, as a script would
    launched = {found.group(1) or found.group(2) for text in texts for found in _LAUNCHED.finditer(text)}

    def loose(module: str) -> bool:
        parts = module.split(".")
        return not any(".".join(parts[:i]) in holders for i in range(1, len(parts) + 1))

    def script(module: str) -> bool:
        """Run, not imported: outside every package (and every namespace folder the project imports through),
        named like an entry point, a test, or guarded by `if __name__ == "__main__":`."""
        path = names[module]
        parts = module.split(".")
        if parts[-1] in _ENTRY_NAMES:
            return True
        # In no package (a namespace folder inside one is a package too); a package's `__init__` is imported. A
        # loose module that only defines (`idle`) does nothing run by path: something imports it, or nothing runs it
        # (Get3DHuman's `diff_render/profiler.py`, beside renderers whose imports the models comment out)
        if loose(module):
            facts = sources.loading_facts(path)
            return IDLE not in facts or TESTS in facts or is_test_path(path) or parts[-1] in launched
        # (a package's `test.py` with no `__main__` block is a module others import: NeuSample's copy of
        # mmdetection's `apis/test.py`, which nothing imports once its `__init__` comments the import out)
        if is_test_path(path) and not is_named_test_only(path):
            return True
        return MAIN in sources.loading_facts(path)

    reached: Set[str] = set()
    pending: List[str] = []

    def reach(module: str) -> None:
        while module and module not in reached:
            if module in names:
                reached.add(module)
                pending.append(module)
            module = module.rsplit(".", 1)[0] if "." in module else ""  # its packages run first

    def _known(module: str, below: int) -> bool:
        """Whether `module`, or a package above it but below its first `below` parts, is a module here."""
        parts = module.split(".")
        return any(".".join(parts[:j]) in names for j in range(len(parts), below, -1))

    def reach_words(words: Iterable[str]) -> None:
        for word in words:
            for module in by_last.get(word, ()):
                reach(module)

    children: Dict[str, List[str]] = {}  # package -> the modules right below it
    for module in names:
        if "." in module:
            children.setdefault(module.rsplit(".", 1)[0], []).append(module)
    by_suffix: Dict[str, List[str]] = {}  # `utils.general` -> [`utils.general`, `yolo.utils.general`]
    for module in names:
        parts = module.split(".")
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), []).append(module)

    def reach_imports(module: str, facts: FrozenSet[str]) -> None:
        """What the module's import statements load: a relative name below its package; an absolute one
        below a folder at or above the module's that is no package (the script's folder and the
        repository's top are on `sys.path`), else below any folder (a project scanned from elsewhere, a
        Python 2 implicit relative import); below any folder too where the module adds to `sys.path`."""
        parts = module.split(".")
        folder = parts if module in packages else parts[:-1]
        # the folders above that hold no package: where the script that runs may sit (Python 3 puts no
        # package's own folder on `sys.path`: YOLOv4's `utils/general.py` spells `utils.metrics`, never
        # `utils/utils.py`'s `utils.utils.metrics`)
        roots = [i for i in range(len(folder), -1, -1) if ".".join(folder[:i]) not in packages]
        # and the folders it adds to `sys.path`, spelt from its own file's (Get3DHuman's `renderer_deepsdf.py` adds
        # its own folder and imports `renderer` beside it, not `training/volumetric_rendering/renderer.py`)
        added = [_added(folder, f[len(SYS_PATH_DIR) :]) for f in facts if f.startswith(SYS_PATH_DIR)]
        for fact in facts:
            if not fact.startswith(IMPORTS):
                continue
            name = fact[len(IMPORTS) :]
            if name.startswith("."):
                absolute = _absolute(name, folder)
                if absolute is not None:
                    reach(absolute)
                continue
            # (`utils.nms.cpu_nms`, a compiled module, still runs the package `utils/nms/__init__.py`)
            exact = [m for i in roots if _known(m := ".".join(folder[:i] + [name]), i)]
            exact += [m for base in added if base is not None and _known(m := ".".join([*base, name]), len(base))]
            found = exact if exact and SYS_PATH not in facts else exact + by_suffix.get(name, [])
            if not found:
                # a name through a folder the scan does not name: the repository's own, imported from the folder
                # above as it was cloned (VDIGPKU/SAMPLING's `from Sampling.synthesis_task_kitti import ...`); the
                # loose module its trailing parts name, which nothing else may import
                steps = name.split(".")
                for i in range(1, len(steps)):
                    found = [m for m in by_suffix.get(".".join(steps[i:]), []) if loose(m)]
                    if found:
                        break
            for module_found in found:
                reach(module_found)

    def reach_below(prefix: str) -> None:
        for module in names:
            if _below(prefix, module):
                reach(module)

    def reach_named() -> None:
        """What a loader of what configs name may load (`instantiate(cfg)`, `get_class(path)`): the modules a dotted
        name spells, in a string of any module (a registry's `"src.models.sequence.ssm.S4"`) or in a config,
        script or `.env` file (`_target_: pkg.mod.Class`); each the longest module its name starts with."""
        spelt: Set[str] = set()
        for path in paths:
            spelt.update(f[len(NAMED) :] for f in sources.loading_facts(path) if f.startswith(NAMED))
        for text in texts:
            spelt.update(_DOTTED_WORD.findall(text))
        for dotted in spelt:
            parts = dotted.split(".")
            for i in range(len(parts), 0, -1):
                found = by_suffix.get(".".join(parts[:i]))
                if found:
                    for module in found:
                        reach(module)
                    break

    named_reached = False

    for module in names:
        if script(module):
            reach(module)
    if notebooks:
        from portcheck.notebook import NotebookError, code_cells  # json: only where there are notebooks
    for text in notebooks:
        # a notebook runs at the top, as a script there would: its import statements, resolved; the words of
        # one that does not load, or that edits `sys.path`, all of them (as any module's last name)
        try:
            source = "\n".join(cell.source for cell in code_cells(text))
        except NotebookError:
            source = ""
        facts = loading_facts(source)
        if source and not facts & {SYS_PATH, LOADS_ANY, LOADS_CONFIG, LOADS_NAMED}:
            reach_imports("", facts)
            for fact in facts:
                if fact.startswith(LOADS):
                    reach_below(fact[len(LOADS) :])
        else:
            reach_words(IDENTIFIER.findall(text))
    checked: Set[str] = set()
    while True:
        while pending:
            module = pending.pop()
            path = names[module]
            facts = sources.loading_facts(path)
            reach_imports(module, facts)
            if module in packages and module in children:
                # a package's `__init__` that spells a submodule's name loads it by that name, lazily (an
                # lmms-eval plugin's `models/__init__.py`: `AVAILABLE_MODELS = {"qwen2_5_vl_visionzip": ...}`)
                spelt = sources.words(path)
                for child in children[module]:
                    if child.rsplit(".", 1)[-1] in spelt:
                        reach(child)
            if LOADS_ANY in facts or LOADS_CONFIG in facts:
                return {}
            if LOADS_NAMED in facts and not named_reached:
                named_reached = True
                reach_named()
            for fact in facts:
                if fact.startswith(LOADS):
                    reach_below(fact[len(LOADS) :])
        # A module with code at module level (a call, a loop) is a script run by path, whatever its
        # folder: what it imports is reached too.
        # Only where it could tell (see below): a package nothing else reaches keeps every module.
        used = {_top(m, holders) for m in reached}  # packages and namespace folders something imports from
        late = [m for m in names if m not in reached and m not in checked and _top(m, holders) in used]
        checked.update(late)
        found = [m for m in late if RUNS in sources.loading_facts(names[m])]
        if not found:
            break
        for module in found:
            reach(module)
    # Only a package the application uses elsewhere: a package nothing imports at all is no sign of
    # dead code (a library folder beside the scripts, a project read in part).
    used = {_top(m, holders) for m in reached}
    if whole and reached:
        # Unless the scan holds the whole project and nothing outside the package names it: no module, notebook,
        # config or script spells its name, and none of its modules runs as a script (StyleNAT's copy of StyleGAN3's
        # `torch_utils/`, whose `filtered_lrelu` and `training_stats` its models never import).
        tops = {_top(m, packages) for m in names if m not in reached} & (packages - used)
        used |= {top for top in tops if not _named_outside(top, names, sources, [*notebooks, *texts])}
        # and a loose module that only defines, which nothing imports
        used |= {m for m in names if m not in reached and loose(m) and IDLE in sources.loading_facts(names[m])}
    return {names[m]: UNREACHED_NOTE for m in sorted(names) if m not in reached and _top(m, holders) in used}


def _named_outside(package: str, names: Mapping[str, str], sources: Sources, texts: Sequence[str]) -> bool:
    """Whether a module outside `package`, or one of `texts`, spells its last name, or a module inside it does work
    at module level (run by path; one named like an entry point or with a `__main__` block is a script, reached
    already, and its package is used)."""
    word = package.rsplit(".", 1)[-1]
    for module, path in names.items():
        inside = module == package or module.startswith(package + ".")
        if not inside and word in sources.words(path):
            return True
        if inside and RUNS in sources.loading_facts(path):
            return True
    spelt = re.compile(r"\b%s\b" % re.escape(word))
    return any(spelt.search(text) for text in texts)


BACKUP_NOTE = (
    "lowered to info: `{name}` is a backup or older copy of `{original}` beside it, and nothing imports it;"
    " the findings of `{original}` are the ones to act on"
)
# `modules_bak.py`, `train_backup.py`, `model_copy.py`, `utils copy.py`, VILA's `gelu_bwd_legacy.py` beside
# `gelu_bwd.py`: a file kept as a copy of its sibling.
_BACKUP_SUFFIX = re.compile(
    r"^(?P<original>\w+?)(?:[_ ](?:bak|backup|copy|old|legacy|orig)\d*| - copy)$", re.IGNORECASE
)


def backup_copies(sources: Sources) -> Dict[str, str]:
    """The display paths of backup copies (`ldm/modules/encoders/modules_bak.py` beside `modules.py`) that no
    import line of the project names, each with the note for its findings. Any project, library or not:
    the name says what the file is, its sibling says what it copies."""
    paths = list(sources.paths())
    present = set(paths)
    found: Dict[str, Tuple[str, str, str]] = {}  # path -> (module name, file name, original's file name)
    for path in paths:
        folder, _, name = path.replace("\\", "/").rpartition("/")
        m = _BACKUP_SUFFIX.match(name[:-3]) if name.endswith(".py") else None
        original = f"{m.group('original')}.py" if m else ""
        if m and (f"{folder}/{original}" if folder else original) in present:
            found[path] = (name[:-3], name, original)
    if not found:
        return {}
    imported: Set[str] = set()
    for path in paths:
        imported |= sources.import_words(path)
    return {
        path: BACKUP_NOTE.format(name=name, original=original)
        for path, (module, name, original) in sorted(found.items())
        if module not in imported
    }


def _top(module: str, packages: Set[str]) -> str:
    """The outermost package (of `packages`, namespace folders among them) holding `module` (`basicsr` for
    `basicsr.ops.fused_act`); the module itself when none does."""
    parts = module.split(".")
    for i in range(1, len(parts)):
        if ".".join(parts[:i]) in packages:
            return ".".join(parts[:i])
    return module


UNUSED_NOTE = (
    "lowered to info: nothing in this application uses `{name}` (no call or mention in its code, notebooks,"
    " configs or scripts; an import nothing then uses, or a package's re-export, is no use); it is unused code"
    " a port can leave as it is"
)
LIBRARY_UNUSED_NOTE = (
    "lowered to info: nothing in this project uses `{name}` (no call or mention in its code, tests, examples,"
    " configs or scripts) and no `__init__.py` or `__all__` exports it; it is unused code a port can leave as"
    " it is, unless the library's users import it from this module"
)
HELD_UNUSED_NOTE = (
    "lowered to info: only code that is itself unused ({users}) uses `{name}`; nothing else in this project calls"
    " or mentions it, and it is unused code a port can leave as it is"
)
UNUSED_IMPORT_NOTE = (
    "lowered to info: what this import binds (`{names}`) is used only inside {holders}, which nothing in this"
    " project uses; it goes with that code"
)
TEST_ONLY_NOTE = (
    "lowered to info: only tests use `{name}` (nothing else in this application calls or mentions it); it is"
    " test support a port can leave as it is"
)


def unused_definitions(
    sources: Sources,
    paths: Iterable[str],
    skipped: Mapping[str, str],
    texts: Iterable[str] = (),
    library: bool = False,
) -> Dict[str, List[Tuple[int, int, str]]]:
    """Of the Python modules `paths` (an application's, with findings; `skipped`: modules already known
    unreached), the module-level functions and classes nothing in the application names: their own
    module names them nowhere outside their own statement (`Sources.lone_definitions`), and no other
    module, notebook, config or script (`texts`) spells their name. Each with its first and last line
    and the note for the findings inside.

    `library`: the project is a library scanned whole (packaging metadata at its top), whose exports are its
    users' to call: a name any `__init__.py` spells, or its own module's `__all__` lists, is used, and so is
    one its tests call (a test of a library exercises what users call); the rest as in an application
    (Optix's `utils.Timer`, which nothing imports or exports)."""
    all_paths = list(sources.paths())
    texts = list(texts)
    # Every file's facts are asked, whatever it holds now: a warm scan then finds them all in the cache.
    lone_facts = {p: sources.lone_definitions(p) for p in all_paths}
    decoded = {p: decode(lone_facts[p]) for p in all_paths}
    words = {p: sources.words(p) for p in all_paths}
    # a name spelt only on a file's import lines is not used there: imported and never used, or re-exported
    # by a package's `__init__.py` for the modules that import the package (Bert-Chinese's vendored
    # `pytorch_pretrained/__init__.py` and the `modeling_transfo_xl.py` no script uses). The `__init__.py` of
    # a package nothing imports is a library's face: what it re-exports counts as used.
    import_only = {p: sources.import_only(p) for p in all_paths}
    imported = {p: sources.import_words(p) for p in all_paths}
    importers = Counter(w for p in all_paths for w in imported[p])  # word -> files importing it
    # a module named like a test that the product imports is a module (det3d's `trainer/parallel_test.py`)
    product_imports = {w for p in all_paths if not is_test_path(p) for w in imported[p]}

    def named_test(path: str) -> bool:
        # (and holds tests: FSSD_OoD_Detection's `test_maha.py` and `test_fss.py` are the scripts its README
        # runs, named for what they evaluate)
        return (
            is_collected_test(path)
            and module_name(path)[0].rsplit(".", 1)[-1] not in product_imports
            and TESTS in sources.loading_facts(path)
        )

    for path in all_paths:
        module, package = module_name(path)
        last = module.rsplit(".", 1)[-1]
        if package and (library or importers[last] == (last in imported[path])):  # (its own `from .last import`)
            import_only[path] = frozenset()
    # a module that imports by computed name (`importlib.import_module(name)`) may then look up any name of
    # what it loads: every module in its folder and below counts as used. Not a loader given names (`loads-named`:
    # Hydra's `instantiate`, LDM's `instantiate_from_config`): the names it looks up are spelt in a config or a
    # string, and a name spelt anywhere counts as used below.
    loading = tuple(_folder(p) for p in all_paths if LOADS_ANY in sources.loading_facts(p))
    # and a module loaded by computed name below a package (`import_module(f"zoedepth.trainers.{name}")`,
    # then `getattr(module, "Trainer")`): any of its names may be the one looked up
    below = tuple(fact[len(LOADS) :] for p in all_paths for fact in sources.loading_facts(p) if fact.startswith(LOADS))
    # and a module whose names another looks up by computed name after `from .lta import *` (videollm-online's
    # `globals()[f"build_{dataset}"]` in `data/__init__.py`): any of its names may be the one looked up
    looked_up = _star_imported_by_lookups(sources, all_paths, words)
    # and a module another looks up whole by computed name (skipnet's `models.__dict__[args.arch]`, its names
    # offered as `--arch` choices): any of its names may be the one
    looked_up |= _looked_up_whole(sources, all_paths, words, imported)
    # every module's lone definitions take part (a use inside an unused one of another module counts for
    # nothing); those of `paths` are reported
    candidates: Dict[str, List[Tuple[int, int, str, Tuple[str, ...]]]] = {}
    for path in all_paths:
        if path not in lone_facts:
            continue
        module = module_name(path)[0].rsplit(".", 1)[-1]
        test = is_test_path(path) and (named_test(path) or not is_collected_test(path))
        if path in skipped or test or module in _NAMES_LOOKED_UP or module == "__init__":
            continue
        if any(path.startswith(folder) for folder in loading):
            continue
        if any(_below(prefix, module_name(path)[0]) for prefix in below) or path in looked_up:
            continue
        lone = decoded[path]
        if lone and library:
            # (and no method: a library's users call the methods of the classes it hands them)
            text = sources.text(path)
            exported = exported_names(text)
            lines = text.splitlines()
            lone = [
                span
                for span in lone
                if span[2] not in exported and not lines[span[0] - 1].startswith((" ", "\t"))
            ]
        if lone:
            candidates[path] = lone
    if not candidates:
        return {}
    names = {name for spans in candidates.values() for _, _, name, _ in spans}
    text_words = [set(IDENTIFIER.findall(text)) for text in texts]
    spellers: Dict[str, List[str]] = {}  # name -> the Python files that spell it (its own among them)
    for path in all_paths:
        for name in (names & words[path]) - import_only[path]:
            spellers.setdefault(name, []).append(path)
    named_in_texts = {name for spelled in text_words for name in names & spelled}
    # what each module imports and uses only inside some of its own definitions (H3's `krylov.py` calls
    # `causal_convolution` of `toeplitz.py` only in `krylov_toeplitz`, which nothing calls)
    held = {p: held_imports(lone_facts[p]) for p in all_paths}
    # parameters off by default that hold uses (`?use_actnorm`) and that nothing in the application turns on
    flags = {
        h[len(SWITCH) :]
        for p in all_paths
        for h in [*(h for *_, hs in decoded[p] for h in hs), *(h for hs in held[p].values() for h in hs)]
        if h.startswith(SWITCH)
    }
    off = {flag for flag in flags if not turned_on(flag, sources, all_paths, words, texts)}
    # A module whose name no other file spells is imported by none (`loading` aside, above): its names are
    # its own, whatever other scripts spell the same (Qwen's eval scripts, each with its own `DEVICE`).
    alone = {
        path
        for path in candidates
        if not any(_stem(path) in words[other] for other in all_paths if other != path)
        and not any(_stem(path) in spelled for spelled in text_words)
    }
    # every candidate starts unused; what a live use reaches is taken out (below): definitions that only name
    # each other (mmcv's `knn = KNN.apply`, whose class's docstring spells `knn`) stay unused together
    unused: Set[Tuple[str, str]] = {(path, name) for path, spans in candidates.items() for _, _, name, _ in spans}

    # the lone definitions of each module by name: a module that defines `ActNorm` itself and names it nowhere
    # else spells its own, not another's (Open-MAGVIT2's two copies of taming's `util.py`)
    own = {p: {name for _, _, name, _ in decoded[p]} for p in all_paths}

    tied: Dict[str, Optional[Dict[str, FrozenSet[str]]]] = {}  # path -> where its spellings lead (asked lazily)

    def elsewhere(other: str, name: str, path: str) -> bool:
        """`other` spells `name` only as its own binding (a local of the same name) or tied by its imports to
        modules that cannot be `path`'s (another copy of a module of the same name). In a library, a name an
        `__init__.py` spells is its users' to import, whichever module it names (see above)."""
        importer, package = module_name(other)
        if library and package:
            return False
        if other not in tied:
            tied[other] = decode_tied(sources.tied(other))
        leads = (tied[other] or {}).get(name)
        if leads is None:
            return False
        target = module_name(path)[0]
        return not any(
            where != OWN and (may_lead_to(where, importer, target, package) or not known(where, importer, package))
            for where in leads
        )

    modules = [module_name(p)[0] for p in all_paths]
    resolves: Dict[Tuple[str, str], bool] = {}

    def known(where: str, importer: str, package: bool) -> bool:
        """Whether the import `where` names a module of the project: one that names none (a package's or a
        module that is not here: SpargeAttn's example importing `.quant_per_block` beside it) may be anything."""
        key = (where, importer)
        if key not in resolves:
            resolves[key] = any(may_lead_to(where, importer, m, package) for m in modules)
        return resolves[key]

    def dead_use(other: str, name: str, path: str) -> bool:
        """`other` spells `name` only inside its own definitions, every one of them unused, or only as its own
        definition of that name, or is a test (H3's `fftconv_ref`, the reference only the test of its CUDA
        kernel calls), or spells it only as its own binding or another module's name (`elsewhere`)."""
        if other in tests or (name in own[other] and name not in imported[other]):
            return True
        holders = held[other].get(name, ())
        if holders and all(dead(other, h) for h in holders):
            return True
        return elsewhere(other, name, path)

    def dead(path: str, holder: str) -> bool:
        return holder[len(SWITCH) :] in off if holder.startswith(SWITCH) else (path, holder) in unused

    # (a test runner's modules, `test_fftconv.py`: a `test.py` at the top evaluates a model, and
    # `tests/inference.py` is a script kept beside the tests)
    tests = {p for p in all_paths if named_test(p)} if not library else set()

    # unused: named by no other file, or only inside unused definitions of others, nor by a notebook, config
    # or script; and, in its own, nowhere or only inside definitions that are unused. A use outside those is
    # live, and what it names is used; the rest is what no live use reaches.
    changed = True
    while changed:
        changed = False
        for path, spans in candidates.items():
            for _, _, name, holders in spans:
                if (path, name) not in unused:
                    continue
                if (
                    path not in alone
                    and (
                        name in named_in_texts
                        or any(other != path and not dead_use(other, name, path) for other in spellers.get(name, ()))
                    )
                ) or not all(dead(path, h) for h in holders):
                    unused.discard((path, name))
                    changed = True
    wanted = set(paths)
    unused_note = LIBRARY_UNUSED_NOTE if library else UNUSED_NOTE
    out: Dict[str, List[Tuple[int, int, str]]] = {}
    for path, spans in candidates.items():
        if path not in wanted:
            continue
        named = [(a, b, n, holders) for a, b, n, holders in spans if (path, n) in unused]
        found = [
            (a, b, _unused_note(path, n, holders, spellers.get(n, ()), tests, held, unused_note))
            for a, b, n, holders in named
        ]
        if found:
            out[path] = found + _imports_only_they_use(sources.text(path), [(a, b, n) for a, b, n, _ in named])
    return out


def _unused_note(
    path: str,
    name: str,
    holders: Sequence[str],
    spellers: Sequence[str],
    tests: AbstractSet[str],
    held: Mapping[str, Mapping[str, Sequence[str]]],
    note: str,
) -> str:
    """The note for the findings inside the unused `name` of `path`: only tests use it; or only unused code does
    (its own module's `holders`, other modules' definitions that hold their import of it), named; or nothing."""
    if any(other in tests for other in spellers):
        return TEST_ONLY_NOTE.format(name=name)
    elsewhere = [h for other in spellers if other != path for h in held.get(other, {}).get(name, ())]
    users = sorted({h for h in [*holders, *elsewhere] if not h.startswith(SWITCH)})
    if users:
        return HELD_UNUSED_NOTE.format(name=name, users=", ".join(f"`{u}`" for u in users[:3]))
    return note.format(name=name)


def _imports_only_they_use(text: str, spans: Sequence[Tuple[int, int, str]]) -> List[Tuple[int, int, str]]:
    """The import statements of PyTorch's own modules in `text`, outside the unused definitions `spans` (first
    line, last line, name), whose
    every bound name the module spells only inside them (CineTrans's `import torch.cuda.amp as amp`, used only in
    the unused `WanI2V`), each as a span with the note for its findings. Not an import of another package or
    module (`import triton`, `from .correlation import Correlation`): importing the module runs it."""
    statements = import_bindings(text)
    if not statements:
        return []
    starts = sorted((first, last) for first, last, _ in spans)
    names_of = {first: name for first, _, name in spans}

    def inside(number: int) -> Optional[Tuple[int, int]]:
        at = bisect.bisect_right(starts, (number, float("inf"))) - 1
        return starts[at] if at >= 0 and starts[at][0] <= number <= starts[at][1] else None

    lines_of = text.splitlines()
    import_lines = {n for first, last, _ in statements for n in range(first, last + 1)}
    spelt: Dict[str, List[int]] = {}
    bound = {name for _, _, names in statements for name in names}
    for number, line in enumerate(without_comments(text).splitlines(), 1):
        if number not in import_lines:
            for word in bound.intersection(IDENTIFIER.findall(line)):
                spelt.setdefault(word, []).append(number)
    out: List[Tuple[int, int, str]] = []
    for first, last, names in statements:
        if inside(first) or not TORCH_IMPORT.match(lines_of[first - 1]):
            # (already inside one; or an import of a package or of a module that may load an extension: it runs,
            # and may fail, when the module is imported, whatever uses what it binds)
            continue
        holders: Set[Tuple[int, int]] = set()
        for name in names:
            lines = spelt.get(name, ())
            held = [inside(n) for n in lines]
            if not lines or not all(held):
                break
            holders.update(h for h in held if h)
        else:
            described = ", ".join(f"`{names_of[h[0]]}`" for h in sorted(holders))
            out.append((first, last, UNUSED_IMPORT_NOTE.format(names="`, `".join(sorted(names)), holders=described)))
    return out


_LOOKUP_WORDS = frozenset({"globals", "locals", "vars", "eval", "exec", "modules"})
_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\*", re.MULTILINE)


def _star_imported_by_lookups(sources: Sources, paths: Sequence[str], words: Mapping[str, FrozenSet[str]]) -> Set[str]:
    """The modules whose names reach, through `from x import *` (followed on), a module that looks names up by
    computed name (`globals()[name]`, `eval(expr)`): any of their names may be the one it looks up."""
    by_name = {module_name(p)[0]: p for p in paths}
    texts = {p: sources.text(p) for p in paths if words[p] & _LOOKUP_WORDS}
    # (not where every lookup takes a name a configuration gives, `globals()[self.arch["name"]]` in megvii-research/
    # PMN's trainer: that name is spelt where it is given, a YAML file or a script, and counts as used there)
    pending = [p for p, text in texts.items() if looks_up_built_names(text)]
    out: Set[str] = set()
    seen = set(pending)
    while pending:
        path = pending.pop()
        text = texts[path] if path in texts else sources.text(path)
        if "*" not in text:
            continue
        module, package = module_name(path)
        folder = module.split(".") if package else module.split(".")[:-1]
        for spelt in _STAR_IMPORT.findall(text):
            target = _absolute(spelt, folder) if spelt.startswith(".") else spelt
            if target is None:
                continue
            found = by_name.get(target) or next(
                (p for name, p in by_name.items() if name.endswith("." + target)), None
            )
            if found and found not in seen:
                seen.add(found)
                out.add(found)
                pending.append(found)
    return out


# `models.__dict__[args.arch]`, `for name in models.__dict__`, `getattr(models, args.arch)`: a module's names
# looked up by a name computed or given (not `getattr(models, "resnet")`, which spells the one it takes)
_WHOLE_LOOKUP = re.compile(
    r"(?<![.\w])([A-Za-z_]\w*)\.__dict__\b"
    r"|(?<![.\w])getattr[ \t]*\([ \t]*([A-Za-z_]\w*)[ \t]*,[ \t]*(?![rRbBuUfF]{0,2}['\"])"
)


def _looked_up_whole(
    sources: Sources,
    paths: Sequence[str],
    words: Mapping[str, FrozenSet[str]],
    imported: Mapping[str, FrozenSet[str]],
) -> Set[str]:
    """The modules another module imports and then looks names up in by computed name (`_WHOLE_LOOKUP`)."""
    names: Set[str] = set()
    for path in paths:
        if "__dict__" not in words[path] and "getattr" not in words[path]:
            continue
        names.update(
            name
            for found in _WHOLE_LOOKUP.finditer(sources.text(path))
            for name in [found.group(1) or found.group(2)]
            if name in imported[path]
        )
    return {p for p in paths if module_name(p)[0].rsplit(".", 1)[-1] in names} if names else set()


def _absolute(name: str, folder: Sequence[str]) -> Optional[str]:
    """The absolute name of a relative import (`..ops.k`) made in the package whose parts are `folder`; None for
    one that climbs above the top."""
    level = len(name) - len(name.lstrip("."))
    if level - 1 > len(folder):
        return None
    return ".".join([*folder[: len(folder) - level + 1], name[level:]]).strip(".")


SWITCHED_OFF_NOTE = (
    "lowered to info: it runs only when `{flag}` is on, a parameter off by default (`False`, `None` or 0) that"
    " nothing in this application turns on (no call, config or command-line option sets it); it is code a port"
    " can leave as it is"
)


def switched_off(
    sources: Sources, lines: Mapping[str, Iterable[int]], texts: Iterable[str] = ()
) -> Dict[str, List[Tuple[int, int, str]]]:
    """Of the `lines` of each Python module (an application's, with findings), those in a block that a
    parameter off by default switches on (`if cuda_sync:` with `cuda_sync=False` in the signature, or in
    its class's `__init__` for `if self.cuda_sync:`; `Sources.lone_definitions`' `?first:last:flag` facts)
    which no file of the application, nor a config or script of `texts`, turns on (`turned_on`); each as a
    one-line span with the note for its findings."""
    held: Dict[str, List[Tuple[int, str]]] = {}
    for path, numbers in lines.items():
        blocks = [_switch_block(f) for f in sources.lone_definitions(path) if f.startswith(SWITCH)]
        for number in sorted(numbers) if blocks else ():
            holding = sorted({flag for first, last, flag in blocks if first <= number <= last})
            held.setdefault(path, []).extend((number, flag) for flag in holding)
    if not held:
        return {}
    all_paths = list(sources.paths())
    words = {p: sources.words(p) for p in all_paths}
    texts = list(texts)
    flags = {flag for found in held.values() for _, flag in found}
    off = {flag for flag in flags if not turned_on(flag, sources, all_paths, words, texts)}
    out: Dict[str, List[Tuple[int, int, str]]] = {}
    for path, found in held.items():
        spans: Dict[int, Tuple[int, int, str]] = {}  # each line once, with the first of its flags that is off
        for number, flag in found:
            if flag in off:
                spans.setdefault(number, (number, number, SWITCHED_OFF_NOTE.format(flag=flag)))
        if spans:
            out[path] = list(spans.values())
    return out


def _switch_block(fact: str) -> Tuple[int, int, str]:
    first, last, flag = fact[len(SWITCH) :].split(":", 2)
    return int(first), int(last), flag


def turned_on(
    flag: str, sources: Sources, paths: Iterable[str], words: Mapping[str, FrozenSet[str]], texts: Iterable[str]
) -> bool:
    """Whether any file of the application (or a notebook, config or script of `texts`) may turn `flag` on: sets
    it to anything but `False`/`None`/`0` or its own name passed on (`use_actnorm=use_actnorm`), in Python,
    YAML or JSON (`use_actnorm: true`), or spells it as a command-line option (`--use_actnorm`). Reading it
    (`if not use_actnorm:`) turns nothing on."""
    pattern = re.compile(_SETS.format(flag=re.escape(flag)))
    code = re.compile(_SETS_IN_CODE.format(flag=re.escape(flag)))
    found_in = [
        *((code, sources.text(p)) for p in paths if flag in words[p]),
        *((pattern, t) for t in texts if flag in t),
    ]
    passed_on = False
    for searched, text in found_in:
        for found in searched.finditer(text):
            value = found.group("value") or found.group("yaml") or found.groupdict().get("item")
            if found.group("option") or (value is not None and value.strip("'\"") not in _OFF_VALUES | {flag}):
                return True
            passed_on = passed_on or value == flag
    if not passed_on:
        return False
    # `is_train=is_train` handed on from a function whose `is_train` has no default (dap-cl's `forward_one_batch(self,
    # inputs, targets, is_train, ...)`, called with `True` in the training loop): every caller gives it a value, and
    # one does (not where nothing calls that function: XCube's `enable(name, cuda_sync: bool)`)
    required = re.compile(_REQUIRED.format(flag=re.escape(flag)))
    holders = {m.group("name") for p in paths if flag in words[p] for m in required.finditer(sources.text(p))}
    for name in holders:
        called = re.compile(r"(?<!def )\b%s[ \t]*\(" % re.escape(name))
        if any(called.search(sources.text(p)) for p in paths if name in words[p]):
            return True
    return False


# A parameter `flag` without a default in a `def` (annotated or not): `def step(self, x, is_train, task_id=None):`.
_REQUIRED = r"\bdef[ \t]+(?P<name>\w+)[ \t]*\((?:[^()]*?[,(\s])?{flag}[ \t]*(?::[^=,()]+)?[,)]"


# A flag's name set, or spelt as a command-line option; `value` (or `yaml`) is what it is set to.
_SETS = (
    r"(?P<option>-)?(?<![\w])(?:self\.)?{flag}\b['\"]?(?:"
    r"[ \t]*(?::[ \t]*[\w.\[\], ]+?)?[ \t]*=(?!=)[ \t]*(?P<value>[^\s,)\]}}#]+)"  # `flag=False`, `flag: bool = None`
    r"|[ \t]*:[ \t]*(?P<yaml>[^\s,}}#]+)"  # `flag: true`, `"flag": false` (not `if not flag:`, nothing after it)
    r")?"
)
# The same in Python, where `flag: value` is a dict's key only when quoted (`{"use_actnorm": True}`): `cuda_sync:
# bool` is an annotation, `:param cuda_sync: whether to sync` a docstring's line.
_SETS_IN_CODE = (
    r"(?P<quote>['\"])?(?P<option>-)?(?<![\w])(?:self\.)?{flag}\b(?:"
    r"(?(quote)(?!))[ \t]*(?::[ \t]*[\w.\[\], ]+?)?[ \t]*=(?!=)[ \t]*(?P<value>[^\s,)\]}}#]+)"
    r"|(?(quote)['\"][ \t]*:[ \t]*(?P<yaml>[^\s,}}#]+)|(?!))"
    # `input_dict["reeval"] = True` (GSVA's `eval_gres`, whose dict the model's `forward(**input_dict)` takes)
    r"|(?(quote)['\"]\][ \t]*=(?!=)[ \t]*(?P<item>[^\s,)\]}}#]+)|(?!))"
    r")?"
)
_OFF_VALUES = frozenset({"False", "false", "None", "null", "~", "0", "no", "off"})


def _added(folder: Sequence[str], relative: str) -> Optional[List[str]]:
    """The parts of the folder `relative` (posix, from a module's own `folder`) names; None above the scan's top."""
    parts = list(folder)
    for step in relative.split("/"):
        if step == "..":
            if not parts:
                return None
            parts.pop()
        elif step not in ("", "."):
            parts.append(step)
    return parts


def _below(prefix: str, module: str) -> bool:
    """Whether a computed import below `prefix` (a `loads:` fact, `zoedepth.trainers.`) may load `module`
    (`metric_depth.zoedepth.trainers.zoedepth_trainer`): a module one level below the package the prefix
    names, wherever that package sits. Not one further down: mmcv's `import_module('mmcv.' + name)` loads
    its compiled `mmcv._ext`, not every op module of a vendored `annotator/uniformer/mmcv` (those load as their
    package's `__init__.py` imports them)."""
    if prefix.endswith("."):  # `mmcv.`: any module of the package
        package, start = prefix.strip("."), ""
    else:  # `models.arch_`: a module of `models` whose name starts `arch_`
        package, _, start = prefix.strip(".").rpartition(".")
    above, _, last = module.rpartition(".")
    return bool(package) and ("." + above).endswith("." + package) and last.startswith(start)


def _stem(path: str) -> str:
    """`eval/evaluate_chat_gsm8k.py` -> `evaluate_chat_gsm8k`: the name an import spells for the module."""
    return module_name(path)[0].rsplit(".", 1)[-1]


def _folder(path: str) -> str:
    """`src/face3d/util/util.py` -> `src/face3d/util/`; "" for a file at the top."""
    return path.replace("\\", "/").rsplit("/", 1)[0] + "/" if "/" in path.replace("\\", "/") else ""
