"""The suite's xdist groups (tests/support/xdist_groups.py), computed by a real pytest collection of a small tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = '''
import json, os
import pytest
from tests.support.xdist_groups import group_of

@pytest.fixture(scope="session", autouse=True)
def _everywhere():
    yield

@pytest.fixture(scope="session")
def server():
    yield "server"

@pytest.fixture(scope="module")
def app():
    yield "app"

def pytest_collection_modifyitems(config, items):
    with open(os.environ["GROUPS_OUT"], "w") as out:
        json.dump({item.nodeid: group_of(item) for item in items}, out)
'''

TESTS = '''
import pytest

def test_alone():
    pass

def test_first_user(server):
    pass

def test_second_user(server):
    pass

def test_module_app(app):
    pass

@pytest.mark.xdist_group("named")
def test_named():
    pass
'''


def test_groups_follow_shared_fixtures_and_an_autouse_one_groups_nothing(tmp_path):
    suite = tmp_path / "suite"  # as tests/ below the root: a root conftest's fixtures look like a plugin's
    suite.mkdir()
    (suite / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (suite / "test_tree.py").write_text(textwrap.dedent(TESTS))
    out = tmp_path / "groups.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GROUPS_OUT": str(out)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "--collect-only", "-q", "--rootdir", str(tmp_path), "suite"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    groups = json.loads(out.read_text())
    assert groups == {
        "suite/test_tree.py::test_alone": None,  # only the autouse session fixture: free to run anywhere
        "suite/test_tree.py::test_first_user": "session:server",
        "suite/test_tree.py::test_second_user": "session:server",
        "suite/test_tree.py::test_module_app": "module:suite/test_tree.py",
        "suite/test_tree.py::test_named": "named",
    }
