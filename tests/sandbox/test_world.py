"""World files: the default world's fixed contract, and clear messages for broken files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World, WorldError
from authzkit.wire.errors import ConfigError


def test_the_default_world_holds_the_documented_values(world: World) -> None:
    clients = {c.client_id: c for c in world.clients.values()}
    assert clients["authzkit-demo"].client_secret == "sandbox-demo-secret"
    assert clients["authzkit-demo"].resource_server is True
    assert clients["authzkit-frontend"].client_secret == "sandbox-frontend-secret"
    assert clients["authzkit-frontend"].resource_server is False
    assert set(world.subjects) == {"alice", "bob"}
    for subject in world.subjects.values():
        assert set(subject.credentials) == {"pin", "login_password", "totp"}
        assert any(
            r.owner == subject.id and r.type == "srn:resource:account"
            for r in world.resources.values()
        )
    assert {a.name: list(a.required_types) for a in world.actions.values()} == {
        "show_account_balance_public": [],
        "transfer_funds": ["pin"],
        "change_contact_details": ["login_password"],
        "close_account": ["totp"],
        "add_payee": ["pin", "totp"],
    }
    assert World.default().to_json() == world.to_json()  # fixed ids: stable across loads


def test_reprs_show_no_secret(world: World) -> None:
    shown = repr(world) + repr(list(world.clients.values())) + repr(list(world.subjects.values()))
    for secret in ("sandbox-demo-secret", "1234", "alice-password"):
        assert secret not in shown


def test_world_json_round_trips_through_a_json_file(world: World, tmp_path: Path) -> None:
    path = tmp_path / "world.json"
    path.write_text(json.dumps(world.to_json()))
    assert World.load(path).to_json() == world.to_json()


def test_the_default_subject_is_the_first_that_owns_a_resource(world: World) -> None:
    assert world.default_subject() == "alice"  # the packaged world keeps its demo subject
    data = world.to_json()
    data["subjects"].insert(0, {"id": "dave", "credentials": {}})  # first, owning nothing
    for resource in data["resources"]:
        resource["owner"] = "bob"
    assert World.from_json(data).default_subject() == "bob"
    carol = _broken(
        subjects=[{"id": "carol", "credentials": {}}],
        resources=[{"id": "r-1", "type": "srn:resource:card", "owner": "carol"}],
    )
    assert World.from_json(carol).default_subject() == "carol"


def _broken(**changes: Any) -> dict[str, Any]:
    data = World.default().to_json()
    for key, value in changes.items():
        data[key] = value
    return data


def _client(**changes: Any) -> list[dict[str, Any]]:
    return [{"client_id": "c", "client_secret": "s", "resource_server": True, **changes}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "top level: expected an object"),
        (_broken(clients=[]), "clients: expected a non-empty list"),
        (
            {k: v for k, v in _broken().items() if k != "actions"},
            "actions: expected a non-empty list (missing)",
        ),
        (_broken(extra=1), "unknown key(s) extra"),
        (_broken(clients=["x"]), "clients[0]: expected an object"),
        (_broken(clients=_client(client_id="")), "clients[0].client_id: expected a non-empty"),
        (_broken(clients=_client(client_secret=None)), "clients[0].client_secret"),
        (
            _broken(clients=_client(resource_server="yes")),
            "clients[0].resource_server: expected true or false",
        ),
        (_broken(clients=_client() + _client()), "clients[1]: duplicate client_id 'c'"),
        (
            _broken(subjects=[{"id": "a", "credentials": {"face": "x"}}]),
            "subjects[0].credentials: unknown credential kind 'face'",
        ),
        (
            _broken(subjects=[{"id": "a", "credentials": {"totp": "not base32!"}}]),
            "subjects[0].credentials.totp: expected a base32 TOTP secret",
        ),
        (_broken(subjects=[{"id": "a", "credentials": {"totp": "JBSWY3DP"}}]), "at least 112 bits"),
        (
            _broken(resources=[{"id": "r", "type": "account", "owner": "alice"}]),
            "resources[0].type: expected srn:resource:<kind>",
        ),
        (
            _broken(resources=[{"id": "r", "type": "srn:resource:account", "owner": "carol"}]),
            "resources[0].owner: no subject 'carol'",
        ),
        (
            _broken(actions=[{"name": "a", "required_types": ["retina"]}]),
            "actions[0].required_types: unknown credential kind 'retina'",
        ),
        (
            _broken(actions=[{"name": "a", "required_types": "pin"}]),
            "actions[0].required_types: expected a list",
        ),
        (_broken(actions=[{"name": "a", "required_types": ["pin", "pin"]}]), "listed twice"),
    ],
)
def test_a_broken_world_names_the_problem(data: Any, message: str) -> None:
    with pytest.raises(WorldError) as raised:
        World.from_json(data)
    assert message in str(raised.value)
    assert isinstance(raised.value, ConfigError)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("w.toml", "clients = [", "not valid TOML"),
        ("w.json", "{", "not valid JSON"),
        ("w.txt", "{nope", "neither valid TOML nor JSON"),
    ],
)
def test_a_file_that_does_not_parse_names_the_file(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(WorldError, match=message) as raised:
        World.load(path)
    assert str(path) in str(raised.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match="no such file"):
        World.load(tmp_path / "absent.toml")


def test_a_world_without_a_resource_server_cannot_start() -> None:
    data = _broken(clients=_client(resource_server=False))
    with pytest.raises(ConfigError, match="resource_server"):
        Sandbox(world=data)


def test_a_sandbox_serves_a_custom_world(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text("""
[[clients]]
client_id = "rs"
client_secret = "rs-secret"
resource_server = true

[[subjects]]
id = "carol"
credentials = { pin = "9999" }

[[resources]]
id = "r-1"
type = "srn:resource:card"
owner = "carol"

[[actions]]
name = "freeze_card"
required_types = ["pin"]
""")
    with Sandbox(world=path, key_size=2048) as sandbox:
        assert (sandbox.client_id, sandbox.client_secret) == ("rs", "rs-secret")
        assert list(sandbox.world.actions) == ["freeze_card"]
        assert sandbox.session_token("carol").count(".") == 2
