"""The CI's verdict on a student's push, in the language of the student's notebooks.

The student workflows (ci/github/student-template.yml, ci/gitlab/student.gitlab-ci.yml) judge the
self-check's JSON result (data: the same in every language) and say the verdict with these
sentences, looked up in the language the notebooks of the checked folder ask for (or
$ATTENTION_COURSE_LANG): a Chinese student's red commit says why in Chinese. What a machine reads
stays as it is: GitLab's coverage line ("Self-check score: ...% of the visible points"), followed in
another language by the same line in that language.

    python -m autograder.feedback.verdict github self-check.json ARTIFACT   # annotations + summary
    python -m autograder.feedback.verdict gitlab self-check.json            # the log's last lines

Exit status 0 when every visible check of the core sections passes, 1 when one fails or the result
holds no score (then the self-check could not run, and the verdict says so).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from autograder.core.submission import folder_language
from autograder.i18n import DEFAULT, N_, LanguageError, _, _f, language, resolve, set_language

# GitLab reads this line's number as the job's coverage (its `coverage:` regex): English in every language
COVERAGE = "Self-check score: {percent:.2f}% of the visible points ({score:g} / {best:g})"
WORDS = {
    # i18n: a GitHub annotation's title on a green push
    "title_passed": N_("Self-check"),
    # i18n: a GitHub annotation's title on a red push
    "title_failed": N_("Visible checks fail"),
    # i18n: a GitHub annotation's title when the self-check's result holds no score
    "title_no_score": N_("Self-check could not run"),
    # i18n: {error} is the name of a Python exception (KeyError, ...)
    "no_score": N_("The self-check could not run: self-check.json holds no score ({error})."),
    "github_passed": N_("{score} / {best}: every visible check passes"),
    "github_failed": N_("{score} / {best}: some visible checks fail, so this commit is red. The summary of this run "
                        "says which and why; the artifact {artifact} holds the full report."),
    # i18n: GitLab's coverage line, said again in the reader's language under the English one GitLab reads
    "gitlab_score": N_("Self-check score: {percent} of the visible points ({score} / {best})"),
    "gitlab_passed": N_("Every visible check passes."),
    "gitlab_failed": N_("Some visible checks fail, so this commit is red: the lines above say which and why; the "
                        "job's artifacts hold the full report (feedback/report.html)."),
}


def core_score(result: dict) -> tuple[float, float]:
    """(score, maximum) of the core sections' visible checks in `check --format json`'s result: "score"
    counts every point, a bonus section's included; "max_score" is the core sections' maximum; a bonus
    check's test has max_score 0 and its own points in extra_data.max_points. KeyError, TypeError,
    ValueError or AttributeError where the result is not of that shape."""
    bonus = sum(test["score"] for test in result["tests"]
                if (test.get("extra_data") or {}).get("max_points") is not None)
    return round(float(result["score"]) - bonus, 4), float(result["max_score"])


def speak_as_the_notebooks(folder: Path) -> None:
    """The language of the checked folder's notebooks (else the environment's, else English)."""
    try:
        set_language(resolve(None, folder_language(folder)))
    except LanguageError:
        set_language(DEFAULT)


def github(score: float | None, best: float, artifact: str, summary: Path | None, error: str = "") -> int:
    """The annotation of the last step, and the same line at the end of the run's summary when red
    (`score` None: the result held no score, `error` says what was wrong with it)."""
    if score is not None and score >= best:
        print(f"::notice title={_(WORDS['title_passed'])}::"
              + _f(WORDS["github_passed"], score=f"{score:g}", best=f"{best:g}"))
        return 0
    if score is None:
        title, line = _(WORDS["title_no_score"]), _f(WORDS["no_score"], error=error)
    else:
        title = _(WORDS["title_failed"])
        line = _f(WORDS["github_failed"], score=f"{score:g}", best=f"{best:g}", artifact=artifact)
    print(f"::error title={title}::{line}")
    if summary is not None:
        with summary.open("a", encoding="utf-8") as stream:
            stream.write(f"\n**{line}**\n")
    return 1


def gitlab(score: float, best: float) -> int:
    """The log's last lines: the coverage line GitLab reads, the same in the reader's language, the verdict."""
    percent = 100 * score / best if best else 100.0
    print("\n" + COVERAGE.format(percent=percent, score=score, best=best))
    if language() != DEFAULT:
        print(_f(WORDS["gitlab_score"], percent=f"{percent:.2f}%", score=f"{score:g}", best=f"{best:g}"))
    print(_(WORDS["gitlab_passed"] if score >= best else WORDS["gitlab_failed"]))
    return 0 if score >= best else 1


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (2, 3) or args[0] not in ("github", "gitlab"):
        print("usage: python -m autograder.feedback.verdict github|gitlab RESULT.json [ARTIFACT]", file=sys.stderr)
        return 2
    speak_as_the_notebooks(Path.cwd())
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    on_github = args[0] == "github"
    try:
        score, best = core_score(json.loads(Path(args[1]).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        if on_github:
            return github(None, 0.0, "", Path(summary) if summary else None, type(error).__name__)
        print(_f(WORDS["no_score"], error=type(error).__name__))
        return 1
    if not on_github:
        return gitlab(score, best)
    return github(score, best, args[2] if len(args) > 2 else "feedback", Path(summary) if summary else None)


if __name__ == "__main__":
    sys.exit(main())
