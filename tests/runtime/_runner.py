"""Run scripts the way `python SCRIPT` would, each in a child forked from one interpreter that has
imported torch once (a torch import costs seconds; a fork costs milliseconds).

    python _runner.py OUT_DIR SCRIPT [SCRIPT ...]   (run from the scripts' folder)

For each script writes OUT_DIR/SCRIPT.out, SCRIPT.err and SCRIPT.rc (the exit status), and, when
the testaccel device is active (tests/accel), SCRIPT.json: what the script did on the device.
"""

import json
import os
import runpy
import sys
import traceback

import torch  # noqa: F401  (imported before forking, shared by every child)


def _device_report(script, out_dir, before):
    loader = sys.modules.get("testaccel_loader")  # set by tests/accel/bootstrap/sitecustomize.py
    if loader is not None:
        after = loader.counters()
        delta = {key: after[key] - before.get(key, 0) for key in after}
        with open(os.path.join(out_dir, script + ".json"), "w") as handle:
            json.dump(delta, handle, sort_keys=True)


def _child(script, out_dir):
    code = 1
    loader = sys.modules.get("testaccel_loader")
    before = loader.counters() if loader is not None else {}
    try:
        for fd, suffix in ((1, ".out"), (2, ".err")):
            target = os.open(os.path.join(out_dir, script + suffix), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        sys.argv = [script]
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            _device_report(script, out_dir, before)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)


def main():
    out_dir, scripts = sys.argv[1], sys.argv[2:]
    children = {}
    for script in scripts:
        pid = os.fork()
        if pid == 0:
            _child(script, out_dir)
        children[pid] = script
    for pid, script in children.items():
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
        with open(os.path.join(out_dir, script + ".rc"), "w") as handle:
            handle.write(str(code))


if __name__ == "__main__":
    main()
