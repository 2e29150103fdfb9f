"""The catalogues of common mistakes, one per section: section id -> its tests/test_checks_<id>.py module.

Imported under the name pytest gives the module (tests/ is on sys.path), so a
catalogue is one module object however it is reached.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from autograder.core.sections import SECTIONS

TESTS = Path(__file__).resolve().parent

CATALOGUES = {section.id: importlib.import_module(f"test_checks_{section.id}")
              for section in SECTIONS if (TESTS / f"test_checks_{section.id}.py").exists()}
