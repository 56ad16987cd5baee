"""A LangChain chat model that calls the tools a test scripts, for the adapter's tests (the real agent loop runs)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedChat(BaseChatModel):
    """Calls the tools a human message lists (`[[name, args], ...]` or `[[name, args, id], ...]` as JSON); then "done".

    Without an id a call is `call-<its index>`; a test that calls across turns of one thread gives ids of its own.
    """

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            calls = [
                {"name": name, "args": args, "id": ids[0] if ids else f"call-{i}", "type": "tool_call"}
                for i, (name, args, *ids) in enumerate(json.loads(str(last.content)))
            ]
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=calls))])
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="done"))])
