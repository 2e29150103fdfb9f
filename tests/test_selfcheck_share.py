"""How much of the catalogue of common mistakes a student's self-check flags.

A catalogued mistake (a `Mistake` in a tests/catalogues/mistakes_<id>.py module's
MISTAKES) is flagged by the self-check when at least one of the checks its
`loses` names is visible: the self-check runs that check and sees it fail.
This is decided from the checks' declarations alone, without grading anything:
that a mistake loses exactly those checks is what each catalogue's own tests
(assert_mistake_caught) establish.
"""
from __future__ import annotations


from catalogues import CATALOGUES
from support import matched_titles

from autograder.checks import declared

MINIMUM_SHARE = 0.90
MINIMUM_CATALOGUE = 35




def self_check_share() -> dict:
    """flagged, losing (mistakes that lose points), catalogue (all entries), missed: [(section, mistake id)]."""
    flagged, losing, total, missed = 0, 0, 0, []
    for section_id, catalogue in CATALOGUES.items():
        checks = declared(section_id)
        for mistake in catalogue.MISTAKES:
            total += 1
            if not mistake.loses:
                continue
            losing += 1
            titles = matched_titles(mistake, checks)  # each part names exactly one check
            if any(checks[title]["visible"] for title in titles):
                flagged += 1
            else:
                missed.append((section_id, mistake.id))
    return {"flagged": flagged, "losing": losing, "catalogue": total, "missed": missed}


def summary_line() -> str:
    share = self_check_share()
    percent = 100.0 * share["flagged"] / share["losing"] if share["losing"] else 0.0
    return (f"self-check flags {share['flagged']}/{share['losing']} catalogue mistakes ({percent:.1f}%); "
            f"{share['catalogue']} named mistakes in the catalogue")


def test_the_catalogue_names_enough_mistakes():
    assert self_check_share()["catalogue"] >= MINIMUM_CATALOGUE


def test_the_self_check_flags_most_catalogued_mistakes(record_property):
    share = self_check_share()
    assert share["losing"], "no catalogued mistake loses points"
    ratio = share["flagged"] / share["losing"]
    record_property("summary", summary_line())  # the run's last lines (conftest.py)
    assert ratio >= MINIMUM_SHARE, (f"the self-check flags {share['flagged']}/{share['losing']} = {ratio:.0%} of the "
                                    f"catalogued mistakes; it misses {share['missed']}")
