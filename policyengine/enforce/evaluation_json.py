"""The one JSON form of an `Evaluation`: what decided a call, and what post-execute made of its result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policyengine.values.decisions import Source
from policyengine.values.frozen import thaw

if TYPE_CHECKING:  # the hook builds records without loading the registry behind `evaluate`
    from policyengine.enforce.evaluate import Evaluation

__all__ = ["decision_json", "evaluation_json", "source_json"]


def source_json(source: Source | None) -> dict[str, Any]:
    """Who decided, as records name it: the rule id (None for a pack's default), its pack and the pack's digest."""
    return {
        "rule": source.rule_id if source else None,
        "pack": source.pack if source else None,
        "digest": source.digest if source else None,
    }


def decision_json(evaluation: Evaluation) -> dict[str, Any]:
    """The decision part: decision, stage, rule, pack, digest, reason."""
    fields: dict[str, Any] = {
        "decision": evaluation.decision.value,
        "stage": evaluation.stage.value if evaluation.stage else None,
    }
    fields.update(source_json(evaluation.source))
    fields["reason"] = evaluation.reason
    return fields


def evaluation_json(evaluation: Evaluation) -> dict[str, Any]:
    """The whole evaluation as plain JSON: the decision, and once reviewed post, rewrites, feedback, value, content."""
    fields = decision_json(evaluation)
    fields["rewrites"] = [s.name for s in evaluation.rewrites]
    if evaluation.post is not None:
        fields["post"] = evaluation.post.value
        fields["feedback"] = evaluation.feedback
        blocked = evaluation.post.value == "blocked"
        fields["value"] = None if blocked else thaw(evaluation.value)
        fields["content"] = thaw(evaluation.content)
    return fields
