"""docs/instructors.md says what is true of the tools it names: nbgrader's own default exchange,
the venv activated before the first command, and commands of the grader that parse."""
from __future__ import annotations

import re
import shlex

from support import ROOT

from autograder.cli import build_parser

GUIDE = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")


def test_the_guide_and_the_course_config_name_nbgraders_own_default_exchange():
    from nbgrader.exchange.default.exchange import Exchange

    default = Exchange.root.default_value  # what the installed nbgrader uses when nothing is set
    assert re.search(r"`Exchange\.root`, by default\s+`([^`]+)`", GUIDE)[1] == default
    for config in ("assignments/nbgrader_config.py", "assignments/zh/nbgrader_config.py"):
        text = (ROOT / config).read_text(encoding="utf-8")
        assert re.search(r"stays at nbgrader's default,\s+#\s+(\S+)\.", text)[1] == default, config


def test_the_guide_activates_the_venv_before_its_first_command():
    activate = GUIDE.index("source .venv/bin/activate")
    assert activate < GUIDE.index("nbgrader generate_assignment") and activate < GUIDE.index("python -m autograder")


def test_every_grader_command_the_guide_shows_in_a_block_parses():
    """Indented command lines (`python -m autograder VERB ...`) are valid command lines of the grader."""
    commands = [line.strip() for line in GUIDE.splitlines()
                if line.startswith("    ") and line.strip().startswith("python -m autograder ")]
    assert any(" classroom-roster " in command for command in commands)
    for command in commands:
        words = shlex.split(command.split(" #")[0].rstrip("\\").strip())[3:]
        build_parser().parse_args(words)  # raises UsageError: one line, naming what is wrong
