"""The peer tools, each in its own virtual environment under bench/.venvs/, and how each is run."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Peer:
    name: str  # the row label
    venv: str  # folder under bench/.venvs/
    requirement: str  # what `pip install` gets
    argv: Tuple[str, ...]  # the command before the paths; argv[0] is a script in the venv's bin/
    finding_marker: str  # a regex that matches one line of output per finding


PEERS: Tuple[Peer, ...] = (
    # TorchFix's default selection; it exits 0 even when it finds something.
    Peer("torchfix 0.7.0", "torchfix", "torchfix==0.7.0", ("torchfix",), r"^\S+:\d+:\d+: TOR\d+"),
    # Fixit's default rules; `lint` exits 1 when it reports something.
    Peer("fixit 2.2.1 lint", "fixit", "fixit==2.2.1", ("fixit", "lint"), r"^\S+@\d+:\d+ \w+"),
    # A native linter as a reference point: its default rules, and every rule.
    Peer(
        "ruff (default rules)",
        "ruff",
        "ruff",
        ("ruff", "check", "--no-cache", "--output-format", "concise"),
        r"^\S+:\d+:\d+: [A-Z]+\d+",
    ),
    Peer(
        "ruff --select ALL",
        "ruff",
        "ruff",
        ("ruff", "check", "--no-cache", "--output-format", "concise", "--select", "ALL"),
        r"^\S+:\d+:\d+: [A-Z]+\d+",
    ),
)


def venv_bin(venvs: Path, peer: Peer) -> Path:
    return venvs / peer.venv / "bin"


def ensure_venv(venvs: Path, peer: Peer, python: str = sys.executable) -> Optional[str]:
    """Create the peer's virtual environment and install it when missing; the reason it failed, or None."""
    bin_dir = venv_bin(venvs, peer)
    if (bin_dir / peer.argv[0]).exists():
        return None
    try:
        if not (bin_dir / "python").exists():
            subprocess.run([python, "-m", "venv", str(venvs / peer.venv)], check=True, capture_output=True)
        subprocess.run(
            [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", peer.requirement],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError as exc:
        tail = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:]
        return f"install failed: {' '.join(tail) or exc}"
    return None


def version(venvs: Path, peer: Peer) -> str:
    """The installed distribution's version, as pip knows it."""
    dist = peer.requirement.split("==")[0]
    try:
        out = subprocess.run(
            [
                str(venv_bin(venvs, peer) / "python"),
                "-c",
                f"import importlib.metadata as m; print(m.version({dist!r}))",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return out.stdout.strip()


def command(venvs: Path, peer: Peer, paths: Sequence[Path]) -> List[str]:
    return [str(venv_bin(venvs, peer) / peer.argv[0]), *peer.argv[1:], *(str(p) for p in paths)]
