"""A post-execute rewrite applied to a pending result, and a tool's value rendered as content."""

from __future__ import annotations

from typing import Any

from policyengine.tools.definition import ToolDefinition, content_problems, render_text
from policyengine.values.call import PendingResult
from policyengine.values.decisions import Accept, AcceptValue, PostDecision, Source
from policyengine.values.frozen import FrozenDict, FrozenList, copy_in, unfrozen


def apply_rewrite(arguments: Any, pending: PendingResult, rewrite: PostDecision, by: Source) -> PendingResult:
    """Apply accept(content) or accept(value) to a pending result, validating what changes; `by` made it.

    The same object back when the rewrite changes nothing (an accept without content). `arguments`: the call's,
    which the tool's render reads.
    """
    definition = pending.definition
    if isinstance(rewrite, AcceptValue):
        # Copied in: the listener keeps what it handed over and could write to it after rules checked it.
        value, problems = definition.validate_value(unfrozen(rewrite.value))
        if problems:
            raise ValueError(f"replaced value fails the output schema: {'; '.join(problems)}")
        content = render(arguments, definition, value)
        return PendingResult(value, content, definition, (*pending.rewrites, by))
    if isinstance(rewrite, Accept) and rewrite.content is not None:
        replaced = copy_in(rewrite.content)
        problems = content_problems(replaced)
        if problems:
            raise ValueError(f"replaced content is malformed: {'; '.join(problems)}")
        return PendingResult(pending.value, replaced, definition, (*pending.rewrites, by))
    return pending


def render(arguments: Any, definition: ToolDefinition, value: Any) -> FrozenList:
    """A tool's value as the content blocks the model sees, checked, frozen (the tool keeps no handle on them)."""
    if definition.render is render_text and type(value) is str:
        # What render_text, the check and freeze() make of a string, built directly (most tools return text).
        return FrozenList._of([FrozenDict._of({"type": "text", "text": value})])
    content = copy_in(definition.render(arguments, value))
    problems = content_problems(content)
    if problems:
        raise ValueError(f"render of tool {definition.name!r} returned bad content: {'; '.join(problems)}")
    return content  # type: ignore[no-any-return]
