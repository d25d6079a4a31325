"""The "Chat" tab: a multi-turn conversation with the agent, tool steps collapsed under each answer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr
from gradio.context import LocalContext

from config import Settings
from ui.chat import chat_stream, with_stop_note
from ui.chat_history import message_input
from ui.runtime import Runtime
from ui.session import Session
from ui.tab import FunctionTab
from visitors.access import profile_from_request
from visitors.endpoints import admit


@dataclass
class ChatTab:
    """The tab's components that events read or write."""

    chatbot: gr.Chatbot
    interface: gr.ChatInterface


def chat_turn(settings: Settings, runtime: Runtime, message: Any, history: list[Any],
              visitor: Session) -> Iterator[list[gr.ChatMessage]]:
    """One turn for the visitor whose OAuth session sent the request (the page's or an API client's)."""
    # ChatInterface hands its function no OAuthProfile: the login is read from this request's session
    # (gradio sets the request in a context variable for the event), else the one seen at page load.
    request = LocalContext.request.get(None)
    profile = profile_from_request(request) if request is not None else visitor.username
    if (refused := admit("chat", settings, profile).refusal) is not None:  # before any model request
        yield [gr.ChatMessage(role="assistant", content=refused)]
        return
    visitor.note_upload(message_input(message)[1])
    yield from chat_stream(runtime, message, history, readable=visitor.readable)


def build_chat_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime, session: gr.State) -> ChatTab:
    """The tab's chat interface (inside the caller's `gr.Blocks`); `/chat` for API clients."""
    with gr.Tab(CHAT_TAB.title, id=CHAT_TAB.id):
        def chat(message: Any, history: list[Any], visitor: Session) -> Iterator[list[gr.ChatMessage]]:
            yield from chat_turn(settings, runtime, message, history, visitor)

        chatbot = gr.Chatbot(height=560, elem_id="chatbot", placeholder="Ask anything; attach a file with 📎.")
        iface = gr.ChatInterface(
            fn=chat,
            multimodal=True,
            chatbot=chatbot,
            # stop_btn: gradio shows a Stop button only when the given textbox asks for one.
            textbox=gr.MultimodalTextbox(placeholder="Message (attach a file with 📎)…", file_count="single",
                                         stop_btn=True, elem_id="chat-input"),
            additional_inputs=[session],
            api_name="chat", concurrency_limit=settings.APP_CONCURRENCY, fill_height=False,
        )
        # Stop cancels the turn (ChatInterface wires that); this adds the note saying so, in the shown
        # conversation and in the history the next turn starts from.
        iface.textbox.stop(with_stop_note, [chatbot], [chatbot], api_visibility="private", queue=False).then(
            lambda shown: shown, [chatbot], [iface.chatbot_state], api_visibility="private", queue=False)
    return ChatTab(chatbot, iface)


CHAT_TAB = FunctionTab("💬 Chat", "chat", build_chat_tab)
"""The "Chat" tab, as `app.py` lists it."""
