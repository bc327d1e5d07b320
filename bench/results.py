"""The benchmark's results: rows of measured runs, ratios against peers, target checks, and their JSON."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from bench.measure import Measurement

MB = 1_000_000


@dataclass(frozen=True)
class Row:
    """One measured command: several runs of it, or why it was not run."""

    key: str  # stable identifier, e.g. "portcheck.cold.transformers"
    label: str
    group: str  # portcheck | sample | linearity
    command: Tuple[str, ...]
    files: int
    bytes: int
    runs: Tuple[Measurement, ...] = ()
    status: str = "ok"  # ok | unavailable | failed
    note: str = ""
    findings: Optional[int] = None

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.runs)

    @property
    def wall_s(self) -> float:
        return statistics.median(r.wall_s for r in self.runs)

    @property
    def cpu_s(self) -> float:
        return statistics.median(r.cpu_s for r in self.runs)

    @property
    def peak_rss_mb(self) -> float:
        # The worst run, so a memory target is never met by luck.
        return max(r.peak_rss_bytes for r in self.runs) / MB

    @property
    def others_cores(self) -> float:
        """Cores kept busy by other processes during the runs (median): near 0 on a quiet machine."""
        return statistics.median(r.others_cores for r in self.runs)

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall_s if self.wall_s > 0 else float("inf")

    def to_dict(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {
            "key": self.key, "label": self.label, "group": self.group, "command": list(self.command),
            "files": self.files, "bytes": self.bytes, "status": self.status, "note": self.note,
            "findings": self.findings, "runs": [asdict(r) for r in self.runs],
        }
        if self.ok:
            data.update(
                wall_s=self.wall_s,
                cpu_s=self.cpu_s,
                peak_rss_mb=self.peak_rss_mb,
                files_per_s=self.files_per_s,
                others_cores=self.others_cores,
            )
        return data


@dataclass(frozen=True)
class Ratio:
    """How many times more a peer needs than portcheck, on the same files."""

    peer: str
    wall: float
    cpu: float
    rss: float


@dataclass(frozen=True)
class Target:
    """A stated goal and whether the measurement met it."""

    name: str
    measured: Optional[float]  # None when the row could not be measured
    limit: float
    unit: str
    higher_is_better: bool = False

    @property
    def met(self) -> Optional[bool]:
        if self.measured is None:
            return None
        return self.measured >= self.limit if self.higher_is_better else self.measured < self.limit


def ratios(portcheck: Row, peers: Sequence[Row]) -> List[Ratio]:
    """Peer / portcheck for wall time, CPU time and peak memory, for every peer that ran."""
    if not portcheck.ok:
        return []
    out = []
    for peer in peers:
        if peer.ok:
            out.append(
                Ratio(
                    peer=peer.label,
                    wall=peer.wall_s / portcheck.wall_s,
                    cpu=peer.cpu_s / portcheck.cpu_s if portcheck.cpu_s > 0 else float("inf"),
                    rss=peer.peak_rss_mb / portcheck.peak_rss_mb if portcheck.peak_rss_mb > 0 else float("inf"),
                )
            )
    return out


def scaling(rows: Sequence[Row]) -> List[Tuple[str, float, float]]:
    """(label, input size relative to the first row, wall time relative to the first row)."""
    ok = [r for r in rows if r.ok]
    if not ok:
        return []
    base = ok[0]
    return [(r.label, r.bytes / base.bytes, r.wall_s / base.wall_s) for r in ok]


@dataclass(frozen=True)
class Report:
    started: str
    machine: Dict[str, Any]
    versions: Dict[str, str]
    settings: Dict[str, Any]
    rows: Tuple[Row, ...]
    ratios: Tuple[Ratio, ...] = ()
    scaling: Tuple[Tuple[str, float, float], ...] = ()
    targets: Tuple[Target, ...] = ()
    notes: Tuple[str, ...] = field(default_factory=tuple)

    def row(self, key: str) -> Optional[Row]:
        return next((r for r in self.rows if r.key == key), None)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "started": self.started,
            "machine": self.machine,
            "versions": self.versions,
            "settings": self.settings,
            "rows": [r.to_dict() for r in self.rows],
            "ratios": [asdict(r) for r in self.ratios],
            "scaling": [{"label": label, "size": s, "wall": w} for label, s, w in self.scaling],
            "targets": [{**asdict(t), "met": t.met} for t in self.targets],
            "notes": list(self.notes),
        }


def write_json(report: Report, folder: Path) -> Path:
    """Write the report as `bench-<start time>.json` and as `latest.json`; return the first."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = report.started.replace(":", "").replace("-", "").split(".")[0]
    path = folder / f"bench-{stamp}.json"
    text = json.dumps(report.to_dict(), indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    (folder / "latest.json").write_text(text, encoding="utf-8")
    return path
