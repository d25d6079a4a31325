"""The page guard's process scan: one scan of /proc serves every check of a watchdog tick."""

from __future__ import annotations

import os
import subprocess
import sys

from tools.browser import guard


def test_descendants_are_read_from_a_given_tree():
    tree = {1: [10, 11], 10: [100], 100: [1000], 11: [], 2: [20]}
    assert sorted(guard.descendants(1, tree)) == [10, 11, 100, 1000]
    assert guard.descendants(20, tree) == []


def test_one_scan_finds_a_real_child_and_grandchild():
    child = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; "
                              "subprocess.run([sys.executable, '-c', 'import time; time.sleep(30)'])"])
    try:
        for _ in range(100):
            tree = guard.process_tree()
            grandchildren = tree.get(child.pid, [])
            if grandchildren:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert child.pid in guard.descendants(os.getpid(), tree)
        assert grandchildren and grandchildren[0] in guard.descendants(os.getpid(), tree)
        assert guard.renderers(child.pid, tree) == []  # python processes: not renderers (their command line says so)
    finally:
        for pid in guard.descendants(child.pid):
            guard.kill(pid)
        child.kill()
        child.wait()
