"""The one settings object: defaults, validation naming the variable, .env handling, documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import ConfigError, Settings, load_settings, redact

ROOT = Path(__file__).resolve().parents[1]


def test_issue_defaults():
    s = load_settings()
    assert (s.MAX_ITERATIONS, s.LLM_TIMEOUT, s.TOOL_TIMEOUT, s.MAX_FILE_SIZE) == (10, 120, 30, 10000)
    assert (s.RATE_LIMIT_RETRY_MAX, s.RATE_LIMIT_RETRY_BASE_DELAY, s.BATCH_QUESTION_DELAY) == (5, 10, 5)
    assert not s.llm_configured


def test_environment_converted_to_types(monkeypatch):
    monkeypatch.setenv("MAX_ITERATIONS", "3")
    monkeypatch.setenv("LLM_TIMEOUT", "2.5")
    monkeypatch.setenv("RAG_ENABLED", "false")
    s = load_settings()
    assert s.MAX_ITERATIONS == 3 and s.LLM_TIMEOUT == 2.5 and s.RAG_ENABLED is False


@pytest.mark.parametrize("name,value", [("MAX_ITERATIONS", "ten"), ("TOOL_TIMEOUT", "-1"), ("SANDBOX_MODE", "off"),
                                        ("GRADIO_SERVER_PORT", "99999")])
def test_bad_value_names_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert name in str(err.value) and value in str(err.value)


def test_dotenv_read_and_unknown_keys_ignored(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("MODEL_NAME=qwen3:8b\nSOME_OTHER_TOOL_SETTING=1\n"
                                   "OPENAI_BASE_URL=http://localhost:11434/v1\n")
    monkeypatch.chdir(tmp_path)
    s = load_settings()
    assert s.MODEL_NAME == "qwen3:8b" and s.llm_configured


def test_environment_beats_dotenv(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("MODEL_NAME=from-file\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MODEL_NAME", "from-env")
    assert load_settings().MODEL_NAME == "from-env"


def test_secrets_hidden_in_repr_and_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-123")
    s = load_settings()
    assert "sk-very-secret-123" not in repr(s) and "sk-very-secret-123" not in str(s.model_dump())
    assert redact("key=sk-very-secret-123!", s) == "key=***!"


def test_missing_llm_message_is_actionable():
    msg = load_settings().llm_missing_message()
    assert "OPENAI_API_KEY" in msg and "OPENAI_BASE_URL" in msg and "\n" not in msg


def test_only_config_reads_the_environment():
    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", "tests", "bench"} or rel.name == "config.py":
            continue
        text = path.read_text(errors="replace")
        if "os.environ" in text or "os.getenv" in text:
            offenders.append(str(rel))
    assert not offenders, f"environment read outside config.py: {offenders}"


def test_a_new_secret_setting_is_redacted_with_no_further_edit():
    from pydantic import SecretStr

    from config import redact

    class WithProvider(Settings):
        NEWSEARCH_API_KEY: SecretStr | None = None

    settings = WithProvider(NEWSEARCH_API_KEY="ns-secret-value", OPENAI_API_KEY="sk-other-secret")
    assert {"NEWSEARCH_API_KEY", "OPENAI_API_KEY", "HF_TOKEN", "TAVILY_API_KEY"} <= set(WithProvider.secret_fields())
    assert redact("key ns-secret-value and sk-other-secret", settings) == "key *** and ***"
