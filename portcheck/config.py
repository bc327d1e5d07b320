"""Project configuration: `[tool.portcheck]` in the nearest `pyproject.toml`, or a `portcheck.toml`.

Every key is validated; an unknown key, a wrong type or invalid TOML is a ConfigError that names
the file and the key (the CLI turns it into exit code 2).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from portcheck.model import Severity
from portcheck.targets import SCAN_TARGETS, normalize, refusal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib



class ConfigError(Exception):
    """The configuration is invalid."""


@dataclass(frozen=True)
class Config:
    target: str = "generic"
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    extend_exclude: Tuple[str, ...] = ()
    per_file_ignores: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    min_torch: str = "2.6"
    literal_device: bool = False
    fail_under: Optional[float] = None
    fail_on: str = "info"  # lowest severity that makes `scan` exit 1
    respect_gitignore: bool = True
    parts: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)  # part -> path patterns (portcheck.parts)
    source: Optional[Path] = None  # the file it came from
    root: Optional[Path] = None  # the folder that file sits in (the project root)

    def merged(self, **overrides: Any) -> "Config":
        """A copy with CLI flags applied (None means 'not given')."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


# key -> (field name, kind)
_SCHEMA: Dict[str, Tuple[str, str]] = {
    "target": ("target", "target"),
    "select": ("select", "strlist"),
    "ignore": ("ignore", "strlist"),
    "exclude": ("exclude", "strlist"),
    "extend-exclude": ("extend_exclude", "strlist"),
    "per-file-ignores": ("per_file_ignores", "pfi"),
    "min-torch": ("min_torch", "version"),
    "literal-device": ("literal_device", "bool"),
    "fail-under": ("fail_under", "number"),
    "fail-on": ("fail_on", "severity"),
    "respect-gitignore": ("respect_gitignore", "bool"),
    "parts": ("parts", "parts"),
}


def _check(path: Path, key: str, kind: str, value: Any) -> Any:
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{path}: key '{key}': expected {expected}, got {type(value).__name__} {value!r}")

    if kind == "strlist":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        return tuple(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
            raise bad("a number from 0 to 100")
        return float(value)
    if kind == "target":
        if not isinstance(value, str) or refusal(value, SCAN_TARGETS):
            raise bad(f"one of {', '.join(SCAN_TARGETS)} (any case)")
        return normalize(value)
    if kind == "severity":
        if value not in [s.value for s in Severity if s is not Severity.OFF]:
            raise bad("one of blocker, major, minor, info")
        return value
    if kind == "version":
        if not isinstance(value, str) or not all(p.isdigit() for p in value.split(".")[:2]):
            raise bad('a version such as "2.6"')
        return value
    if kind == "pfi":
        if not isinstance(value, dict):
            raise bad("a table of glob = [codes]")
        out = {}
        for glob, codes in value.items():
            out[glob] = _check(path, f"{key}.{glob}", "strlist", codes)
        return out
    if kind == "parts":
        from portcheck.parts import OTHER_PARTS

        if not isinstance(value, dict):
            raise bad("a table of part = [path patterns]")
        for part in value:
            if part not in OTHER_PARTS:
                raise ConfigError(f"{path}: key '{key}.{part}': unknown part (known parts: {', '.join(OTHER_PARTS)})")
        return {part: _check(path, f"{key}.{part}", "strlist", patterns) for part, patterns in value.items()}
    raise AssertionError(kind)


def parse_table(path: Path, table: Mapping[str, Any]) -> Config:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: key 'tool.portcheck': expected a table")
    values: Dict[str, Any] = {}
    for key, value in table.items():
        if key not in _SCHEMA:
            known = ", ".join(sorted(_SCHEMA))
            raise ConfigError(f"{path}: key '{key}': unknown key (known keys: {known})")
        name, kind = _SCHEMA[key]
        values[name] = _check(path, key, kind, value)
    return Config(source=path, root=path.parent, **values)


def _read_toml(path: Path) -> Dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None


def load_file(path: Path) -> Config:
    doc = _read_toml(path)
    if path.name == "pyproject.toml":
        table = doc.get("tool", {}).get("portcheck") if isinstance(doc.get("tool"), dict) else None
        if table is None:
            return Config(root=path.parent)
        return parse_table(path, table)
    return parse_table(path, doc)


def find_config(start: Path) -> Optional[Path]:
    """The nearest `portcheck.toml`, or `pyproject.toml` with a `[tool.portcheck]` table, above `start`."""
    try:
        start = start.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): search from where it sits
        start = start.absolute()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        own = candidate / "portcheck.toml"
        if own.is_file():
            return own
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "[tool.portcheck" in text:
                return pyproject
    return None


def load_config(start: Path, explicit: Optional[Path] = None) -> Config:
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"{explicit}: no such config file")
        return load_file(explicit)
    found = find_config(start)
    if found is None:
        return Config()
    return load_file(found)
