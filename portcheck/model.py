"""The data model every stage shares: targets, severities, rules, findings and scan results.

Everything here is a frozen dataclass or an enum, so stages can pass values around freely.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional, Tuple


class Target(str, enum.Enum):
    """A backend a repository is being ported to."""

    NEURON = "neuron"
    XLA = "xla"
    GENERIC = "generic"

    def __str__(self) -> str:
        return self.value


TARGETS: Tuple[Target, ...] = (Target.NEURON, Target.XLA, Target.GENERIC)


class Severity(str, enum.Enum):
    """How much a finding costs a port if it is left alone."""

    BLOCKER = "blocker"
    MAJOR = "major"
    MINOR = "minor"
    INFO = "info"
    OFF = "off"  # the rule does not apply to this target

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    def lowered(self) -> "Severity":
        """One level less severe; info stays info and off stays off."""
        order = [Severity.BLOCKER, Severity.MAJOR, Severity.MINOR, Severity.INFO]
        if self in (Severity.INFO, Severity.OFF):
            return self
        return order[order.index(self) + 1]

    def __str__(self) -> str:
        return self.value


_SEVERITY_RANK = {
    Severity.BLOCKER: 4,
    Severity.MAJOR: 3,
    Severity.MINOR: 2,
    Severity.INFO: 1,
    Severity.OFF: 0,
}


CATEGORIES: Tuple[str, ...] = (
    "device",
    "runtime",
    "amp",
    "backend-flag",
    "distributed",
    "kernel",
    "package",
    "xla",
    "environment",
)


class FixSafety(str, enum.Enum):
    """Whether a rule's autofix is applied by default (`safe`), only on request, or not at all."""

    SAFE = "safe"
    UNSAFE = "unsafe"  # applied with --unsafe-fixes: review the diff
    NONE = "none"  # needs a person

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Case:
    """An example embedded in a rule: `code` must (invalid) or must not (valid) be flagged."""

    code: str
    filename: str = "example.py"
    # For invalid cases: how many findings of this rule are expected (default 1).
    count: int = 1
    # For invalid cases with a fix: the expected output of `portcheck fix` per target, or False where
    # that target leaves the case unfixed (every other target must fix it).
    fixed: Mapping[str, Any] = field(default_factory=dict)
    # For invalid cases: text every finding's note must contain (a lowered finding says why).
    note: str = ""


@dataclass(frozen=True)
class Rule:
    """One entry of the rule catalog, loaded from `rules/*.toml`."""

    code: str
    name: str
    category: str
    severity: Mapping[Target, Severity]
    summary: str
    why: str
    bad: str
    good: str
    fix: str
    fix_safety: FixSafety
    source_file: str
    valid: Tuple[Case, ...] = ()
    invalid: Tuple[Case, ...] = ()
    # Fix recipes per fix target (generic, cpu, neuron, xla); empty when there is no autofix.
    autofix: Mapping[str, Any] = field(default_factory=dict)
    # Scoring hints.
    has_fallback: bool = False  # a pure-PyTorch fallback exists (does not cap the repo score)
    repo_level: bool = False  # environment/build evidence rather than code
    references: Tuple[str, ...] = ()
    unverified: str = ""
    min_torch: str = ""

    def severity_for(self, target: Target) -> Severity:
        return self.severity.get(target, Severity.OFF)

    @property
    def fixable(self) -> bool:
        return self.fix_safety is not FixSafety.NONE and bool(self.autofix)


@dataclass(frozen=True)
class Finding:
    """One place in one file where a rule matched."""

    path: str  # relative to the working directory, forward slashes
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    code: str
    name: str
    category: str
    severity: Severity
    message: str
    fixable: bool
    fix_safety: FixSafety = FixSafety.NONE
    cell: Optional[int] = None  # 1-based notebook cell, when the file is a notebook
    source_line: str = ""  # the stripped source line, for excerpts and fingerprints
    guarded: bool = False  # severity was lowered because a non-CUDA fallback path exists
    note: str = ""  # extra context (e.g. why the severity was lowered)
    # What `portcheck fix` does with this finding, per fix target: ("generic", "safe"), ("xla", "unsafe").
    # Set from the fixer's verdict for this node (portcheck.fixer.verdict), never from the rule.
    fixes: Tuple[Tuple[str, str], ...] = ()
    # What the matcher recognised the reported code as, for the fixer: the role (one of
    # `torchfacts.ROLES`, "" when the matcher says none) and the qualified name it matched. Kept by the
    # cache, left out of reports and of comparisons.
    role: str = field(default="", compare=False)
    symbol: str = field(default="", compare=False)
    # The other entries this finding stands for (line, column, end_line, end_column each, as its own): the
    # further device strings of one list (`default=["cuda:0", "cuda:1", ...]`) are one finding, fixed whole.
    also: Tuple[Tuple[int, int, int, int], ...] = ()
    # A finding lowered for a reason a fix elsewhere in its file ends: the places (line, column) of the
    # findings whose fixes together end it, and the severity it has then (a CUDA harness's workings: once its
    # measuring calls are ported to `torch.accelerator`, the script no longer measures on CUDA by design).
    # For the score after `fix`; left out of reports and of comparisons.
    lowered_until: Tuple[Tuple[int, int], ...] = field(default=(), compare=False)
    unlowered: Optional[Severity] = field(default=None, compare=False)
    # Why `portcheck fix` leaves this finding to a person although its rule has a fix ("" when it does not):
    # a CUDA benchmark harness's measuring call is ported with the rest of the harness, not alone.
    manual: str = field(default="", compare=False)
    # The attribute named like a CUDA flag (`cuda` of `if args.cuda:`) whose check lowered this finding, and the
    # severity it has where the project only ever sets that flag to `True`, which the project pass restores
    # (portcheck.always_on). Kept by the cache, left out of reports and of comparisons.
    flag: str = field(default="", compare=False)
    unflagged: Optional[Severity] = field(default=None, compare=False)

    def sort_key(self) -> Tuple[Any, ...]:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    def parts(self) -> Tuple["Finding", ...]:
        """This finding and one finding for each entry it stands for (`also`), for the fixer."""
        if not self.also:
            return (self,)
        return (replace(self, also=()),) + tuple(
            replace(self, line=a, column=b, end_line=c, end_column=d, also=()) for a, b, c, d in self.also
        )

    def to_dict(self) -> dict:
        data = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "name": self.name,
            "category": self.category,
            "severity": self.severity.value,
            "message": self.message,
            "fixable": self.fixable,
            "fix_safety": self.fix_safety.value,
        }
        if self.cell is not None:
            data["cell"] = self.cell
        if self.guarded:
            data["guarded"] = True
        if self.note:
            data["note"] = self.note
        if self.also:
            data["also"] = [list(part) for part in self.also]
        return data


@dataclass(frozen=True)
class FileError:
    """A file that could not be read, decoded or parsed; the scan went on without it."""

    path: str
    message: str
    line: Optional[int] = None
    column: Optional[int] = None
    kind: str = "parse"  # read | decode | parse | internal

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "column": self.column,
        }


@dataclass(frozen=True)
class FileResult:
    """Everything the scan learnt about one file."""

    path: str
    findings: Tuple[Finding, ...] = ()
    error: Optional[FileError] = None
    lines: int = 0  # lines of code, for weighting scores
    kind: str = "python"  # python | notebook | requirements | dockerfile | shell | cmake | cuda | ...
    # Non-CUDA accelerators (and "accelerator" for a device abstraction) its Python code names (portcheck.backends)
    backends: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ScanResult:
    """The outcome of a scan: per-file results in path order."""

    target: Target
    files: Tuple[FileResult, ...]

    @property
    def findings(self) -> Tuple[Finding, ...]:
        return tuple(f for fr in self.files for f in fr.findings)

    @property
    def errors(self) -> Tuple[FileError, ...]:
        return tuple(fr.error for fr in self.files if fr.error is not None)

    @property
    def files_scanned(self) -> int:
        return len(self.files)
