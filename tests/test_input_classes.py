"""The classes of bad input, one case each (tests/inputs.py): an input error (exit 2) or the right value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import inputs

NAMES = sorted(inputs.SEEDS)


@pytest.mark.parametrize("seed", NAMES)
def test_seed_class(seed: str, tmp_path: Path) -> None:
    wrong = {}
    for case in inputs.SEEDS[seed](tmp_path):
        outcome = inputs.run_main(case.main, case.argv, timeout=60)
        problem = case.judge(outcome)
        if problem:
            wrong[case.name] = problem
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())


def test_space_limits_are_the_harness_limits():
    # sparkdl.schemas keeps the search space's ranges beside the other schemas; they must be the harness's own
    from harness.job import builtin
    from sparkdl.runspec import CLUSTER_RULES
    from sparkdl.schemas import SPACE_LIMITS

    for name in ("nodes", "executors", "executor_cores"):
        assert SPACE_LIMITS[name] == (CLUSTER_RULES[name].minimum, CLUSTER_RULES[name].maximum)
    for name in ("epochs", "batch_size", "learning_rate"):
        rule = builtin("birnn").rule(name)
        assert SPACE_LIMITS[name] == (rule.minimum, rule.maximum)


def test_config_reader_names_the_bad_byte_and_refuses_what_is_not_a_file(tmp_path):
    import os

    from sparkdl import config

    bad = tmp_path / "x.toml"
    bad.write_bytes(b"a = 1\nb = \"caf\xe9\"\n")
    with pytest.raises(config.InputFileError, match=r"byte 0xe9 at line 2, column 9"):
        config.read_toml(bad, "test file")
    os.mkfifo(tmp_path / "fifo")
    for path, word in ((tmp_path / "fifo", "not a regular file"), (tmp_path, "folder"),
                       ("a\x00b", "NUL"), ("x" * 5000, "characters long")):
        with pytest.raises(config.InputFileError, match=word):
            config.read_bytes(path, "test file")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 17 + "]" * 17)
    with pytest.raises(config.InputFileError, match="deep"):
        config.read_json(deep, "test file")
    deep.write_text("[" * 16 + "]" * 16)
    assert config.depth(config.read_json(deep, "test file")) == 16
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (config.MAX_CONFIG_BYTES + 1))
    with pytest.raises(config.InputFileError, match="bytes"):
        config.read_toml(big, "test file")
