# SPDX-License-Identifier: GPL-2.0
"""The runner itself, started the way `sudo make test` from a user's account starts it:
SUDO_UID and SUDO_GID in the environment. CI runs as root without sudo; this runs the
tests that an inherited SUDO_UID broke (an attach to the test's own root process, an
output in a root-owned folder, a command in a root-made memory cgroup) that way."""
import os
import re
import subprocess
import sys

import harness

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py")
BROKEN_BY_SUDO = ("test_core.test_attach_running_process",
                  "test_safety.test_full_disk_says_no_space_left",
                  "test_oom.test_cgroup_oom_in_known_phase")


def test_suite_started_through_sudo_passes_as_for_root():
    harness.need_root()
    env = dict(os.environ, SUDO_UID="65534", SUDO_GID="65534", SUDO_USER="nobody")
    for name in BROKEN_BY_SUDO:
        r = subprocess.run([sys.executable, RUN, "-j", "1", name], capture_output=True,
                           text=True, timeout=300, env=env)
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        m = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", last)
        assert m and m.group(2) == "0" and int(m.group(1)) + int(m.group(3)) == 1, \
            "%s under sudo: %s" % (name, r.stdout[-1500:] + r.stderr[-500:])
        if m.group(3) != "0":
            raise harness.Skip("%s skipped: %s" % (name, r.stdout[-300:]))
        assert "started through sudo by uid 65534" in r.stdout, r.stdout[-500:]
