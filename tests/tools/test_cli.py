"""`python -m tools list|call`: in-process for the edge cases, as a real subprocess for the end-to-end path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.media import make_speech, make_text_image, media_tools_available
from tools.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
        cwd: Path) -> subprocess.CompletedProcess:
    """Run `python -m tools ...` in a fresh interpreter (outside the repo, so no .env is read)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "tools", *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=120)


def test_list_shows_tiers_and_missing_reasons(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "run_python" in out and "[base]" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("analyze_image"))
    assert "[missing]" in line and "VISION_MODEL_NAME" in line


def test_list_json(capsys):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    tiers = {t["name"]: t["tier"] for t in data["tools"]}
    assert tiers["run_python"] == "base" and tiers["image_ocr"] == "extension"
    assert "analyze_image" in data["missing"]


def test_list_tokens_sizes_every_schema_and_the_total(capsys):
    assert main(["list", "--tokens", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    sizes = {t["name"]: t["schema_tokens"] for t in data["tools"]}
    assert all(size > 20 for size in sizes.values()) and data["schema_tokens"] == sum(sizes.values())
    assert sizes["watch_video"] > sizes["browser_back"]  # a long docstring costs more in every request
    assert main(["list", "--tokens"]) == 0
    out = capsys.readouterr().out
    assert f"~{data['schema_tokens']:,} tokens of tool schemas" in out
    assert any(line.startswith("calculator") and " tok " in line for line in out.splitlines())


def test_call_run_python(capsys):
    assert main(["call", "run_python", "--args-json", '{"code": "print(6 * 7)"}']) == 0
    assert capsys.readouterr().out == "42\n"


def test_call_reports_tool_failure_with_status_1(capsys):
    assert main(["call", "run_python", "--args-json", '{"code": "raise ValueError(\\"boom\\")"}']) == 1
    out = capsys.readouterr().out
    assert out.startswith("Error: run_python stopped: exit code 1") and "ValueError: boom" in out


def test_call_json_outcome(capsys):
    assert main(["call", "run_python", "--json", "--args-json", '{"code": "print(1)"}']) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["output"] == "1\n" and data["error_kind"] is None


def test_call_passes_attachments_as_the_agent_does(tmp_path, capsys):
    table = tmp_path / "numbers.csv"
    table.write_text("n\n5\n7\n30\n")
    code = json.dumps({"code": f"import pandas as pd\nprint(pd.read_csv({str(table)!r}).n.sum())"})
    assert main(["call", "run_python", "--args-json", code, "--attachment", str(table)]) == 0
    assert capsys.readouterr().out.strip() == "42"
    # Without --attachment the sandbox does not see the file.
    assert main(["call", "run_python", "--args-json", code]) == 1
    assert "FileNotFoundError" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["call", "no_such_tool"], "no tool named 'no_such_tool'"),
    (["call", "analyze_image", "--args-json", '{"path": "/x.png", "question": "?"}'], "analyze_image is unavailable"),
    (["call", "run_python", "--args-json", "{not json"], "bad --args-json"),
    (["call", "run_python", "--args-json", "[1, 2]"], "must be a JSON object"),
    (["call", "run_python", "--attachment", "/no/such/file.xlsx"], "no such file"),
])
def test_usage_errors_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_arguments_become_an_observation(capsys):
    assert main(["call", "run_python", "--args-json", '{"source": "print(1)"}']) == 1
    assert "invalid arguments for run_python" in capsys.readouterr().out


def test_bad_configuration_exits_2(monkeypatch, capsys):
    monkeypatch.setenv("TOOL_TIMEOUT", "not-a-number")
    assert main(["list"]) == 2
    assert "TOOL_TIMEOUT" in capsys.readouterr().err


@pytest.mark.integration
def test_subprocess_call_reads_args_from_stdin_and_hides_the_parent_env(tmp_path):
    code = json.dumps({"code": "import os\nprint(sorted(os.environ))\nprint(os.getuid())"})
    proc = cli("call", "run_python", "--args-json", "-", stdin=code, cwd=tmp_path,
               env={"OPENAI_API_KEY": "sk-cli-secret-123456"})
    assert proc.returncode == 0, proc.stderr
    assert "OPENAI_API_KEY" not in proc.stdout and "sk-cli-secret" not in proc.stdout
    uid = proc.stdout.strip().splitlines()[-1]
    assert uid.isdigit() and uid != "0"  # never root: a uid of the call's own (root app) or 65534 (user namespace)


@pytest.mark.integration
def test_subprocess_list(tmp_path):
    proc = cli("list", cwd=tmp_path)
    assert proc.returncode == 0 and "run_python" in proc.stdout and "transcribe_audio" in proc.stdout


@pytest.mark.integration
def test_subprocess_call_image_ocr(tmp_path):
    image = make_text_image(tmp_path / "sign.png", "EXIT 12")
    proc = cli("call", "image_ocr", "--args-json", json.dumps({"path": str(image)}), "--attachment", str(image),
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "EXIT 12"


@pytest.mark.integration
@pytest.mark.skipif(not media_tools_available(), reason="espeak-ng and ffmpeg are required")
def test_subprocess_call_transcribe_audio(tmp_path):
    clip = make_speech(tmp_path / "memo.mp3", "The quick brown fox jumps over the lazy dog.")
    proc = cli("call", "transcribe_audio", "--args-json", json.dumps({"path": "memo.mp3"}), "--attachment", str(clip),
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    heard = proc.stdout.lower()
    assert "quick" in heard and "fox" in heard and "over" in heard, heard  # tiny.en may mishear "lazy dog"
