import sys
from pathlib import Path

import pytest
from hypothesis import settings

# The suite is deterministic: property tests draw the same examples on every run and keep no
# example database between runs (a failure found while exploring becomes an explicit test).
settings.register_profile("portcheck", derandomize=True, database=None)
settings.load_profile("portcheck")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@pytest.fixture(autouse=True)
def _no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
