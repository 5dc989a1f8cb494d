"""The agent-name rule, written once in `lobug.names` and asked by every surface."""

from __future__ import annotations

import re

import pytest

from lobug.names import AGENT_NAME_SCHEMA, InvalidAgentName, agent_name, is_agent_name


@pytest.mark.parametrize("name", ["lobug", "a.b", ".hidden", "x..", "me@home:1", "x" * 64])
def test_names_within_the_rule_pass(name: str) -> None:
    assert agent_name(name) == name and is_agent_name(name)


@pytest.mark.parametrize("name", [".", "..", "...", "", "a/b", "a b", "x" * 65, "alex\n", 7, None])
def test_names_breaking_the_rule_are_refused(name: object) -> None:
    assert not is_agent_name(name)
    with pytest.raises(InvalidAgentName):
        agent_name(name)


@pytest.mark.parametrize("name", ["lobug", ".a", "..", ".", "a/b", "x" * 65, ""])
def test_the_json_schema_says_the_same(name: str) -> None:
    schema = AGENT_NAME_SCHEMA
    fits = (
        schema["minLength"] <= len(name) <= schema["maxLength"]
        and re.fullmatch(schema["pattern"].strip("^$"), name) is not None
    )
    assert fits == is_agent_name(name)
