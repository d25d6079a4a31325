"""Gradio chat history shapes → pipeline history turns."""

from __future__ import annotations

from ui.chat_history import history_turns, message_input


def test_normalized_gradio_history():
    history = [
        {"role": "user", "content": [{"type": "file", "file": {"path": "/tmp/a.xlsx"}}], "metadata": None},
        {"role": "user", "content": [{"type": "text", "text": "Sum column B"}], "metadata": None},
        {"role": "assistant", "content": [{"type": "text", "text": "calc"}], "metadata": {"title": "✅ calculator"}},
        {"role": "assistant", "content": [{"type": "text", "text": "60"}], "metadata": {}},
    ]
    assert history_turns(history) == [{"role": "user", "content": "[attached: a.xlsx]\nSum column B"},
                                      {"role": "assistant", "content": "60"}]


def test_api_history_with_plain_strings_and_path_dicts():
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello", "metadata": None},
               {"role": "user", "content": {"path": "/x/b.pdf"}}, {"role": "system", "content": "ignored"}]
    assert history_turns(history) == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                                      {"role": "user", "content": "[attached: b.pdf]"}]


def test_message_input_shapes():
    assert message_input("plain") == ("plain", None)
    assert message_input({"text": "q", "files": ["/a.png", "/b.png"]}) == ("q", "/a.png")
    assert message_input({"text": "q", "files": [{"path": "/c.mp3"}]}) == ("q", "/c.mp3")
    assert message_input({"text": None, "files": None}) == ("", None)
    assert history_turns(None) == []
