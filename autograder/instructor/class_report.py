"""The `report` verb: the instructor's view of a graded class.

    python -m autograder report GRADES_DIR [--out DIR]

GRADES_DIR is what `batch` writes: grades.csv (student, a column per section,
total, ...) and students/<file>.json (filed under files.safe_filename(student id)),
of which this report reads the grade's own record and the batch's provenance
(instructor/student_files.py), never the results.json rendered around them.
DIR (default GRADES_DIR) gets:

    class_report.html     self-contained (histograms embedded as base64 SVG: instructor/histograms.py)
    class_sections.csv    score distribution of each section and of the total (from grades.csv)
    class_checks.csv      pass rate of every check, hardest first
    class_mistakes.csv    the named mistakes and how many students made each
    class_kinds.csv       why checks failed (the failure kinds of the tags)
    class_problems.csv    students whose grading had errors, timeouts, unreadable notebooks, ...
    class_needs_help.csv  who needs help, most urgent first, and why (instructor/needs_help.py)
    class_unreached.csv   the sections graded from a file under another name, whose nbgrader feedback
                          page never reaches the student (instructor/unreached.py)

and links to GRADES_DIR/similarity.html when `batch --similarity` wrote one.

A named mistake is one a check recognised from its own catalogue, recorded as
the check's `mistake`; a failure message is never searched for one, since it
may quote the student's own exception or printed output.

The score statistics are computed from grades.csv alone, so they match it;
the check-level tables come from the students' JSON files, and any student
whose JSON disagrees with grades.csv is listed as a problem.
"""
from __future__ import annotations

import base64
import html
import re
import sys
from pathlib import Path

from autograder.core.files import from_spreadsheet_safe, result_file_name, spreadsheet_safe, write_bytes_atomically
from autograder.core.submission import UsageError
from autograder.i18n import _, _f, language
from autograder.instructor.grades_table import status_of
from autograder.instructor.needs_help import heading as needs_help_heading, help_table
from autograder.instructor.student_files import Stored, read_student, student_named
from autograder.instructor.unreached import heading as unreached_heading, unreached_table
from autograder.instructor.similarity import HTML_NAME as SIMILARITY_PAGE  # batch --similarity writes it

GRADES, STUDENTS = "grades.csv", "students"
SECTION_COLUMN = re.compile(r"^\d\d_\w+$")
NUMBER_COLUMNS = ("total", "max_score")
# failure kinds that mean the grading itself went wrong for a student, not a wrong answer
PROBLEM_KINDS = {
    "timeout": "a call timed out",
    "unreadable": "unreadable notebook",
    "load": "the notebook failed to load",
    "died": "the student's worker died",
    "oversized": "a result too large to read",
    "garbled": "a result the grader could not read",
    "internal": "a call could not be made",
    "grader": "the grader failed in a check",
}
MATCH_TOLERANCE = 1e-6


def load(folder: Path):
    """(grades DataFrame, {student: stored grade}, [(student, problem)]) of a batch's output folder."""
    path = folder / GRADES
    if not folder.is_dir():
        raise UsageError(_f("{folder}: no such folder", folder=folder))
    if not path.is_file():
        raise UsageError(_f("{folder}: no {grades} here (write one with `python -m autograder batch`)",
                            folder=folder, grades=GRADES))
    grades = read_grades(path)
    if "student" not in grades.columns or "total" not in grades.columns:
        raise UsageError(_f("{path}: expected the columns student, <section ids>, total", path=path))
    results, problems, seen = {}, [], set()
    for student in grades["student"]:
        name = result_file_name(student)
        json_path = folder / STUDENTS / name
        seen.add(name)
        if not json_path.is_file():
            problems.append((student, f"no {STUDENTS}/{name}"))
            continue
        stored = read_student(json_path)
        if stored is None:
            problems.append((student, f"{STUDENTS}/{name} is unreadable (no grade record of this grader "
                                      "in it: grade again)"))
            continue
        results[student] = stored
    listed = set(grades["student"])
    for extra in sorted((folder / STUDENTS).glob("*.json")) if (folder / STUDENTS).is_dir() else []:
        if extra.name in seen:
            continue
        student = student_named(extra)
        if student not in listed:
            problems.append((student, f"{STUDENTS}/{extra.name} has no row in {GRADES}"))
    return grades, results, problems


def read_grades(path: Path):
    """grades.csv with every student id as the text it is: "NA", "None", "null", "nan" and "" are ids,
    not missing values. The score columns are read as numbers (a blank one as missing)."""
    import pandas as pd

    try:
        grades = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, OSError) as error:
        raise UsageError(_f("{path}: not a readable CSV file ({error})", path=path, error=error)) from None
    if "student" in grades.columns:  # batch wrote them spreadsheet-safe ("'=x" for "=x")
        grades["student"] = grades["student"].map(from_spreadsheet_safe)
    for column in grades.columns:
        if SECTION_COLUMN.match(str(column)) or column in NUMBER_COLUMNS:
            grades[column] = pd.to_numeric(grades[column], errors="coerce")  # "" too: missing
    return grades




def spreadsheet_safe_frame(frame):
    """A copy whose text cells (student ids, messages quoting student code) no spreadsheet evaluates."""
    import pandas as pd

    safe = frame.copy()
    for column in safe.columns:  # text columns only (numbers stay numbers), whatever dtype pandas gave them
        if not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(lambda value: spreadsheet_safe(value) if isinstance(value, str) else value)
    return safe


def section_columns(grades) -> list[str]:
    return [c for c in grades.columns if SECTION_COLUMN.match(str(c))]


def _tests(results: dict[str, Stored]):
    """One row per (student, check) of the students' grades."""
    import pandas as pd

    rows = []
    for student, stored in results.items():
        for section in stored.grade.sections:
            for check in section.checks:
                rows.append({"student": student, "section": section.id, "check": check.name,
                             "score": check.points, "max_score": check.max_points, "passed": check.passed,
                             "documented": check.documented,
                             "kind": "" if check.passed else (check.kind or "check"),
                             "output": check.message, "mistake": "" if check.passed else check.mistake})
    columns = ["student", "section", "check", "score", "max_score", "passed", "documented", "kind", "output",
               "mistake"]
    return pd.DataFrame(rows, columns=columns)


def section_table(grades, tests):
    """Score distribution per section and of the total, from grades.csv (max points from the JSON files)."""
    import pandas as pd

    maxima = tests.groupby(["student", "section"])["max_score"].sum().groupby("section").max() \
        if len(tests) else pd.Series(dtype=float)
    rows = []
    for column in section_columns(grades) + ["total"]:
        scores = pd.to_numeric(grades[column], errors="coerce")
        if column == "total":
            top = float(pd.to_numeric(grades["max_score"], errors="coerce").max()) if "max_score" in grades \
                else float(maxima.sum()) if len(maxima) else float("nan")
        else:
            top = float(maxima.get(column, float("nan")))
        rows.append({"section": column, "max_points": top, "students": int(scores.notna().sum()),
                     "mean": float(scores.mean()), "median": float(scores.median()),
                     "min": float(scores.min()), "max": float(scores.max()),
                     "full_marks": int((scores >= top - MATCH_TOLERANCE).sum()) if top == top else 0,
                     "zero": int((scores <= MATCH_TOLERANCE).sum())})
    return pd.DataFrame(rows)


def check_table(tests):
    """Pass rate of every check, hardest first (ties: section, then title)."""
    import pandas as pd

    if not len(tests):
        return pd.DataFrame(columns=["section", "check", "max_points", "students", "passed", "pass_rate",
                                     "mean_points", "documented"])
    table = tests.groupby(["section", "check"], sort=False).agg(
        max_points=("max_score", "max"), students=("student", "nunique"), passed=("passed", "sum"),
        mean_points=("score", "mean"), documented=("documented", "max")).reset_index()
    table["passed"] = table["passed"].astype(int)
    table["pass_rate"] = (table["passed"] / table["students"]).round(4)
    table["mean_points"] = table["mean_points"].round(4)
    table = table.sort_values(["pass_rate", "section", "check"], kind="mergesort").reset_index(drop=True)
    return table[["section", "check", "max_points", "students", "passed", "pass_rate", "mean_points",
                  "documented"]]


def mistake_table(tests):
    """Every catalogued mistake a check recognised (its `mistake`), most common first."""
    import pandas as pd

    rows = [{"section": row.section, "check": row.check, "mistake": row.mistake, "student": row.student}
            for row in tests[~tests["passed"]].itertuples() if row.mistake]
    if not rows:
        return pd.DataFrame(columns=["section", "check", "mistake", "students"])
    frame = pd.DataFrame(rows).drop_duplicates()
    table = frame.groupby(["section", "check", "mistake"]).agg(students=("student", "nunique")).reset_index()
    return table.sort_values(["students", "section", "check", "mistake"], ascending=[False, True, True, True],
                             kind="mergesort").reset_index(drop=True)


def kind_table(tests):
    """Why checks failed: failures and students per failure kind, most common first."""
    import pandas as pd

    failed = tests[~tests["passed"]]
    if not len(failed):
        return pd.DataFrame(columns=["kind", "failures", "students"])
    table = failed.groupby("kind").agg(failures=("check", "size"), students=("student", "nunique")).reset_index()
    return table.sort_values(["failures", "kind"], ascending=[False, True], kind="mergesort").reset_index(drop=True)


def problem_table(grades, results, tests, read_problems):
    """Students whose grading went wrong: grader errors, timeouts, unreadable notebooks, missing results."""
    import pandas as pd

    rows = [{"student": s, "problem": p} for s, p in read_problems]
    for student, stored in results.items():  # the status made from the grade, never grades.csv's words read back
        status = status_of(stored)
        if status != _("graded"):
            rows.append({"student": student, "problem": f"{GRADES} status: {status}"})
    for student, stored in results.items():
        errors = stored.grader_errors
        if errors:
            first = str(errors[0]).strip().splitlines()
            rows.append({"student": student, "problem": f"grader error: {first[-1] if first else '?'}"[:300]})
    failed = tests[~tests["passed"] & tests["kind"].isin(list(PROBLEM_KINDS))]
    for (student, kind), group in failed.groupby(["student", "kind"]):
        sections = ", ".join(sorted(set(group["section"])))
        count = f"{len(group)} check{'s' if len(group) != 1 else ''}"
        rows.append({"student": student, "problem": f"{PROBLEM_KINDS[kind]} ({kind}: {count} in {sections})"})
    columns = section_columns(grades)
    by_student = grades.set_index("student")
    for student, stored in results.items():
        if student not in by_student.index:
            continue
        sums = {}
        for row in tests[tests["student"] == student].itertuples():
            sums[row.section] = sums.get(row.section, 0.0) + row.score
        for column in columns:
            listed = float(by_student.at[student, column])
            if abs(listed - sums.get(column, 0.0)) > MATCH_TOLERANCE:
                rows.append({"student": student, "problem": f"{GRADES} gives {column} {listed:g}, "
                                                            f"{STUDENTS}/{result_file_name(student)} "
                                                            f"{sums.get(column, 0.0):g}"})
        total = stored.grade.score
        if abs(float(by_student.at[student, "total"]) - total) > MATCH_TOLERANCE:
            rows.append({"student": student, "problem": f"{GRADES} gives total {by_student.at[student, 'total']:g}, "
                                                        f"{STUDENTS}/{result_file_name(student)} {total:g}"})
    table = pd.DataFrame(rows, columns=["student", "problem"]).drop_duplicates()
    return table.sort_values(["student", "problem"], kind="mergesort").reset_index(drop=True)


def _html_table(frame, percent=()) -> str:
    shown = frame.copy()
    for column in percent:
        if column in shown:
            shown[column] = [f"{100 * v:.0f}%" for v in shown[column]]
    if not len(shown):
        return "<p>" + _("None.") + "</p>"
    return shown.to_html(index=False, escape=True, border=0, classes="data", na_rep="",
                         float_format=lambda value: f"{value:.4g}")


CSS = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 24px auto; padding: 0 16px; max-width: 1240px;
       color: #1f2328; }
h2 { font-size: 19px; margin-top: 28px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
table.data { border-collapse: collapse; font-size: 13px; }
table.data td, table.data th { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; }
img { max-width: 100%; height: auto; }
"""


def similarity_link(folder: Path, out: Path) -> list[str]:
    """A link to the similarity report `batch --similarity` wrote beside grades.csv, if there is one."""
    import os

    for where in (out, folder):
        page = where / SIMILARITY_PAGE
        if page.is_file():
            target = html.escape(Path(os.path.relpath(page, out)).as_posix(), quote=True)
            link = f'<a href="{target}">{html.escape(SIMILARITY_PAGE)}</a>'
            return ['<h2 id="similarity">' + _("Code similarity") + "</h2>",
                    "<p>" + _f("{link}: which students' code is alike, section by section. Evidence for a "
                               "conversation, never a verdict: no score depends on it.", link=link) + "</p>"]
    return []


def build(folder: Path, out: Path | None = None) -> Path:
    """Read GRADES_DIR, write the class report and its CSVs to `out` (default GRADES_DIR)."""
    from autograder.feedback.report import CSP, SCRIPT
    from autograder.instructor.histograms import histograms_svg
    from autograder.instructor.histograms import size as histogram_size

    folder = Path(folder)
    out = Path(out) if out else folder
    grades, results, read_problems = load(folder)
    tests = _tests(results)
    sections, checks = section_table(grades, tests), check_table(tests)
    mistakes, kinds = mistake_table(tests), kind_table(tests)
    problems = problem_table(grades, results, tests, read_problems)
    tables = {"class_sections.csv": sections, "class_checks.csv": checks, "class_mistakes.csv": mistakes,
              "class_kinds.csv": kinds, "class_problems.csv": problems, "class_needs_help.csv": help_table(results),
              "class_unreached.csv": unreached_table(results)}
    for name, frame in tables.items():
        # "replace": a lone surrogate read from a JSON file is written as "?"
        write_bytes_atomically(out / name, spreadsheet_safe_frame(frame).to_csv(index=False).encode("utf-8", "replace"))
    picture = histograms_svg(grades, sections)
    image = base64.b64encode(picture).decode("ascii")
    width, height = histogram_size(len(sections))
    esc = html.escape
    title = _("Attention course: class report")
    alt = _("histograms of the scores per section and of the total")
    body = [
        "<!DOCTYPE html>", f'<html lang="{language()}">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        "<title>" + title + "</title>", f"<style>{CSS}</style>", f"<script>{SCRIPT}</script>",
        "</head>", "<body>", "<h1>" + title + "</h1>",
        "<p>" + _f("{students} students in <code>{grades}</code>; {results} results files read.",
                   students=len(grades), grades=esc(str(folder / GRADES)), results=len(results)) + "</p>",
        '<h2 id="help">' + esc(needs_help_heading()) + "</h2>", _html_table(tables["class_needs_help.csv"]),
        '<h2 id="unreached">' + esc(unreached_heading()) + "</h2>", _html_table(tables["class_unreached.csv"]),
        '<h2 id="scores">' + _("Scores per section") + "</h2>", _html_table(sections),
        f'<img src="data:image/svg+xml;base64,{image}" width="{width}" height="{height}" alt="{esc(alt)}">',
        '<h2 id="checks">' + _("Checks, hardest first") + "</h2>", _html_table(checks, percent=("pass_rate",)),
        '<h2 id="mistakes">' + _("The most common named mistakes") + "</h2>",
        _html_table(mistakes.assign(mistake=[_(name) for name in mistakes["mistake"]])),  # a mistake is kept as its id
        '<h2 id="kinds">' + _("Why checks failed") + "</h2>", _html_table(kinds),
        '<h2 id="problems">' + _("Students whose grading went wrong") + "</h2>", _html_table(problems),
        *similarity_link(folder, out), "</body>", "</html>"]
    path = out / "class_report.html"
    write_bytes_atomically(path, ("\n".join(body) + "\n").encode("utf-8", "replace"))
    return path


def add_verbs(verbs) -> None:
    verb = verbs.add_parser("report", help=_("class report from a batch's grades.csv and students/*.json"))
    verb.add_argument("grades", type=Path, metavar="GRADES_DIR")
    verb.add_argument("--out", type=Path, metavar="DIR", help=_("where to write class_report.html "
                      "and its CSV files (default: GRADES_DIR)"))
    verb.set_defaults(main=main)


def main(args) -> int:
    path = build(args.grades, args.out)
    print(_f("autograder: class report: {path}", path=path), file=sys.stderr)
    return 0
