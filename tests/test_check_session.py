"""core/check_session.py: one pytest session grading student after student, as a batch job does.

Each grading in the session must come out exactly as a pytest run of its own would
grade the same submission: the same checks, points, messages, named mistakes,
pictures, notes and grader errors, whatever was graded before it.
"""
from __future__ import annotations

from support import EXAMPLES, graded, zygote

from autograder.core import check_session
from autograder.core.grade import run_checks
from autograder.core.plugin import Grading
from autograder.core.submission import locate


def broken_folder(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "01_scores.ipynb").write_text("this is not JSON {", encoding="utf-8")
    return folder


def standing(session) -> dict:
    """The nodes pytest holds set up (the session, a module, a check) with their fixtures' finalizers. The
    grader itself reads no private state of pytest (it tears down through the public teardown hook); only
    this test looks at pytest's stack, to see that nothing is left of one grading for the next."""
    return dict(session.session._setupstate.stack)


def in_session(serve):
    """Run `serve(session)` in a session, and fail here if it did not run."""
    assert check_session.serve_in_session(serve)


def test_each_grading_in_a_session_equals_a_run_of_its_own(tmp_path):
    # one section of the partial submission between whole ones: its items alone, then all of them again
    order = [(EXAMPLES / "partial", None), (EXAMPLES / "correct", None), (broken_folder(tmp_path), None),
             (EXAMPLES / "partial", "02_softmax"), (EXAMPLES / "partial", None), (EXAMPLES / "correct_py", None)]
    alone = [graded(run_checks(locate(path, section), "cpu", launcher=zygote())) for path, section in order]
    together, left_standing = [], []

    def serve(session):
        for path, section in order:
            together.append(graded(run_checks(locate(path, section), "cpu", launcher=zygote(), session=session)))
            left_standing.append(standing(session))

    in_session(serve)
    for (path, section), got, expected in zip(order, together, alone):
        assert got == expected, (path.name, section)
    assert left_standing == [{}] * len(order)  # every fixture torn down after each grading
    lost = [check for grading in alone for _id, _notes, checks in grading[2:] for check in checks if check[1] < check[2]]
    assert lost  # the comparison covers failed checks, with their messages, not only passed ones


class RecordFails(Grading):
    """A grading whose record of the outcomes raises: the grader's own hook failing mid-run."""

    def record(self, item, call, report):
        if call.when == "call":
            raise RuntimeError("the grader's hook broke")
        super().record(item, call, report)


def test_a_grading_whose_hook_fails_is_reported_and_the_next_grades_clean():
    submission = EXAMPLES / "correct"
    expected = graded(run_checks(locate(submission, "01_scores"), "cpu", launcher=zygote()))
    outcomes = {}

    def serve(session):
        from autograder.core.grade import section_workers
        from autograder.sandbox.limits import Limits

        sources = locate(submission, "01_scores")
        workers = section_workers(sources, zygote(), Limits(), "cpu", True)
        try:
            outcomes["broken"] = session.run(RecordFails(workers))
        finally:
            for worker in workers.values():
                worker.stop()
                worker.close()
        outcomes["stack"] = standing(session)
        outcomes["next"] = graded(run_checks(sources, "cpu", launcher=zygote(), session=session))

    in_session(serve)
    code, said = outcomes["broken"]
    assert code == 3 and "the grader's hook broke" in said
    assert outcomes["stack"] == {}
    assert outcomes["next"] == expected


def test_a_check_file_that_did_not_load_fails_each_grading_as_it_would_alone():
    class Collected:
        items, testsfailed = [], 1

    session = check_session.CheckSession(Collected(), None, ["section_01_scores.py: ImportError: no module"])
    code, said = session.run(Grading({}))
    assert code == 2 and "ImportError" in said
