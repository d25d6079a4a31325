"""agent.run_limits: masking the oldest observations, the token meter, cost, the reply's reserve."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agent.events import ModelCall, ToolResult
from agent.run_limits import CUT_KEY, MASKED_KEY, ObservationMasker, TokenMeter, cost_usd, reply_reserve
from config import load_settings
from models.context_window import ContextWindow, llamacpp_n_ctx, vllm_max_model_len
from models.failures import stated_context_limit
from tools.core.workspace import Workspace


def conversation(turns: int, size: int = 3000) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(content="system", id="s"), HumanMessage(content="task", id="h")]
    for i in range(turns):
        messages.append(AIMessage(content="", id=f"a{i}", tool_calls=[{"id": f"c{i}", "name": "read", "args": {}}]))
        messages.append(ToolMessage(content=f"Observation {i}\n" + "x" * size, tool_call_id=f"c{i}", name="read",
                                    id=f"t{i}"))
    return messages


def chars(messages) -> int:
    return sum(len(str(m.content)) for m in messages) // 4


def test_the_oldest_observations_are_masked_and_every_message_stays(tmp_path):
    settings = load_settings(LLM_MAX_TOKENS=512)
    masker = ObservationMasker(settings, Workspace(tmp_path / "ws", 10**7))
    messages = conversation(10)
    fitted = masker.fit(messages, chars, ContextWindow(8000, "configured"))
    assert len(fitted.messages) == len(messages)
    assert [m.id for m in fitted.messages] == [m.id for m in messages]
    threshold = masker.threshold(8000)
    assert threshold == 8000 - 512 - 160  # the window less the reply and a 2% margin (CONTEXT_MASK_RATIO 1)
    assert fitted.event is not None and fitted.event.tokens_after <= threshold < fitted.event.tokens_before
    masked = [m for m in fitted.messages if isinstance(m, ToolMessage) and MASKED_KEY in m.response_metadata]
    unmask_last = [next(o for o in messages if o.id == m.id) if m.id == masked[-1].id else m for m in fitted.messages]
    assert chars(unmask_last) > threshold  # masking stopped as soon as the request fit
    assert [m.id for m in masked] == [f"t{i}" for i in range(len(masked))]  # oldest first
    assert fitted.messages[-1].content == messages[-1].content  # the newest stays whole
    for stub in masked:
        path = stub.response_metadata[MASKED_KEY]
        assert f'read_file("{path}")' in str(stub.content) and str(stub.content).startswith("Observation ")
        original = next(m for m in messages if m.id == stub.id)
        assert Path(path).read_text(encoding="utf-8") == original.content
        assert stub.tool_call_id == original.tool_call_id


def test_a_request_under_the_ratio_is_left_alone_and_masked_ones_are_not_masked_twice(tmp_path):
    settings = load_settings(LLM_MAX_TOKENS=512)
    masker = ObservationMasker(settings, Workspace(tmp_path / "ws", 10**7))
    small = conversation(2)
    assert masker.fit(small, chars, ContextWindow(100_000, "default")).event is None
    first = masker.fit(conversation(10), chars, ContextWindow(8000, "configured"))
    again = masker.fit(first.messages, chars, ContextWindow(8000, "configured"))
    assert again.event is None or not {m.id for m in again.replaced} & {m.id for m in first.replaced}


def test_without_room_in_the_workspace_the_observation_stays_whole(tmp_path):
    masker = ObservationMasker(load_settings(), Workspace(tmp_path / "ws", 100))
    fitted = masker.fit(conversation(10), chars, ContextWindow(4000, "configured"))
    assert fitted.event is None and not fitted.replaced


def test_the_reply_keeps_its_room_at_most_half_the_window():
    settings = load_settings(LLM_MAX_TOKENS=8192, CONTEXT_MASK_RATIO=0.9)
    assert reply_reserve(settings, 8192) == 4096 and reply_reserve(settings, 128_000) == 8192
    masker = ObservationMasker(settings, None)
    assert masker.threshold(16_384) == 16_384 - 8192 - 327 and masker.threshold(128_000) == 115_200


def test_the_newest_turn_is_never_masked_and_is_cut_at_its_end_with_its_whole_text_kept(tmp_path):
    settings = load_settings(LLM_MAX_TOKENS=512)
    masker = ObservationMasker(settings, Workspace(tmp_path / "ws", 10**7))
    messages = conversation(3, size=9000)  # the fixed part and the three pages pass an 8k window
    messages[0] = SystemMessage(content="s" * 20_000, id="s")  # ~5,000 tokens of tool schemas and prompt
    fitted = masker.fit(messages, chars, ContextWindow(8000, "configured"))
    assert fitted.event is not None and fitted.event.tokens_after <= masker.threshold(8000)
    older = [m for m in fitted.messages[:-1] if isinstance(m, ToolMessage)]
    assert all(MASKED_KEY in m.response_metadata for m in older)
    newest = fitted.messages[-1]
    assert isinstance(newest, ToolMessage) and MASKED_KEY not in newest.response_metadata
    text = str(newest.content)
    assert text.startswith("Observation 2\n" + "x" * 1000) and fitted.event.cut == 1  # its start stays, never silently
    path = newest.response_metadata[CUT_KEY]
    assert f'read_file("{path}")' in text and "characters are not shown" in text
    assert Path(path).read_text(encoding="utf-8") == messages[-1].content
    # Next turn: the cut observation is an older one now, masked to a stub that points at the same whole text.
    later = [*fitted.messages, *conversation(4, size=9000)[-2:]]
    again = masker.fit(later, chars, ContextWindow(8000, "configured"))
    stub = next(m for m in again.messages if m.id == newest.id)
    assert stub.response_metadata[MASKED_KEY] == path and "x" * 100 not in str(stub.content)


def test_the_meter_counts_model_calls_and_passes_only_past_the_limit():
    meter = TokenMeter(limit=100)
    meter.observe(ModelCall(iteration=1, model="m", latency_s=0, prompt_tokens=80, completion_tokens=20, cost_usd=0.5))
    meter.observe(ToolResult(call_id="c", name="t", output="x" * 999, ok=True, duration_s=0))
    assert meter.used == 100 and not meter.exhausted and meter.cost_usd == 0.5
    meter.observe(ModelCall(iteration=2, model="m", latency_s=0, prompt_tokens=1))
    assert meter.exhausted and not TokenMeter(limit=0).exhausted


def test_cost_is_tokens_times_prices_and_zero_when_unknown():
    priced = load_settings(LLM_PRICE_INPUT_PER_MTOK=3, LLM_PRICE_OUTPUT_PER_MTOK=15)
    assert cost_usd(priced, 1_000_000, 100_000) == 4.5
    assert cost_usd(load_settings(), 10**6, 10**6) == 0.0


def test_window_fields_of_vllm_llamacpp_and_overflow_errors():
    models = {"object": "list", "data": [{"id": "org/qwen", "max_model_len": 32768}, {"id": "other"}]}
    assert vllm_max_model_len(models, "org/qwen") == 32768 and vllm_max_model_len(models, "qwen") == 32768
    assert vllm_max_model_len({"data": [{"id": "x"}]}, "x") is None
    assert llamacpp_n_ctx({"default_generation_settings": {"n_ctx": 8192}}) == 8192
    assert llamacpp_n_ctx({"total_slots": 1}) is None
    said = ("This model's maximum context length is 16384 tokens. However, you requested 17410 tokens "
            "(16386 in the messages, 1024 in the completion).")
    assert stated_context_limit(said) == 16384
    assert stated_context_limit("the request exceeds the available context size (n_ctx: 4096)") == 4096
