"""Which folders of a repository hold a copy of another project.

jukebox carries NVIDIA's apex and tensorboardX as folders beside its own package, each with its own
`setup.py` and `LICENSE`: another distribution, copied in. A porting engineer does not port apex line by
line; the project's own imports of it say what the port needs (drop it, or take an upstream release
that supports the target). One finding stands for such a folder, at `info`, with a note that counts the
rest (its most severe, first by path and line); the others are its own workings and are not listed (a
scan of the folder itself lists them: the scanned root is never a copy). An import of it from the
project's own code is a package dependency like any other, not an import of the project's own module.

A folder counts when it is below the scanned root, holds packaging metadata (`setup.py`,
`pyproject.toml`, or a C++ project's `CMakeLists.txt`: FasterTransformer in ABQ-LLM) and a licence file,
is not inside one of the project's Python packages (flash-attn's
`flash_attn/cute/` is the library's own subpackage), and the scan has Python code outside every such
folder (in a monorepo of such folders, each is the product). A folder kept in a `third_party/` (or
`3rdparty/`, `vendor/`) folder says so by its place: packaging or a licence is enough, inside a package
too (VBench's `vbench2/third_party/LLaVA_NeXT/`, `vbench/third_party/amt/`). A package that sets a literal
`__version__` of its own below a folder with a licence is one too (mmcv 1.3.17 in ControlNet's
`annotator/uniformer/mmcv/`, UniFormer's folder): it must sit strictly below the licensed folder, so a
project's own package with its licence beside it is not. When that licensed folder also holds packaging, it is
a copied distribution, and its own `examples/`, `tests/`, `docs/`, `scripts/` and `benchmarks/` came with it
(diffusers 0.22 as LLMGA's `llmga/diffusers/`); files the project added beside them stay its own. So is a
folder named as a release (`22.02`, `v1.4.2`, `cub-1.8.0`) that holds its own licence (safari's
`csrc/fftconv/mathdx/22.02/`, NVIDIA's cuFFTDx headers and examples copied in beside the extension that includes
them; NVIDIA's CUB in mlp_maps' `kilonerf_cuda/`). So is a torch.hub repository with its own licence (its
`hubconf.py`: a hub cache copied in, Inferix's `pretrained/hub/facebookresearch-dino-7c446df/`), and a well-known
library copied whole below a folder of the project with its own `__version__` (fact-graph's `src/transformers/`),
unless the project's packaging publishes that name.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Dict, Iterable, Sequence, Tuple

# (a C++ project's `CMakeLists.txt` too: NVIDIA's FasterTransformer copied into bytedance/ABQ-LLM, with its
# own licence beside it; a project's own extension folder holds no licence of its own)
_PACKAGING = ("setup.py", "pyproject.toml", "CMakeLists.txt")
# folders that hold other projects by name
_THIRD_PARTY = frozenset(
    {"third_party", "third-party", "thirdparty", "3rdparty", "3rd_party", "vendor", "_vendor", "vendored"}
)
VENDORED_NOTE = (
    "lowered to info: `{folder}/` is a copy of another project ({why});"
    " this finding stands for all {{count}} of its findings, which are not listed (scan the folder on its own"
    " for them); a port takes upstream's support for the target or drops it, and the project's imports of it say which"
)

OWN_MARKS = "its own licence, and packaging or version"
NAMED_COPY = "a copy of that library, with its own version"
HUB_COPY = "a torch.hub repository, with its own licence"


def vendored_note(folder: str, why: str = OWN_MARKS) -> str:
    """The note of the finding that stands for the copy in `folder` (`{count}` left to fill), saying `why` it is
    one (`OWN_MARKS`, `NAMED_COPY`: known by its library's name and version, `HUB_COPY`)."""
    return VENDORED_NOTE.format(folder=folder, why=why)


def vendored_folders(files: Iterable[Tuple[str, str]], roots: Sequence[str] = ()) -> Dict[str, str]:
    """`files`: (display path, path on disk) of every scanned file; `roots`: the display paths of the
    scanned folders (the scan's own packaging is no copy). The display paths of the folders that hold
    another project, each with the note for the one finding that stands for it (`{count}` left to fill)."""
    pairs = list(files)
    displays = [d for d, _ in pairs]
    packages = {posixpath.dirname(d) for d in displays if posixpath.basename(d) == "__init__.py"}
    packaged = {
        posixpath.dirname(d): posixpath.dirname(disk) for d, disk in pairs if posixpath.basename(d) in _PACKAGING
    }
    candidates: Dict[str, bool] = {}  # folder -> whether its packaging alone is not enough
    disk_of: Dict[str, str] = dict(packaged)
    # folders with modules of their own beside their packaging (LLMGA's `llmga/diffusers/train.py`, which its
    # package imports as `llmga.diffusers.train`)
    with_modules = {
        posixpath.dirname(d) for d in displays if d.endswith(".py") and posixpath.basename(d) not in _PACKAGING
    }
    for folder in packaged:
        # (inside a package too when the folder holds only its packaging and folders: SPIn-NeRF's
        # `DS_NeRF/torchsearchsorted/`, a distribution with its `src/` layout, `setup.py` and licence; flash-attn's
        # `flash_attn/cute/` is a package of the library's own)
        if folder and (
            _third_party(folder)
            or not _inside_package(folder, packages)
            or (folder not in packages and folder not in with_modules)
        ):
            candidates[folder] = True
    # a torch.hub repository (its `hubconf.py`) with its own licence: a hub cache copied in (Inferix's
    # `pretrained/hub/facebookresearch-dino-7c446df/`, DINO's whole repository, of which only the model is loaded)
    hubs = set()
    for display, disk in pairs:
        if posixpath.basename(display) == "hubconf.py":
            folder = posixpath.dirname(display)
            if folder and folder not in candidates:
                candidates[folder] = True
                disk_of.setdefault(folder, os.path.dirname(disk))
                hubs.add(folder)
    # a folder kept in a `third_party/` folder: its packaging or its licence says it is another project
    for display, disk in pairs:
        parts = display.split("/")
        for i, part in enumerate(parts[:-2]):
            if part in _THIRD_PARTY:
                folder = "/".join(parts[: i + 2])
                candidates[folder] = False
                disk_of.setdefault(folder, _up(os.path.dirname(disk), len(parts) - 1 - (i + 2)))
                break
    # a library that sets its own `__version__`, below a folder with a licence: mmcv 1.3.17 copied into
    # ControlNet's `annotator/uniformer/` (UniFormer's folder, whose `__init__.py` is ControlNet's own glue)
    # (the folders' licences are looked up once each, and a file is read only below a licensed folder)
    versioned = set()
    distributions = set()  # licensed folders with packaging that hold such a library: another distribution
    licences: Dict[str, bool] = {}
    for display, disk in pairs:
        if posixpath.basename(display) not in _VERSION_FILES:
            continue
        library = posixpath.dirname(display)
        folder, disk_folder = posixpath.dirname(library), os.path.dirname(os.path.dirname(disk))
        # up to, not including, the scanned folder: its licence is the project's own (fact-graph's root LICENSE
        # above its `src/transformers/` copy counts the same scanned as `.` or as `../fact-graph`)
        while folder and not any(r == folder or r.startswith(folder + "/") for r in roots):
            if disk_folder not in licences:
                licences[disk_folder] = _has_licence(disk_folder)
            if licences[disk_folder]:
                if _sets_version(disk):
                    candidates.setdefault(library, True)
                    disk_of.setdefault(library, os.path.dirname(disk))
                    versioned.add(library)
                    if folder in packaged:
                        distributions.add(folder)
                break
            folder, disk_folder = posixpath.dirname(folder), os.path.dirname(disk_folder)
    # a well-known library copied in whole below a folder of the project, with its own `__version__`
    # (amazon-science/fact-graph's `src/transformers/`, an adapter-transformers release, under the repository's
    # licence alone), unless the project's own packaging publishes that name (transformers' own `src/` layout)
    named = set()
    for display, disk in pairs:
        library = posixpath.dirname(display)
        if posixpath.basename(display) != "__init__.py" or posixpath.basename(library) not in _KNOWN_LIBRARIES:
            continue
        root = next((r for r in roots if library.startswith(r + "/")), "")
        below = library[len(root) + 1 :] if root else library
        if "/" in below and library not in candidates and not _publishes(packaged, root, posixpath.basename(library)):
            # (in its `__init__.py` or in the `version.py` it imports: mmcv 1.3.17 in ELM's
            # `lavis/common/annotator/uniformer/mmcv/`, ControlNet's annotator without the licence above it)
            if any(_sets_version(os.path.join(os.path.dirname(disk), name)) for name in sorted(_VERSION_FILES)):
                candidates[library] = True
                disk_of.setdefault(library, os.path.dirname(disk))
                versioned.add(library)
                named.add(library)
    # that distribution's own examples, tests and scripts came with it (diffusers 0.22 copied as LLMGA's
    # `llmga/diffusers/`, whose `examples/` and `tests/` are upstream's; LLMGA's trainers beside them are its own)
    for distribution in distributions:
        for display, disk in pairs:
            if display.startswith(distribution + "/"):
                part = display[len(distribution) + 1 :].split("/", 1)[0]
                if part in _DISTRIBUTION_EXTRAS and "/" in display[len(distribution) + 1 :]:
                    folder = f"{distribution}/{part}"
                    depth = display.count("/") - folder.count("/") - 1  # folders between it and the file
                    candidates.setdefault(folder, True)
                    disk_of.setdefault(folder, _up(os.path.dirname(disk), depth))
                    versioned.add(folder)
    # a release copied in under its version number, with its licence (safari's
    # `csrc/fftconv/mathdx/22.02/`, NVIDIA's cuFFTDx headers and examples): no packaging needed
    for display, disk in pairs:
        parts = display.split("/")
        for i, part in enumerate(parts[:-1]):
            if i and _RELEASE_FOLDER.match(part):
                folder = "/".join(parts[: i + 1])
                if folder not in candidates:
                    candidates[folder] = True
                    disk_of[folder] = _up(os.path.dirname(disk), len(parts) - 2 - i)
                break
    found: Dict[str, str] = {}
    for folder in sorted(candidates):
        if under(folder, found) or any(r == folder or r.startswith(folder + "/") for r in roots):
            continue
        licensed = _has_licence(disk_of[folder])
        if licensed or (not candidates[folder] and folder in packaged) or folder in versioned:
            why = NAMED_COPY if folder in named else HUB_COPY if folder in hubs else OWN_MARKS
            found[folder] = vendored_note(folder, why)
    if not found:
        return {}
    own = [d for d in displays if d.endswith(".py") and not under(d, found)]
    return found if own else {}


# the folders a distribution carries beside its library: upstream's own examples, tests, docs and scripts
_DISTRIBUTION_EXTRAS = frozenset({"examples", "tests", "docs", "scripts", "benchmarks"})
# a folder named as a release (`22.02`, `v1.4.2`, `cub-1.8.0`), not a single number (`2`, a dataset split)
_RELEASE_FOLDER = re.compile(r"^(?:[A-Za-z][\w+]*[-_])?v?\d+(?:\.\d+)+$")
_VERSION_FILES = frozenset({"version.py", "_version.py", "__init__.py"})
_SETS_VERSION = re.compile(r"^__version__\s*=\s*['\"]", re.MULTILINE)


# Libraries research repositories copy in whole, modified or not (a copy sets upstream's `__version__`)
_KNOWN_LIBRARIES = frozenset(
    {
        "transformers", "diffusers", "peft", "accelerate", "trl", "timm", "open_clip", "fairseq", "fairscale",
        "detectron2", "mmcv", "mmdet", "mmseg", "mmengine", "basicsr", "apex", "deepspeed", "megatron", "xformers",
        "pytorch_lightning", "lightning", "torchvision", "torchaudio", "espnet", "allennlp", "lavis", "datasets",
    }
)


def _publishes(packaged: Dict[str, str], root: str, name: str) -> bool:
    """Whether the packaging at the scanned folder `root` names `name` (`name="transformers"` in its setup.py)."""
    folder = packaged.get(root)
    if folder is None:
        return False
    for packaging in ("setup.py", "pyproject.toml", "setup.cfg"):
        try:
            with open(os.path.join(folder or ".", packaging), encoding="utf-8", errors="replace") as handle:
                if re.search(rf"""\bname\s*=\s*['"]{re.escape(name)}['"]""", handle.read(50000)):
                    return True
        except OSError:
            continue
    return False


def _sets_version(path: str) -> bool:
    """Whether the file at `path` sets a literal `__version__` (`__version__ = '1.3.17'`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return bool(_SETS_VERSION.search(handle.read(20000)))
    except OSError:
        return False


def under(path: str, folders: Iterable[str]) -> bool:
    return any(path.startswith(folder + "/") for folder in folders)


def folder_of(path: str, folders: Sequence[str]) -> str:
    """The folder of `folders` that holds `path`, or ""."""
    return next((folder for folder in folders if path.startswith(folder + "/")), "")


def _up(path: str, levels: int) -> str:
    for _ in range(levels):
        path = os.path.dirname(path)
    return path


def _third_party(folder: str) -> bool:
    """Whether `folder` is kept in a `third_party/` folder (the second pass decides those)."""
    return any(part in _THIRD_PARTY for part in folder.split("/")[:-1])


def _inside_package(folder: str, packages: set) -> bool:
    parent = posixpath.dirname(folder)
    while parent:
        if parent in packages:
            return True
        parent = posixpath.dirname(parent)
    return False


def _has_licence(folder: str) -> bool:
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return False
    return any(n.lower().startswith(("license", "licence", "copying")) for n in names)
