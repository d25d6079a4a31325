"""Prompt-token estimates: learnt from the server's counts, high rather than low, images at a flat price."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from models.token_estimate import PromptEstimator, PromptEstimators, prompt_chars


def test_the_ratio_is_learnt_from_the_reported_usage_and_errs_high():
    est = PromptEstimator()
    short = [SystemMessage(content="s" * 400), HumanMessage(content="q" * 400)]
    est.observe(short, None, prompt_tokens=208)  # the server counted 1 token per 4 characters (+ 4 per message)
    longer = [*short, AIMessage(content="a" * 800)]
    estimate = est.estimate(longer, None)
    assert 412 <= estimate <= 412 * 1.15  # 1600 / 4 + 12, plus the margin, never below


def test_the_highest_recent_ratio_wins():
    est = PromptEstimator()
    msgs = [HumanMessage(content="x" * 1000)]
    est.observe(msgs, None, 254)
    est.observe(msgs, None, 504)  # denser text (code, JSON)
    assert est.tokens_per_char == 0.5


def test_no_usage_reported_teaches_nothing():
    est = PromptEstimator()
    est.observe([HumanMessage(content="x" * 100)], None, 0)
    assert est.tokens_per_char == PromptEstimator().tokens_per_char


def test_bound_tools_count_and_images_do_not_count_their_base64():
    class Bound:
        kwargs = {"tools": [{"type": "function", "function": {"name": "calculator", "description": "d" * 500}}]}

    assert prompt_chars([HumanMessage(content="hi")], Bound()) > 500
    image = HumanMessage(content=[{"type": "text", "text": "what is this?"},
                                  {"type": "image_url",
                                   "image_url": {"url": "data:image/png;base64," + "A" * 500_000}}])
    assert prompt_chars([image]) < 5000


def test_each_endpoint_and_model_learns_its_own_ratio():
    estimators = PromptEstimators()
    agent = estimators.get("http://127.0.0.1:8000/v1", "qwen")
    assert estimators.get("http://127.0.0.1:8000/v1/", "qwen") is agent
    vision, other_model = estimators.get("http://127.0.0.1:9000/v1", "qwen"), estimators.get("http://127.0.0.1:8000/v1",
                                                                                             "llava")
    vision.observe([HumanMessage(content="x" * 100)], None, 5000)  # an endpoint that counts an image's tiles
    other_model.observe([HumanMessage(content="x" * 100)], None, 300)
    assert agent.tokens_per_char == PromptEstimator().tokens_per_char
    assert vision.tokens_per_char > 40 and other_model.tokens_per_char < 4
    estimators.forget()
    assert estimators.get("http://127.0.0.1:9000/v1", "qwen").tokens_per_char == PromptEstimator().tokens_per_char


def test_a_run_sizes_vision_requests_with_the_vision_endpoints_estimator():
    from config import load_settings
    from models.model_client import ChatModels, ModelClient

    settings = load_settings(OPENAI_BASE_URL="http://127.0.0.1:8000/v1", OPENAI_API_KEY="sk-a",
                             VISION_BASE_URL="http://127.0.0.1:9000/v1", MODEL_NAME="qwen")
    client = ModelClient(settings, ChatModels(settings))
    assert client.estimator() is client.estimator(role="agent")
    assert client.estimator(role="vision") is not client.estimator()
    assert client.estimator("llava", role="vision") is not client.estimator(role="vision")
