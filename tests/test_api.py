"""The Python API: `portcheck.scan(...)` and `portcheck.fix(...)` stay callable once the modules behind them are
loaded."""

import portcheck
import portcheck.fixer  # noqa: F401  (loading the packages must not shadow the API functions)
import portcheck.scanner  # noqa: F401


def test_scan_and_fix_api(tmp_path):
    src = tmp_path / "train.py"
    src.write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    result = portcheck.scan([src], jobs=1)
    assert [f.code for f in result.findings] == ["DEV002"]
    report = portcheck.fix([src], target="generic", write=False)
    assert report is not None
    assert src.read_text() == "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"  # write=False: a dry run
