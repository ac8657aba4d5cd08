#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs tests/integration/test_*.py. Usage: run.py [substring-filter]."""
import glob
import importlib.util
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    passed = failed = skipped = 0
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "test_*.py"))):
        name = os.path.basename(path)[:-3]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        tests = [(k, getattr(mod, k)) for k in mod.__dict__ if k.startswith("test_")
                 and callable(getattr(mod, k))]
        for tname, fn in tests:
            full = "%s.%s" % (name, tname)
            if filt and filt not in full:
                continue
            t0 = time.time()
            try:
                fn()
            except harness.Skip as e:
                skipped += 1
                print("SKIP %s: %s" % (full, e), flush=True)
                continue
            except Exception as e:  # noqa: BLE001 - a test failure of any kind
                failed += 1
                print("FAIL %s (%.1fs): %s" % (full, time.time() - t0, e), flush=True)
                traceback.print_exc(file=sys.stdout)
                continue
            passed += 1
            print("PASS %s (%.1fs)" % (full, time.time() - t0), flush=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
