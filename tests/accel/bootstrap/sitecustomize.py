"""Run by Python at start-up when this folder is on PYTHONPATH (see accel.bootstrap_env): activates
the testaccel device before any script runs, and at exit writes this process's device counters to
the report folder, one JSON file per process. Loaded by path, so nothing else joins sys.path."""

import os

if os.environ.get("TESTACCEL_LIBRARY"):
    import atexit
    import importlib.util
    import sys

    _here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _spec = importlib.util.spec_from_file_location(
        "testaccel_loader", os.path.join(_here, "__init__.py"), submodule_search_locations=[_here]
    )
    _loader = importlib.util.module_from_spec(_spec)
    sys.modules["testaccel_loader"] = _loader
    _spec.loader.exec_module(_loader)
    _loader.activate(os.environ["TESTACCEL_LIBRARY"])
    if os.environ.get("TESTACCEL_REPORT"):
        atexit.register(lambda: _loader.write_report(os.environ["TESTACCEL_REPORT"], f"pid{os.getpid()}"))
