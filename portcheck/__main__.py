"""`python -m portcheck`: the console script, with the working folder dropped from the import path.

`python -m` puts the working folder first on sys.path, so a scanned repository's `click.py`,
`pathlib.py` or `torch.py` would be imported in place of the real ones. portcheck's own package is
imported before this file runs, so a repository with its own `portcheck/` package can still shadow
it: the console script `portcheck` (or `python -P -m portcheck`, `python -I -m portcheck`) is the
safe way to run inside an untrusted checkout, and the only one the hooks and docs use.
"""

import os
import sys


def _without_working_folder(path: list) -> list:
    here = os.path.realpath(os.getcwd())
    return [p for p in path if p != "" and os.path.realpath(p) != here]


sys.path[:] = _without_working_folder(sys.path)

from portcheck.cli import main  # noqa: E402

main()
