"""Generated bad inputs (hypothesis) through every command and every kind of file: no traceback, no hang, no
silent change. The kinds, their damages and what a right outcome is are in tests/inputs.py; the seeds (the 20
classes of issue 26) run in tests/test_input_classes.py, and bench/fuzz.py runs thousands of inputs."""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import inputs


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(kind=st.sampled_from(inputs.KINDS), seed=st.integers(0, 2**32 - 1))
def test_generated_inputs_are_refused_or_kept_as_written(kind: inputs.Kind, seed: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sparkdl-fuzz-"))
    try:
        case = inputs.generated_case(kind, folder, random.Random(seed))
        outcome = inputs.run_main(case.main, case.argv, timeout=30)
        problem = case.judge(outcome)
        data = (folder / kind.filename).read_bytes()[:300] if (folder / kind.filename).exists() else b""
        assert problem is None, f"{kind.name}: {problem}\ninput: {data!r}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_every_kind_accepts_its_good_example(tmp_path: Path) -> None:
    # the generator's starting points are right inputs: a mutation is what makes them bad
    for kind in inputs.KINDS:
        folder = tmp_path / kind.name
        case = kind.case(folder, inputs.write(folder / kind.filename, kind.good()))
        outcome = inputs.run_main(case.main, case.argv)
        assert outcome.code == 0 and case.judge(outcome) is None, (kind.name, outcome.err[-300:])


def test_mutations_damage_the_input():
    rng = random.Random(3)
    text = inputs._space_good()
    damaged = [inputs.mutate(rng, text) for _ in range(50)]
    assert sum(d != text.encode() for d in damaged) >= 45
    assert any(b"nan" in d or b"inf" in d for d in damaged)
