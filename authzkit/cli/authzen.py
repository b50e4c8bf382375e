"""``authzkit authorize`` on an AuthZEN PDP, and ``authzkit search subject|resource|action``.

Who, what and on what: the command line, else ``AUTHZKIT_*``, else the embedded sandbox's
world. A deny is an answer (exit 0), a failing PDP exit 1, bad input exit 2 before any call
(docs/internals.md, "AuthZEN from the command line").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from authzkit.shared.options import argument_type
from authzkit.wire.authzen import SEARCH_KINDS, entity, property_value
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHZEN, DIALECTS

# A subject's type when neither --subject-type, AUTHZKIT_SUBJECT_TYPE nor a sandbox world
# says: the spec's examples' and the certification fixture's.
DEFAULT_SUBJECT_TYPE = "user"
AUTHZEN_ONLY = ("subject_type", "subject_property", "resource_property", "context")


def _key_value(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"expected K=V (a key, '=', a value), got {text!r}")
    return key.strip(), property_value(value)


key_value = argument_type(_key_value)


def add_entity_options(parser: argparse.ArgumentParser, *, with_subject: bool = True) -> None:
    """The AuthZEN options of ``authorize`` and ``search`` (``--subject`` and
    ``--resource-id``/``--resource-type`` are ``authorize``'s own already)."""
    if with_subject:
        parser.add_argument("--subject", default=None, metavar="ID", help="the subject's id")
        parser.add_argument("--resource-id", default=None, metavar="ID")
        parser.add_argument("--resource-type", default=None, metavar="TYPE")
    parser.add_argument(
        "--subject-type",
        default=None,
        metavar="TYPE",
        help=f"AuthZEN: the subject's type (default AUTHZKIT_SUBJECT_TYPE, else "
        f"{DEFAULT_SUBJECT_TYPE})",
    )
    for name, what in (
        ("--subject-property", "a subject property"),
        ("--resource-property", "a resource property"),
        ("--context", "a context member"),
    ):
        parser.add_argument(
            name,
            type=key_value,
            action="append",
            default=None,
            metavar="K=V",
            help=f"AuthZEN: {what}, V read as JSON when it parses, else a string (repeatable)",
        )


def given_authzen_options(args: argparse.Namespace) -> list[str]:
    """The AuthZEN-only options the command line gave (refused on another dialect)."""
    return ["--" + n.replace("_", "-") for n in AUTHZEN_ONLY if getattr(args, n, None)]


def only_on_authzen(options: list[str]) -> str:
    """``--context is for an AuthZEN PDP`` (or ``… are …``): a refusal's start."""
    return f"{', '.join(options)} {'is' if len(options) == 1 else 'are'} for an AuthZEN PDP"


# -- connecting --------------------------------------------------------------------------


def connect_in_dialect(args: argparse.Namespace, settings: Any, dialect: str | None) -> Any:
    """The connection of a command whose ``--dialect`` also says what a URL speaks: the
    embedded sandbox in that dialect, or the configured service (``--key-size`` is still
    refused there)."""
    from authzkit.shared.connection import connect
    from authzkit.shared.extras import require
    from authzkit.shared.options import sandbox_options

    settings = replace(settings, dialect=dialect or settings.dialect)
    key_size = getattr(args, "key_size", None)
    sandbox_options(argparse.Namespace(key_size=key_size, dialect=None), settings)
    started: dict[str, Any] = {"dialect": settings.dialect or DIALECTS[0]}
    if key_size is not None:
        started["key_size"] = key_size
    if settings.uses_sandbox:
        require("sandbox", f"authzkit {args.command} without AUTHZKIT_BASE_URL")
    return connect(settings, **started)


# -- what is asked -------------------------------------------------------------------------


def _world(connection: Any) -> Mapping[str, Any]:
    """The AuthZEN world of the sandbox ``connection`` runs on (``{}`` on any other service)."""
    world: Any = (
        getattr(connection.sandbox, "world", None) if connection.sandbox is not None else None
    )
    found = world.to_json() if world is not None and hasattr(world, "to_json") else {}
    return found if isinstance(found, Mapping) and "rules" in found else {}


def _first(connection: Any, kind: str) -> Mapping[str, Any]:
    listed = _world(connection).get(kind) or [{}]
    return listed[0] if isinstance(listed[0], Mapping) else {}


def _properties(
    given: list[tuple[str, Any]] | None, configured: Mapping[str, Any]
) -> dict[str, Any]:
    return {**configured, **dict(given or [])}


def _needed(value: Any, option: str, variable: str) -> Any:
    if not value:
        what = option.lstrip("-").replace("-", " ")
        raise ConfigError(f"name the {what}: {option} or {variable}")
    return value


def subject_of(
    connection: Any, args: argparse.Namespace, *, with_id: bool = True
) -> dict[str, Any]:
    settings, world = connection.settings, _first(connection, "subjects")
    id_ = args.subject or settings.subject_id or world.get("id")
    return entity(
        args.subject_type or settings.subject_type or world.get("type") or DEFAULT_SUBJECT_TYPE,
        _needed(id_, "--subject", "AUTHZKIT_SUBJECT_ID") if with_id else None,
        _properties(args.subject_property, settings.subject_properties),
    )


def resource_of(
    connection: Any, args: argparse.Namespace, *, with_id: bool = True
) -> dict[str, Any]:
    settings, world = connection.settings, _first(connection, "resources")
    id_ = args.resource_id or settings.resource_id or world.get("id")
    type_ = args.resource_type or settings.resource_type or world.get("type")
    return entity(
        _needed(type_, "--resource-type", "AUTHZKIT_RESOURCE_TYPE"),
        _needed(id_, "--resource-id", "AUTHZKIT_RESOURCE_ID") if with_id else None,
        _properties(args.resource_property, settings.resource_properties),
    )


def action_of(connection: Any, option: str | None) -> str:
    found = option or connection.settings.plain_action or _first(connection, "actions").get("name")
    return str(_needed(found, "--action", "AUTHZKIT_PLAIN_ACTION"))


def context_of(args: argparse.Namespace) -> dict[str, Any] | None:
    return dict(args.context) if args.context else None


# -- authorize -----------------------------------------------------------------------------


def authorize(connection: Any, args: argparse.Namespace) -> int:
    """One evaluation; its first line starts with ``authorized`` or ``denied``."""
    subject, resource = subject_of(connection, args), resource_of(connection, args)
    outcome = connection.client.evaluate(
        args.action, subject=subject, resource=resource, context=context_of(args)
    )
    print(
        f"{outcome.status}: {subject['type']} {subject['id']}, {args.action}, "
        f"{resource['type']} {resource['id']}"
    )
    if outcome.context:
        print("context: " + json.dumps(dict(outcome.context), sort_keys=True))
    return 0


# -- search --------------------------------------------------------------------------------


def _results(connection: Any, args: argparse.Namespace) -> Any:
    client, context = connection.client, context_of(args)
    if args.kind == "subject":
        return client.search_subjects(
            subject=subject_of(connection, args, with_id=False),
            action=action_of(connection, args.action),
            resource=resource_of(connection, args),
            context=context,
            limit=args.limit,
        )
    if args.kind == "resource":
        return client.search_resources(
            subject=subject_of(connection, args),
            action=action_of(connection, args.action),
            resource=resource_of(connection, args, with_id=False),
            context=context,
            limit=args.limit,
        )
    return client.search_actions(
        subject=subject_of(connection, args),
        resource=resource_of(connection, args),
        context=context,
        limit=args.limit,
    )


def run_search(args: argparse.Namespace) -> int:
    from authzkit.wire.config import Settings

    settings = Settings.from_env()
    with connect_in_dialect(args, settings, AUTHZEN) as connection:
        for result in _results(connection, args):
            if args.json:
                print(json.dumps(result, sort_keys=True))
            else:
                print(result["name"] if args.kind == "action" else result["id"])
    return 0


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 1:
        raise ConfigError(f"a page size is a whole number >= 1, got {text!r}")
    return value


def register(subparsers: Any) -> None:
    """Add ``authzkit search``."""
    search = subparsers.add_parser(
        "search",
        help="AuthZEN search: the subjects, resources or actions a decision would permit",
        description="Every page is followed; one result per line (the id, or an action's "
        "name; --json prints each whole).",
    )
    search.add_argument("kind", choices=SEARCH_KINDS, help="what to search for")
    search.add_argument(
        "--action",
        default=None,
        metavar="NAME",
        help="the action (subject and resource searches; default AUTHZKIT_PLAIN_ACTION)",
    )
    add_entity_options(search)
    search.add_argument(
        "--limit", type=argument_type(_limit), default=None, metavar="N", help="page size asked"
    )
    search.add_argument("--json", action="store_true", help="print each result as JSON")
    search.add_argument(
        "--dialect",
        choices=(AUTHZEN,),
        default=None,
        help="what the service speaks (search is AuthZEN's; the default)",
    )
    search.set_defaults(run=run_search, key_size=None)


__all__ = [
    "DEFAULT_SUBJECT_TYPE",
    "action_of",
    "add_entity_options",
    "authorize",
    "connect_in_dialect",
    "context_of",
    "given_authzen_options",
    "key_value",
    "only_on_authzen",
    "register",
    "resource_of",
    "run_search",
    "subject_of",
]
