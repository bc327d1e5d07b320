"""JSON output: a stable, documented schema (see README, "JSON schema")."""

from __future__ import annotations

import json
from typing import Any, Dict

from portcheck.report.model import Report

SCHEMA_VERSION = 1


def to_dict(report: Report) -> Dict[str, Any]:
    data: Dict[str, Any] = {
        "version": report.version,
        "schema": SCHEMA_VERSION,
        "target": report.target.value,
        "files_scanned": report.files_scanned,
        "findings": [f.to_dict() for f in report.findings],
        "errors": [e.to_dict() for e in report.errors],
    }
    card = report.scores.get(report.target)
    if card is not None:
        data.update(card.to_json_top())
        if len(report.targets) > 1:
            data["targets"] = {
                section.target.value: {
                    **report.scores[section.target].to_json_top(),
                    "findings": [f.to_dict() for f in section.findings],
                }
                for section in report.sections()
            }
    if report.statistics:
        data["statistics"] = [{"code": c, "count": n} for c, n in report.counts_by_rule()]
    return data


def render(report: Report, **_: Any) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"
