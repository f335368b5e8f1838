"""The README and docs/ as a newcomer reads them: every relative link resolves, every command they
show (`sparkdl COMMAND ...` or `python -m MODULE ...`) exists and is given only options it has, every
`--dry-run` command runs as written (exit 0) from the repository's root, and the pages teach
`sparkdl COMMAND`."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]*(?:python -m|sparkdl) [^`\n]*)`")
MODULE_CALL = re.compile(r"(?:^|\s)(?:(?:\.venv/bin/)?python3? -m ([a-z_][\w.]*)|sparkdl ([a-z][a-z-]*))(.*)$")


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def links() -> list[tuple[Path, str]]:
    found = []
    for page in PAGES:
        text = FENCE.sub("", page.read_text())
        found += [(page, target) for target in LINK.findall(text) if not re.match(r"[a-z]+://|mailto:", target)]
    return found


def commands() -> list[tuple[Path, str]]:
    """Every `python -m ...` command a page shows: in shell blocks (continuations joined, comments and a
    leading `$ ` dropped) and in inline code."""
    found: list[tuple[Path, str]] = []
    for page in PAGES:
        text = page.read_text()
        for lang, block in FENCE.findall(text):
            if lang not in ("sh", "bash", "console", ""):
                continue
            for line in block.replace("\\\n", " ").splitlines():
                line = re.sub(r"\s#\s.*$|^\s*#.*$", "", line).strip().removeprefix("$ ")
                if MODULE_CALL.search(line):
                    found.append((page, line))
        found += [(page, code) for code in INLINE.findall(FENCE.sub("", text)) if MODULE_CALL.search(code)]
    return found


def invocation(line: str) -> tuple[tuple[str, ...], str]:
    """``("harness.submit",)`` for ``python -m harness.submit ...``, ``("sparkdl", "submit")`` for
    ``sparkdl submit ...``; and the rest of the line."""
    module, command, rest = MODULE_CALL.search(line).groups()
    return ((module,) if module else ("sparkdl", command)), rest


@cache
def help_text(module: str, *sub: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", module, *sub, "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    return done.returncode, done.stdout + done.stderr


def command_help(prefix: tuple[str, ...], rest: str) -> tuple[int, str]:
    """The help of ``python -m module`` (or ``sparkdl command``) or, for a command with subcommands
    ({start,stop,...} in its usage), of the subcommand the line names."""
    module, *sub = prefix
    code, text = help_text(module, *sub)
    words = shlex.split(rest, comments=True) if rest.strip() else []
    choices = re.search(r"\{([\w,-]+)\}", text.split("\n\n")[0])
    if code == 0 and choices and words and words[0] in choices.group(1).split(","):
        return help_text(module, *sub, words[0])
    return code, text


def test_the_front_page_is_short_and_links_every_doc():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    index = (ROOT / "docs" / "README.md").read_text()
    for page in PAGES[1:]:
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"


@pytest.mark.parametrize("page, target", links(), ids=lambda v: page_id(v) if isinstance(v, Path) else v)
def test_every_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), f"{page_id(page)} links {target}, which does not exist"
    if anchor and dest.suffix == ".md":
        assert anchor in anchors(dest), f"{page_id(page)} links {target}: no such heading in {dest.name}"


def test_the_docs_show_commands():
    assert len(commands()) > 50  # the extraction itself works


@pytest.mark.parametrize("page, line", commands(), ids=lambda v: page_id(v) if isinstance(v, Path) else v[:60])
def test_every_command_names_a_module_and_options_it_has(page, line):
    prefix, rest = invocation(line)
    code, text = command_help(prefix, rest)
    name = " ".join(prefix)
    assert code == 0, f"{page_id(page)}: `{name} --help` exits {code}: {text[-300:]}"
    for option in re.findall(r"(?:^|\s)(--[a-z][\w-]*)", rest):
        assert option in text, f"{page_id(page)} shows `{line}`: {name} has no option {option}"


def test_the_pages_teach_sparkdl_commands():
    """`sparkdl COMMAND` everywhere; the `python -m MODULE` form is mentioned once, in the README."""
    shown = [invocation(line)[0] for _, line in commands()]
    assert sum(p[0] == "sparkdl" for p in shown) > 50
    pages = {page_id(page): page.read_text().count("python -m ") for page in PAGES}
    assert {p: n for p, n in pages.items() if n} == {"README.md": 2}, "python -m outside the README's one mention"


DRY_RUNS = sorted({(page, line) for page, line in commands() if "--dry-run" in line and "<" not in line
                   and "..." not in line})


@pytest.mark.parametrize("page, line", DRY_RUNS, ids=lambda v: page_id(v) if isinstance(v, Path) else v[:60])
def test_every_dry_run_runs_as_written(page, line, tmp_path):
    start = min(i for i in (line.find("python"), line.find("sparkdl ")) if i >= 0)
    argv = shlex.split(line[start:])
    argv[:1] = [sys.executable] if argv[0].startswith("python") else [sys.executable, "-m", "sparkdl"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{page_id(page)}: `{line}` exits {done.returncode}: {done.stderr[-500:]}"
