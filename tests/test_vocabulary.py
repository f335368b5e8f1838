"""One vocabulary for every command, read from what a user reads: every subcommand's ``--help``.

The same flag has the same type (metavar or choices) in every command, every option has a help line,
the shared options have the vocabulary's form (sparkdl/options.py), the former spellings are gone from
the help and refused with the current one, and nothing a user reads (README.md, docs/, the help texts,
a generated report) names the project's history instead of its papers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from sparkdl.cli import run_cli
from sparkdl.commands import COMMANDS, find

ROOT = Path(__file__).resolve().parent.parent
OPTION = re.compile(r"^  (-\S.*?)(?:\s{2,}(\S.*))?$")
POSITIONAL = re.compile(r"^  ([A-Za-z][\w|.-]*)(?:\s{2,}(\S.*))?$")
SUBCOMMANDS = re.compile(r"^positional arguments:\n  \{([\w,-]+)\}", re.M)
HISTORY = re.compile(r"seed 00[0-4]|issue [0-9]+", re.I)

#: Commands whose positional argument is the campaign they read.
READS_A_CAMPAIGN = ("anova", "rsm", "desirability", "predict", "pareto", "report", "mlflow", "history", "batch",
                    "epochs", "queueing from-results", "queueing cpu-disk")
#: Commands (with their subcommands) that print a model's result: text, json and csv, the same three everywhere.
READS_A_RESULT = ("anova", "rsm", "desirability", "predict", "plan", "pareto", "logparse", "queueing")


def help_of(*words: str) -> str:
    done = subprocess.run([sys.executable, "-m", "sparkdl", *words, "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "1000", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"sparkdl {' '.join(words)} --help exits {done.returncode}: {done.stderr[-300:]}"
    return done.stdout


@cache
def helps() -> dict[str, str]:
    """``{"anova": its --help, "queueing mmk": ..., ...}``: every command and subcommand."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        top = dict(zip([c.name for c in COMMANDS], pool.map(help_of, [c.name for c in COMMANDS])))
        subs = [(name, s) for name, text in top.items()
                if (m := SUBCOMMANDS.search(text)) for s in m.group(1).split(",")]
        out = {name: text for name, text in top.items() if not any(n == name for n, _ in subs)}
        out.update(zip([f"{n} {s}" for n, s in subs], pool.map(lambda ns: help_of(*ns), subs)))
    return out


def entries(text: str, pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    """(spec, help) of each entry a help section lists; a help on the next line (a long spec) is taken too."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = pattern.match(line)
        if m:
            more = lines[i + 1] if i + 1 < len(lines) else ""
            found.append((m.group(1), m.group(2) or (more.strip() if re.match(r"^\s{6,}\S", more) else "")))
    return found


@cache
def options() -> dict[str, dict[str, tuple[str, str]]]:
    """``{command: {"--flag": (metavar or {choices}, help)}}``."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for command, text in helps().items():
        flags = {}
        for spec, help_ in entries(text.split("\noptions:")[-1], OPTION):
            for part in spec.split(", "):
                flag, _, meta = part.partition(" ")
                if flag.startswith("--"):
                    flags[flag] = (meta, help_)
        out[command] = flags
    return out


def positionals(command: str) -> list[tuple[str, str]]:
    section = helps()[command].split("positional arguments:")[1].split("\noptions:")[0] \
        if "positional arguments:" in helps()[command] else ""
    return [(name, h) for name, h in entries(section, POSITIONAL) if not name.startswith("{")]


def test_every_command_and_subcommand_is_read():
    assert len(helps()) >= len(COMMANDS) + 10  # the queueing, runtime and cluster subcommands
    assert sum(len(o) for o in options().values()) > 250


def test_every_option_has_a_help_line():
    bare = [f"{command} {flag}" for command, flags in options().items() for flag, (_, h) in flags.items() if not h]
    assert bare == []
    bare = [f"{command} {name}" for command in helps() for name, h in positionals(command) if not h]
    assert bare == []


def _type(meta: str) -> str:
    """The type a metavar shows: a list (``K,...``) has its element's type."""
    return meta.removesuffix(",...")


def test_the_same_flag_has_the_same_type_everywhere():
    seen: dict[str, dict[str, str]] = {}
    for command, flags in options().items():
        for flag, (meta, _) in flags.items():
            seen.setdefault(flag, {})[command] = meta
    different = {}
    for flag, by_command in seen.items():
        metas = set(by_command.values())
        choices = [set(m.strip("{}").split(",")) for m in metas if m.startswith("{")]
        if choices:  # choices: one set holds all the others
            if len(choices) != len(metas) or not any(all(c <= big for c in choices) for big in choices):
                different[flag] = by_command
        elif len({_type(m) for m in metas}) > 1:
            different[flag] = by_command
    assert different == {}


def test_the_shared_options_have_the_vocabularys_form():
    forms = {"--job": "NAME|FILE", "--out": "PATH", "--budget": "DURATION", "--seed": "SEED", "--cost": "COST",
             "--response": "COLUMN"}
    for command, flags in options().items():
        for flag, meta in forms.items():
            if flag in flags:
                assert flags[flag][0] == meta, f"sparkdl {command} {flag} {flags[flag][0]}: the vocabulary's is {meta}"
        if "--seed" in flags:
            assert flags["--seed"][1].startswith("seed of "), f"sparkdl {command} --seed: say what it seeds"
        if "--format" in flags:
            meta, help_ = flags["--format"]
            shown = meta.strip("{}").split(",")
            assert shown[0] == "text" and set(shown) <= {"text", "json", "csv"} and "(default text)" in help_, command
    formats = [c for c, f in options().items() if "--format" in f]
    assert {"anova", "pareto", "plan", "logparse", "rsm", "predict", "desirability"} <= set(formats)
    # every command that reads a result renders it the three ways (models.summary.Summary)
    results = [c for c in formats if c.split()[0] in READS_A_RESULT]
    assert [c for c in results if options()[c]["--format"][0] != "{text,json,csv}"] == [] and len(results) >= 12
    for command in READS_A_CAMPAIGN:
        names = [name for name, _ in positionals(command)]
        assert names == ["CAMPAIGN"], f"sparkdl {command} reads a campaign as {names}: the vocabulary's is CAMPAIGN"
    assert {c for c, f in options().items() if "--job" in f} >= {"submit", "search", "lr", "concurrent", "batch",
                                                                  "epochs"}


def test_the_former_spellings_are_gone_from_every_help():
    for command, flags in options().items():
        assert not {"--campaign", "--network", "--model"} & set(flags), command
        assert "-o" not in re.findall(r"(?<![\w-])-o\b", helps()[command]), command
    # --epochs is a number (the epochs of the jobs a command runs), never a switch: the switch is --per-epoch
    for command, flags in options().items():
        if "--epochs" in flags:
            assert flags["--epochs"][0] == "EPOCHS", command


def _refusal(module: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    import importlib

    main = importlib.import_module(module).main
    assert run_cli(main, argv) == 2, f"{module} {argv} is not refused"
    return capsys.readouterr().err.strip()


@pytest.mark.parametrize("module, argv, fix", [
    ("optimize.cli.batch", ["--campaign", "runs/c", "--slo", "10"], "--campaign runs/c is now the positional CAMPAIGN"),
    ("optimize.cli.batch", ["runs/c", "--network", "lenet"], "--network lenet is now --job lenet"),
    ("optimize.cli.epochs", ["--campaign", "runs/c", "--budget", "60"], "--campaign runs/c is now the positional CAMPAIGN"),
    ("optimize.cli.lr", ["--model", "lenet", "--out", "o"], "--model lenet is now --job lenet"),
    ("optimize.cli.concurrent", ["--model", "lenet", "--out", "o"], "--model lenet is now --job lenet"),
    ("optimize.cli.pareto", ["runs/c", "--reference", "a=1"], "--reference a=1 is now --reference-point a=1"),
    ("optimize.search.__main__", ["--start", "random"], "--start random is now --startup random"),
    ("report.cli", ["runs/c", "-o", "r.html"], "-o r.html is now --out r.html"),
    ("logparse.cli", ["--epochs", "x.out"], "--epochs is now --per-epoch"),
    ("harness.cli.ingest", ["--epochs", "logs/"], "--epochs is now --per-epoch"),
    ("models.desirability.cli", ["runs/c", "--confirm", "c.csv"], "--confirm c.csv is now --out c.csv"),
    ("models.desirability.cli", ["runs/c", "--response", "a:max"], "--response a:max is now --objective a:max"),
    ("harness.design.__main__", ["--alpha", "orthogonal"], "--alpha orthogonal is now --axial orthogonal"),
    ("cluster.cli", ["start", "--timeout", "9"], "--timeout 9 is now --wait 9"),
])
def test_a_former_spelling_is_refused_with_the_current_one(module, argv, fix, capsys):
    err = _refusal(module, argv, capsys)
    assert fix in err and len(err.splitlines()) == 1, err


def test_the_cost_names_say_what_they_compute():
    text = options()["anova"]["--cost"][1]
    assert "time_per_squared_percent (the default, T/(100 A)^2)" in text and "pct2" not in text


@pytest.fixture(scope="module")
def generated_report() -> str:
    from report.build import build_report

    return build_report(ROOT / "examples" / "rsm_lenet", plots=False, generated="fixed").html


def test_nothing_a_user_reads_names_the_projects_history(generated_report):
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in pages for m in HISTORY.finditer(p.read_text())]
    found += [f"sparkdl {c} --help: {m.group(0)}" for c, text in helps().items() for m in HISTORY.finditer(text)]
    found += [f"sparkdl --help: {m.group(0)}" for m in HISTORY.finditer(help_of())]
    found += [f"the report: {m.group(0)}" for m in HISTORY.finditer(generated_report)]
    assert found == []
    assert "No phase columns" in generated_report  # the report's wording about missing data is part of the check
    assert "the DoE-tool report" in generated_report or "surface" not in generated_report
    assert (ROOT / "docs" / "references.md").is_file() and "Marinos 2021" in (ROOT / "docs" / "references.md").read_text()


@pytest.mark.parametrize("words", [[c.name] for c in COMMANDS] + [["queueing", "mmk"], ["cluster", "start"]])
def test_a_long_option_is_taken_only_as_spelled_never_by_a_prefix(words, capsys):
    """argparse would take a prefix of a long option for it (``--hel`` for ``--help``, ``--repeat`` for ``--repeats``,
    ``--seed`` for ``--seeds``): a word would then mean one thing in one command and another in the next."""
    import importlib

    command = find(words[0])
    assert command is not None
    main = importlib.import_module(command.module).main
    try:  # taken as --help, it would print the help and exit 0 before anything else is checked
        code = run_cli(main, [*words[1:], "--hel"])
    except SystemExit as usage:  # argparse's own refusal
        code = usage.code
    out, err = capsys.readouterr()
    assert code == 2 and "options:" not in out and "error: " in err, (words, out, err)


def test_every_bench_parses_its_options_as_the_commands_do():
    """The benches' parsers are the commands' (sparkdl.options.CommandParser): no option taken by a prefix."""
    for script in sorted((ROOT / "bench").glob("*.py")):
        text = script.read_text()
        assert "argparse.ArgumentParser(" not in text, f"{script.name}: use sparkdl.options.CommandParser"
