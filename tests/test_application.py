"""The application object: what outlives a run is the application's, shared by its pipelines, closed with it."""

from __future__ import annotations

from agent.pipeline import Pipeline
from application import Application
from config import load_settings
from models.token_estimate import DEFAULT_TOKENS_PER_CHAR
from tests.support.openai_server import ScriptedOpenAI, say


def _settings(server: ScriptedOpenAI):
    return load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                         MODEL_NAME="scripted")


def test_a_window_learnt_on_an_application_is_what_its_next_pipeline_sees() -> None:
    with ScriptedOpenAI() as server:
        settings = _settings(server)
        app = Application(settings)
        app.windows.learn(settings, 2048)  # as an overflow error in an earlier run would
        assert Pipeline(settings, app=app).preload()["window"] == "2,048 tokens (overflow_error)"
        assert "overflow_error" not in Pipeline(settings).preload()["window"]  # its own application knows nothing


def test_the_token_ratio_a_run_learns_stays_with_its_application() -> None:
    with ScriptedOpenAI([say("FINAL ANSWER: 1")]) as server:
        settings = _settings(server)
        app = Application(settings)
        assert Pipeline(settings, app=app).solve("What is one?", use_rag=False).answer == "1"
    learnt = app.estimators.get(server.url, "scripted").tokens_per_char
    assert learnt != DEFAULT_TOKENS_PER_CHAR
    assert Application(settings).estimators.get(server.url, "scripted").tokens_per_char == DEFAULT_TOKENS_PER_CHAR


def test_an_endpoint_is_checked_by_one_monitor_per_application() -> None:
    with ScriptedOpenAI() as server:
        settings = _settings(server)
        app = Application(settings)
        pipeline = Pipeline(settings, app=app)
        pipeline.preload()
        assert pipeline.endpoint is app.monitor("agent") is app.monitor("agent", settings)
        other = settings.model_copy(update={"MODEL_NAME": "another"})
        assert app.monitor("agent", other) is not app.monitor("agent")


def test_closing_removes_the_process_workspace_and_is_idempotent(application: Application) -> None:
    root = application.workspace.root
    assert root.is_dir()
    application.close()
    application.close()
    assert not root.exists()


def test_the_fixture_starts_with_nothing_learnt(application: Application) -> None:
    settings = application.settings
    assert application.windows.get(settings, probe=False).source in ("default", "configured")
    assert application.estimators.get("", settings.MODEL_NAME).tokens_per_char == DEFAULT_TOKENS_PER_CHAR


def test_a_pipeline_closes_only_the_application_it_made() -> None:
    settings = load_settings(RAG_ENABLED=False)
    app = Application(settings)
    root = app.workspace.root
    Pipeline(settings, app=app).close()
    assert root.is_dir()  # the owner's to close
    own = Pipeline(settings)
    own_root = own.app.workspace.root
    own.close()
    assert not own_root.exists()
    app.close()
