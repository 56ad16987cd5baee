"""Round eleven (set I remainder): secrets by shape - secret_tokens.py and the scanner's additions."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_tokens as tokens
from policyengine.arguments.redact import Redaction
from policyengine.arguments.secret_scanner import card_numbers, find_secrets, hide_cards
from support import scaled

_BODY = string.ascii_letters + string.digits


def _kinds(value: object) -> set[str]:
    return {f.kind for f in find_secrets(value)}


# --- prefixed tokens ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "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",
        "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",
        "fw_xMjFRztBQu493iwDIpozArai",
        "API-ZWAQKJ9700DATH3G1H1HC64S9U3",
        "hcaik_011wov58bod3jaseg24vwt1gn7bvztclzzw8wsoobomf0yk4g0cvr5b0wr",
        "sdk-12f32f45-f1fa-44e7-a2d2-eaae30f241b2",
        "FW_CURRENT=fw_yQzFF9vd0NbZECMghaZPiA1r",
        "headers=map[x-honeycomb-team:hcaik_01mfc55mqmhptw12qxjbvyk217y4wh0csp4j8yyecdmw9dk5upf1b3s45b]",
        "join with xrapjv.7n33h7jixvzvhfa3",
        "?content=keyji4fjH4v3BnNJa",
        "1c47b8b34cdf64ac249322b0ff975878-55d0c4e7-01bb58bd",
    ],
)
def test_a_vendor_token_no_list_names_is_found_by_its_shape(text: str) -> None:
    assert find_secrets(text), text


@pytest.mark.parametrize(
    "text",
    [
        "refund pi_3MtwBwLkdIwHu7ix28a3tqPa today",
        "msg_01XFDUDYJgAACzvnptvVoYEL and toolu_01A09q90qw90lq917835lq9",
        "cache key Linux-node-3f8a9b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8",
        "see dist/main-3f8a9b2c4d5e6f708192.js",
        "owner user-12f32f45-f1fa-44e7-a2d2-eaae30f241b2",
        "renamed test_function_name_with_many_words_2024",
        "merged fix-5299c75f181b870ba11bf82339504e63a2b49e58",
        "image@sha256:3f8a9b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8",
        "delivery c18c8398-7040-43c4-ad67-8bf4c724c749 retried",
    ],
)
def test_ids_hashes_and_names_with_a_prefix_are_no_tokens(text: str) -> None:
    assert not find_secrets(text), text


@settings(max_examples=scaled(200), deadline=None)
@given(
    st.text(string.ascii_lowercase, min_size=3, max_size=8).filter(lambda p: p not in tokens.ID_PREFIXES),
    st.sampled_from("_-"),
    st.text(string.ascii_letters, min_size=24, max_size=64),
    st.text(string.digits, min_size=8, max_size=16),
)
def test_an_unlisted_prefix_and_a_random_body_is_a_token(prefix: str, sep: str, letters: str, digits: str) -> None:
    """Property: any prefix no id list names, with a body of letters and 1 in 8 digits or more, is a token."""
    body = "".join(a + b for a, b in zip(letters[::2], digits.ljust(len(letters) // 2, "7"), strict=False))
    assert tokens.prefixed_token(prefix, None, body)
    assert tokens.prefixed_hits(f"use {prefix}{sep}{body} now")


@settings(max_examples=scaled(200), deadline=None)
@given(st.sampled_from(sorted(tokens.ID_PREFIXES)), st.text(_BODY, min_size=20, max_size=64))
def test_an_id_prefix_is_never_a_token(prefix: str, body: str) -> None:
    """Property: the benign filter holds whatever the body."""
    assert not tokens.prefixed_token(prefix, None, body)


def test_a_uuid_is_a_token_only_after_a_key_word() -> None:
    uuid = "12f32f45-f1fa-44e7-a2d2-eaae30f241b2"
    assert all(tokens.prefixed_token(word, None, uuid) for word in tokens.UUID_KEY_PREFIXES - tokens.ID_PREFIXES)
    assert not tokens.prefixed_token("order", None, uuid)
    assert not tokens.prefixed_token("team", None, uuid)


# --- capability URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://http-intake.logs.datadoghq.com/v1/input/26207de7c56d31c5b380502c765c4132",
        "https://logs-01.loggly.com/inputs/1666df0f-79ae-4e25-bbd3-a59b9d7eb1b9/tag/http/",
        "https://api.netlify.com/build_hooks/c57e1b3e9ba2beecfff391a3",
        "https://api.cloudflare.com/client/v4/pages/webhooks/deploy_hooks/25c779d5-a728-4d7e-8045-b757973a4100",
        "https://automation.atlassian.com/pro/hooks/2cafe6e5b5719e73f5590972c5e1b44b80519f84",
        "https://acme.app.n8n.cloud/webhook/5baade43-c4ee-422a-adc7-5be04509f37d",
        "https://api.vercel.com/v1/integrations/deploy/prj_S6o0UUjgVz4G2SRc3C1G/Yg9PjK9cHX",
        "https://acme-orders.azurewebsites.net/api/ProcessOrder?code=pqthXnnn7wmBML8AwmPKQyt5W3o6vbKvz59oWJRemLYrRLH78nlEr5==",
    ],
)
def test_a_capability_url_is_found_whatever_the_host(url: str) -> None:
    assert tokens.capability_hits(url), url
    assert find_secrets({"text": f"post here: {url}"})


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/mailer/commit/5299c75f181b870ba11bf82339504e63a2b49e58",
        "https://docs.n8n.io/integrations/builtin/core-nodes/n8n-nodes-base.webhook/",
        "https://app.netlify.com/sites/acme-docs/deploys/1e026dfedbfaf09ebd5745e0",
        "https://docs.example.com/webhooks/getting-started-with-webhooks-v2",
        "https://api.github.com/repos/o/r/hooks/123456789/deliveries",
        "https://example.com/search?page_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA",
    ],
)
def test_ids_and_pages_in_urls_are_no_capability(url: str) -> None:
    assert not tokens.capability_hits(url), url


def test_a_capability_url_keeps_its_host_and_hook_word_when_redacted() -> None:
    text = "endpoint: https://flows.example.com/webhook/7b6a5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d/run\n"
    (hit,) = tokens.capability_hits(text)
    _, start, end, _ = hit
    assert text[:start].endswith("/webhook/") and text[end:] == "\n"


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(_BODY, min_size=20, max_size=80))
def test_a_token_segment_after_a_hook_word_is_always_found(segment: str) -> None:
    """Property: a segment of token characters with a digit and a letter after /hooks/ is the capability."""
    segment = "9a" + segment
    assert tokens.token_segment(segment)
    assert tokens.capability_hits(f"https://h.example/hooks/{segment}")


# --- names, labels, hex, cards --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("x-honeycomb-team", True),
        ("x-cf-global", True),
        ("userkey", True),
        ("apptoken", True),
        ("x-request-id", False),
        ("x-amzn-requestid", False),
        ("x-idempotency-key", False),
        ("pubkey", False),
        ("monkey", False),
        ("key", False),
    ],
)
def test_custom_headers_and_glued_names(name: str, credential: bool) -> None:
    assert tokens.credential_name(name) is credential


def test_a_token_under_a_custom_header_is_found_and_an_id_is_not() -> None:
    assert find_secrets({"headers": {"x-honeycomb-team": "aa2b88fa91ab27231e3151f55ae5471b"}})
    assert find_secrets({"form": {"userkey": "4wwzno2n5f7bc055nsuqfs9zrtiv8t"}})
    assert not find_secrets({"headers": {"x-request-id": "aa2b88fa91ab27231e3151f55ae5471b"}})
    assert not find_secrets({"headers": {"x-github-event": "pull_request_review_comment"}})


@pytest.mark.parametrize(
    "text",
    [
        "jeton d'accès : 6379715848172822afdfb95d430213b90f26fccd",
        "访问令牌\uff1az6nouj07vv01uleit9jsyiusqu97ct30",  # a full-width colon
        "アクセストークンは 29b2998da8a5c71bae46ecea0127d325547a1b7a です",
        "токен доступа: cbfaf68a179cecdf938c00d144a74b41b5f5eb1b02fd51d3",
        "토큰: 29b2998da8a5c71bae46ecea0127d325547a1b7a",
    ],
)
def test_a_token_after_a_foreign_label_is_found(text: str) -> None:
    assert find_secrets(text), text


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("jenkins svc-deploy 1183f404d26c8b881d9f6a690c5987d40d", True),
        ("CF global for the zone: 8e35f826ac455717656884b51981819e00672", True),
        ("commit 1183f404d26c8b881d9f6a690c5987d40d", False),
        ("0x1183f404d26c8b881d9f6a690c5987d40d1", False),
        ("308203a130820289a003020102021445d0e13c", False),
    ],
)
def test_hex_of_no_digest_length(text: str, found: bool) -> None:
    assert bool(find_secrets(text)) is found


@pytest.mark.parametrize(
    ("text", "cards"),
    [
        ("pan 675968609726", ["675968609726"]),
        ("Refund goes back to your Maestro 5018 1167 6946.", ["501811676946"]),
        ("maestro,502007463685,01/29\n", ["502007463685"]),
        ("call +630404940326", []),
        ("arn:aws:iam::630404940326:role/x", []),
        ("account 630404940326", []),
        ("recovery code: 1234 5678 9012 3456", []),
        ("order 630404940327", []),  # Luhn fails
    ],
)
def test_twelve_digit_maestro(text: str, cards: list[str]) -> None:
    assert card_numbers(text) == cards


def test_a_twelve_digit_maestro_is_masked_in_strings_and_numbers() -> None:
    masked = hide_cards({"pan": "676200330766", "paid_with": 503833119228}, lambda v: "*")
    assert masked == {"pan": "*", "paid_with": "*"}


def test_a_value_masked_already_keeps_its_mask() -> None:
    mask = Redaction(keep_last=4)
    assert mask.hide("**** **** **** 9083") == "**** **** **** 9083"
    assert mask.hide("4539 1488 0343 6467") == "***************6467"


def test_a_namespaced_name_is_no_pair_and_a_secret_after_it_still_is() -> None:
    assert not find_secrets('"GET" "session:count"')
    assert not find_secrets("scopes: token:read")
    assert find_secrets('"SET" "session:Zk8q2LmP0xR7vT4n"')
    assert find_secrets("password:sandcastle")
