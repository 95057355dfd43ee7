"""A class's rules (per assignment) and the hub's settings, from jaxcourse.toml: defaults, the
course-wide table, the assignment's own, and a one-line refusal for anything else."""

from __future__ import annotations

import datetime

import pytest

from classroom.exchange import policy
from classroom.hub import settings


def _config(tmp_path, text):
    (tmp_path / "jaxcourse.toml").write_text(text)
    return tmp_path


def test_an_assignment_overrides_the_class_wide_rules(tmp_path):
    root = _config(
        tmp_path,
        '[class]\nmax_submissions = 5\nfeedback = "visible"\n'
        '[assignments.01_collectives.class]\ndue = "2026-12-01T23:59:00+00:00"\nlate = "refuse"\n',
    )
    rules = policy.load(root, "01_collectives")
    assert (rules.max_submissions, rules.feedback, rules.late) == (5, "visible", "refuse")
    assert rules.due_at() == datetime.datetime(2026, 12, 1, 23, 59, tzinfo=datetime.UTC)
    other = policy.load(root, "02_sharded_matmul")
    assert (other.max_submissions, other.due, other.late) == (5, None, "accept")
    assert policy.Policy(max_submission_size="1.5m").max_bytes == 1_572_864


@pytest.mark.parametrize(
    "text, message",
    [
        ("[class]\nmax_submissions = 0\n", "max_submissions = 0 must be a whole number of at least 1"),
        ('[class]\nfeedback = "some"\n', "feedback = 'some' must be one of visible, all, none"),
        ('[class]\ndue = "2026-12-01"\n', "due = '2026-12-01' must be an ISO 8601 time with its zone"),
        ('[class]\nmax_submission_size = "lots"\n', 'must be a size such as "20m"'),
        ("[class]\nretries = 3\n", "unknown key 'retries'"),
    ],
)
def test_a_bad_rule_is_refused_with_its_key(tmp_path, text, message):
    with pytest.raises(policy.PolicyError) as err:
        policy.load(_config(tmp_path, text), "01_collectives")
    assert message in str(err.value)


@pytest.mark.parametrize(
    "text, message",
    [
        ('[hub]\nmemory = "lots"\n', "memory = 'lots' must be a size such as \"4g\""),
        ("[hub]\nworkers = 0\n", "workers = 0 must be a whole number of at least 1"),
        ("[hub]\nspawner = 'x'\n", "unknown setting 'spawner'"),
    ],
)
def test_a_bad_hub_setting_is_refused(tmp_path, text, message):
    with pytest.raises(settings.SettingsError) as err:
        settings.load(_config(tmp_path, text))
    assert message in str(err.value)


def test_hub_settings_default_and_override(tmp_path):
    assert settings.load(tmp_path) == settings.HubSettings()
    got = settings.load(_config(tmp_path, '[hub]\nmemory = "2g"\nworkers = 3\n'))
    assert (got.memory, got.workers, got.cpus) == ("2g", 3, 2.0)
