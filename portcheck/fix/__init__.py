"""`portcheck fix`: rewrite device code so it runs off CUDA, as a transform over the scan's findings."""

import sys
import types

from portcheck.fix.engine import FixError, FixOptions, fix_text
from portcheck.fix.outcome import FileFix, FixReport, Left
from portcheck.fix.paths import fix_paths

__all__ = ["FileFix", "FixError", "FixOptions", "FixReport", "Left", "fix_paths", "fix_text"]


class _CallablePackage(types.ModuleType):
    """Importing this package rebinds the `portcheck.fix` attribute from the API function
    (`portcheck.fix(paths, ...)`) to the package; calling the package keeps that API working."""

    def __call__(self, *args, **kwargs):
        from portcheck.api import fix

        return fix(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
