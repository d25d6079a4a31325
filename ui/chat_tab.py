"""The "Chat" tab: a multi-turn conversation with the agent, tool steps collapsed under each answer."""

from __future__ import annotations

import gradio as gr

from config import Settings
from ui.chat import chat_stream
from ui.runtime import Runtime


def build_chat_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime) -> None:
    """The tab's chat interface (inside the caller's `gr.Blocks`); `/chat` for API clients."""
    with gr.Tab("💬 Chat", id="chat"):
        def chat(message, history):
            yield from chat_stream(runtime, message, history)

        gr.ChatInterface(
            fn=chat,
            multimodal=True,
            chatbot=gr.Chatbot(height=560, elem_id="chatbot", placeholder="Ask anything; attach a file with 📎."),
            # stop_btn: gradio shows a Stop button only when the given textbox asks for one.
            textbox=gr.MultimodalTextbox(placeholder="Message (attach a file with 📎)…", file_count="single",
                                         stop_btn=True,
                                         elem_id="chat-input"),
            api_name="chat", concurrency_limit=settings.APP_CONCURRENCY, fill_height=False,
        )
