"""Reports: one `Report` object, many formats. No format computes anything of its own."""

from __future__ import annotations

from typing import Callable

from portcheck.report.model import Report, build_report

FORMATS = ("text", "json", "sarif", "github", "markdown", "html")


def renderer(fmt: str) -> Callable[..., str]:
    """The render function for a format, imported only when asked for."""
    import importlib

    module = importlib.import_module(f"portcheck.report.{'json_' if fmt == 'json' else fmt}")
    return module.render


__all__ = ["FORMATS", "Report", "build_report", "renderer"]
