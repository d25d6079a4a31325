"""The "Chat" tab: a multi-turn conversation with the agent, tool steps collapsed under each answer."""

from __future__ import annotations

import gradio as gr

from config import Settings
from ui.access import refusal_for
from ui.chat import chat_stream
from ui.chat_history import message_input
from ui.runtime import Runtime
from ui.session import Session


def build_chat_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime, session: gr.State) -> None:
    """The tab's chat interface (inside the caller's `gr.Blocks`); `/chat` for API clients."""
    with gr.Tab("💬 Chat", id="chat"):
        def chat(message, history, visitor: Session):
            # ChatInterface hands its function no OAuthProfile: the login recorded when the page loaded counts.
            if (refused := refusal_for(settings, visitor.username)) is not None:  # before any model request
                yield [gr.ChatMessage(role="assistant", content=refused)]
                return
            visitor.note_upload(message_input(message)[1])
            yield from chat_stream(runtime, message, history, readable=visitor.readable)

        gr.ChatInterface(
            fn=chat,
            multimodal=True,
            chatbot=gr.Chatbot(height=560, elem_id="chatbot", placeholder="Ask anything; attach a file with 📎."),
            # stop_btn: gradio shows a Stop button only when the given textbox asks for one.
            textbox=gr.MultimodalTextbox(placeholder="Message (attach a file with 📎)…", file_count="single",
                                         stop_btn=True,
                                         elem_id="chat-input"),
            additional_inputs=[session],
            api_name="chat", concurrency_limit=settings.APP_CONCURRENCY, fill_height=False,
        )
