"""What a call and its tool's definition may not change on their way through the stages: their seals."""

from __future__ import annotations

import dataclasses
from operator import attrgetter, is_
from typing import Any

from policyengine.tools.definition import ToolDefinition
from policyengine.values.call import Dispatch, ToolCall
from policyengine.values.frozen import FrozenDict, FrozenList, Snapshot, duplicate, identical

_CALL_FIELDS = tuple(f.name for f in dataclasses.fields(ToolCall))
_CONTAINERS = (FrozenDict, FrozenList)
_call_fields = attrgetter(*_CALL_FIELDS)


class Seal:
    """The call exactly as policy saw it, kept where no stage can reach it, to tell any later write.

    Taken before the first listener, guard, approval service or wrapper written in Python gets
    the call (packs are the engine's own code and never write). It records the call's fields,
    and every container of the document rules read (the arguments among them) by identity, and
    copies the arguments for the result: the result and the audit record carry them whatever
    is written to the call.
    """

    __slots__ = ("_call", "_fields", "_frozen", "_token", "agent", "arguments", "call_id", "cwd", "name")

    def __init__(self, call: ToolCall) -> None:
        self._call = call
        self._fields: tuple[Any, ...] = _call_fields(call)
        self.call_id, self.name, self.agent, self.cwd = call.call_id, call.name, call.agent, call.cwd
        self.arguments: FrozenDict = duplicate(call.arguments)
        document = call.document
        inside = type(document) is FrozenDict and dict.get(document, "arguments") is call.arguments
        self._frozen = Snapshot(document) if inside else Snapshot(document, call.arguments)
        # The token too: a guard may read it, so it is held to what policy saw like the arguments.
        self._token = Snapshot(call.token) if type(call.token) in _CONTAINERS else None

    def changed(self) -> str | None:
        """What of the call changed since it was sealed ("the call's arguments", "call.name"...); None if nothing."""
        now = _call_fields(self._call)
        if not all(map(is_, now, self._fields)):
            return ", ".join(f"call.{n}" for n, a, b in zip(_CALL_FIELDS, now, self._fields, strict=True) if a is not b)
        if not self._frozen.intact():
            # Only to say what changed: the arguments, unless they still hold exactly what the copy holds.
            if identical(self._call.arguments, self.arguments):
                return "the call document rules read"
            return "the call's arguments"
        if self._token is not None and not self._token.intact():
            return "the call's token"
        return None

    def what_changed(self) -> str | None:
        """changed(), said as what the writer did (for a reason naming the writer); None if nothing."""
        what = self.changed()
        return None if what is None else f"changed {what} after policy saw it"


class DefinitionSeal:
    """A tool's definition as a call found it: tells, and undoes, any write to it made through the call.

    Wrappers and post-execute listeners get the definition (`dispatch.definition`,
    `result.definition`); it is shared by every later call of the tool, in every registry that
    holds it, so a write to it (`object.__setattr__(definition, "roles", None)`, a base-class
    write to its roles) would outlive the call. It is put back, and the call fails closed.
    """

    __slots__ = ("_attributes", "_definition", "_frozen", "_kind")

    def __init__(self, definition: ToolDefinition) -> None:
        self._definition, self._kind = definition, type(definition)
        self._attributes = dict(vars(definition))
        self._frozen = Snapshot(*(v for v in self._attributes.values() if type(v) in _CONTAINERS))

    def what_changed(self) -> str | None:
        """What was written to the definition since it was sealed (and now undone); None if nothing."""
        definition, attributes = self._definition, self._attributes
        now = vars(definition)
        same = type(definition) is self._kind and len(now) == len(attributes)
        if same and all(now.get(k, _MISSING) is v for k, v in attributes.items()) and self._frozen.intact():
            return None
        object.__setattr__(definition, "__class__", self._kind)
        now.clear()
        now.update(attributes)
        self._frozen.restore()
        return f"changed the definition of tool {attributes.get('name')!r} (put back)"


_MISSING = object()


def swapped(dispatch: Any, call: ToolCall, definition: ToolDefinition) -> str | None:
    """What a dispatch handed to next() carries besides a new signal; None if nothing."""
    if type(dispatch) is not Dispatch:
        what = f"a {type(dispatch).__name__}, not the Dispatch it was given"
    elif dispatch.definition is not definition:
        what = f"tool {getattr(dispatch.definition, 'name', dispatch.definition)!r} for a call to {call.name!r}"
    elif dispatch.call is not call:
        what = "another call than the one policy decided on"
    else:
        return None
    return f"handed next() {what}; a wrapper may change only the signal"
