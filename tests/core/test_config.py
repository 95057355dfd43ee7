"""One loader reads every table of ``jaxcourse.toml``: each settings record has a rule for every
one of its keys, and the loader layers an assignment's own table over the course's."""

from __future__ import annotations

from dataclasses import fields

import pytest

from autograder.core import config
from autograder.grading.sandbox import limits
from classroom.exchange import policy
from classroom.hub import settings

RECORDS = [(limits.Limits(), limits.RULES), (policy.Policy(), policy.RULES), (settings.HubSettings(), settings.RULES)]


@pytest.mark.parametrize(("defaults", "rules"), RECORDS, ids=lambda r: type(r).__name__)
def test_every_setting_has_a_rule_its_default_keeps(defaults, rules):
    names = [f.name for f in fields(defaults)]
    assert list(rules) == names
    kept = [name for name in names if getattr(defaults, name) is None or rules[name].ok(getattr(defaults, name))]
    assert kept == names


def test_an_assignments_own_table_wins_and_a_bad_value_is_named_where_it_is(tmp_path):
    (tmp_path / config.CONFIG).write_text(
        "[sandbox]\ntimeout = 100\nmemory = '3g'\n[assignments.02_x.sandbox]\ntimeout = 900\n"
    )
    assert (limits.load(tmp_path, "02_x").timeout, limits.load(tmp_path, "02_x").memory) == (900, "3g")
    assert limits.load(tmp_path, "01_y").timeout == 100
    (tmp_path / config.CONFIG).write_text("[assignments.02_x.sandbox]\npids = 8\n")
    with pytest.raises(
        limits.LimitsError, match=r"\[assignments\.02_x\.sandbox\]: pids = 8 must be a whole number of at least 16"
    ):
        limits.load(tmp_path, "02_x")
