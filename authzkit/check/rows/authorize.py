"""Rows of SPEC §1 (authorize an action): shape A and the request fields SPEC lists."""

from __future__ import annotations

from typing import Any

from authzkit.check.probe import Probe
from authzkit.check.results import Finding, RowSpec
from authzkit.check.verdicts import body_of, differs, failed, passed
from authzkit.client.authorize import request_hash
from authzkit.client.transport import HttpResponse

SPEC_AUTHORIZE = "SPEC §1 Authorize an action"
SAMPLE_IP = "203.0.113.7"  # TEST-NET-3: never a real subject's address


def shape_a_differences(body: dict[str, Any], action: str) -> tuple[list[str], list[str]]:
    """``(published differences, failures)`` of a shape A body for ``action``."""
    published: list[str] = []
    problems: list[str] = []
    act = body.get("action")
    if not isinstance(act, dict):
        return published, ["no action object"]
    if act.get("name") != action:
        problems.append(f"action.name {act.get('name')!r}")
    if act.get("status") != "authorized":
        problems.append(f"action.status {act.get('status')!r}")
    if act.get("response") == "nil":
        published.append('action.response is the string "nil"')
    elif act.get("response", None) is not None:
        problems.append(f"action.response {act.get('response')!r}")
    ident = body.get("id")
    if isinstance(ident, str) and ident:
        published.append("id is a UUID string")
    elif not isinstance(ident, int) or isinstance(ident, bool):
        problems.append(f"id {ident!r}")
    optional = body.get("optional_actions")
    if isinstance(optional, dict):
        published.append("optional_actions is an object")
    elif not isinstance(optional, list):
        problems.append(f"optional_actions {optional!r}")
    return published, problems


def _authorized(response: HttpResponse, what: str) -> Finding:
    body = body_of(response)
    action = body.get("action") if isinstance(body.get("action"), dict) else {}
    if response.status == 200 and action.get("status") == "authorized":
        return passed(what)
    return failed("HTTP 200 with action.status authorized", response)


def shape_a(probe: Probe) -> Finding:
    action = probe.plain_action()
    response = probe.authorize(action)
    if response.status != 200:
        return failed("HTTP 200 (shape A)", response)
    published, problems = shape_a_differences(body_of(response), action)
    if problems:
        return failed("shape A", came="; ".join(problems))
    if published:
        return differs("; ".join(published))
    return passed("action.name/response null/status authorized, integer id, optional_actions []")


def all_fields(probe: Probe) -> Finding:
    action = probe.plain_action()
    response = probe.authorize(
        action, request_hash=request_hash({"amount": 1}), user_ip=SAMPLE_IP, context={}
    )
    return _authorized(
        response,
        "every SPEC field (action, subject.context with user_agent, "
        "request_hash, user_ip; top-level context) accepted",
    )


def request_hash_user_ip(probe: Probe) -> Finding:
    action = probe.plain_action()
    with_hash = probe.authorize(action, request_hash=request_hash(b"{}"))
    outcome = _authorized(with_hash, "")
    if outcome.verdict != "pass":
        return failed("request_hash accepted", with_hash)
    with_ip = probe.authorize(action, user_ip=SAMPLE_IP)
    outcome = _authorized(with_ip, "")
    if outcome.verdict != "pass":
        return failed("user_ip accepted", with_ip)
    return passed("request_hash (SHA-256, base64url) and user_ip each accepted")


ROWS = (
    RowSpec("authorize.shape_a", "plain action → 200 shape A", SPEC_AUTHORIZE, shape_a, 1),
    RowSpec(
        "authorize.all_fields", "every SPEC request field accepted", SPEC_AUTHORIZE, all_fields, 1
    ),
    RowSpec(
        "authorize.request_hash_user_ip",
        "request_hash and user_ip accepted",
        SPEC_AUTHORIZE,
        request_hash_user_ip,
        2,
    ),
)

__all__ = ["ROWS", "shape_a_differences"]
