"""No English sentence on a Chinese screen: what a Chinese student or instructor reads from the
course's Chinese paths, outside code, identifiers, paths and the machine-read lines kept on purpose.

The paths: the built Chinese notebooks (their prose, and the comments and strings of their code
cells: nbgrader's stub included) and README; `check` and `grade` on examples/partial with --lang zh
(the terminal, report.md, report.html); `check --help`; a bad argument and a bad choice; and the CI
verdict on a Chinese student's red push (ci/*'s step: autograder.feedback.verdict).

An English sentence is, after code is taken out (backquoted spans, $math$, quoted strings, tags,
paths, names with dots, brackets or underscores), a run of three or more English words in a row, or of
two with one of English's small function words or ending as a label ends, not counting the words the
glossary keeps in English (token, softmax, Dropout ...): "# YOUR CODE HERE", "unrecognized arguments:",
"some visible checks fail", "in place" are; `python -m autograder check`, "W_q(X) @ W_k(X)^T", a term
glossed on first use (上下文向量（context vector）) and "token softmax" are not.
"""
from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "student_template" / "zh"
PARTIAL = ROOT / "examples" / "partial"
FUNCTION_WORDS = frozenset(
    "a an the is are was were be been of to and or not no in on at by for from with as if than then "
    "this that these those it its your you which what when where only every each all some has have".split())
# kept in English on purpose (docs/translating-the-grader.md): what a machine reads (GitLab's coverage line, the
# sandbox line's tier prefix under --verbose), torch's own exception texts quoted as torch wrote them, the menu
# names of JupyterLab (*Run → Run All Cells*), the titles of the paper 07 cites and of the book 08 follows; and code: a docstring's line that
# names its parameters ("q, k, v: (B, L, D)")
KEPT = (re.compile(r"Self-check score: [\d.]+% of the visible points"), re.compile(r"sandbox: tier \w+:"),
        re.compile(r"\b\w+(?:Error|Warning): [^。；（）\n]*"), re.compile(r"\*[^*\n]*→[^*\n]*\*"),
        re.compile(r"\*Attention Is All You Need\*"), re.compile(r"\*Build a Large Language Model From Scratch\*"),
        re.compile(r"^\s*\w+(?:, \w+)+: "))
CODE = re.compile(r"`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|<[^<>\n]*>|'[^'\n]*'|\"[^\"\n]*\"|https?://\S+")
WORD = re.compile(r"[A-Za-z]+[,.;:!?]?")
NOT_ASCII = re.compile(r"[^\x00-\x7f]")
# words docs/glossary.md keeps in English inside Chinese text: two of them side by side are no sentence
KEPT_WORDS = frozenset({"token", "tokens", "softmax", "dropout", "docstring", "traceback", "artifact", "wheel"})


def is_sentence(run: list[str]) -> bool:
    """Three English words or more, or two with a function word ("in place") or ending a label ("invalid
    choice:"); the glossary's English words (token, softmax ...) count for none."""
    words = [word for word in run if word.strip(",.;:!?").lower() not in KEPT_WORDS]
    if len(words) != 2:
        return len(words) >= 3
    return any(word.strip(",.;:!?").lower() in FUNCTION_WORDS for word in words) or (
        words[-1].endswith(":") and "".join(words).islower())


def english_sentences(text: str) -> list[str]:
    """The runs of English words in `text` that read as a sentence (see the module's docstring)."""
    found = []
    for line in text.splitlines():
        for kept in KEPT:
            line = kept.sub(" | ", line)
        line = NOT_ASCII.sub(" | ", CODE.sub(" | ", line))
        run: list[str] = []
        for token in [*line.split(), "|"]:
            if WORD.fullmatch(token):
                run.append(token)
                continue
            if is_sentence(run):
                found.append(" ".join(run))
            run = []
    return found


@pytest.mark.parametrize("text, hits", [
    ("        # YOUR CODE HERE", ["YOUR CODE HERE"]),
    ("autograder: error: unrecognized arguments: --bogus", ["autograder: error: unrecognized arguments:"]),
    ("autograder：错误：unrecognized arguments: --bogus", ["unrecognized arguments:"]), ("token softmax 之后", []),
    ("autograder：错误：无法识别的参数：--bogus", []), ("用一个 toy batch", []), ("in place", ["in place"]),
    ("0 / 49.5: some visible checks fail, so this commit is red", ["some visible checks fail, so this commit is red"]),
    ("左：split_heads(x, 2) 的期望值，all 检查", []), ("运行 `python -m autograder check` 即可", []),
    ("上下文向量（context vector）", []), ("(B, H, T, hd) 而没有转置", []), ("GitHub Classroom 导出", []),
    ("SelfAttentionScore：计算 W_q(X) @ W_k(X)^T，不缩放", []), ("softmax 沿最后一维做 softmax", []),
    ("Self-check score: 85.00% of the visible points (21 / 24.5)", []),
    ("raise NotImplementedError()", []), ("运行所有单元格（*Run → Run All Cells*）", []),
    ("RuntimeError: Tensor on device cpu is not on the expected device meta!（单元格 …）", []),
    ("        q, k, v: (B, L, D)；key_padding_mask: (B, L)", []), ("the q, k, v: here", ["the q, k, v: here"]),
    ("Transformer 原始论文（*Attention Is All You Need*）", []), ("a paper, *Attention Is All You Need*", ["a paper,"]),
])
def test_the_detector_tells_an_english_sentence_from_code(text, hits):
    assert english_sentences(text) == hits


# ---------------------------------------------------------------- what the paths show


def code_words(source: str) -> str:
    """The comments and string literals of a code cell: what of its code a reader reads as words."""
    words = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                words.append(token.string)
            elif token.type == tokenize.STRING:
                words.append(re.sub(r"^[a-zA-Z]*(\"\"\"|'''|\"|')|(\"\"\"|'''|\"|')$", "", token.string))
    except (tokenize.TokenError, IndentationError):  # a cell with magics: its lines as they are
        words.append(source)
    return "\n".join(words)


def notebook_screens() -> list[tuple[str, str]]:
    screens = []
    for path in sorted(ZH.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            shown = source if cell["cell_type"] == "markdown" else code_words(source)
            screens.append((f"{path.name} {cell.get('id', '?')}", shown))
    readme = (ZH / "README.md").read_text(encoding="utf-8")
    fenced = re.compile(r"^```.*?^```", re.S | re.M)
    comments = "\n".join(line.split(" # ", 1)[1] for block in fenced.findall(readme)
                         for line in block.splitlines() if " # " in line)
    screens += [("README.md", fenced.sub("", readme)), ("README.md's code comments", comments)]
    return screens


def autograder(*args: str, cwd: Path = ROOT) -> str:
    env = {**os.environ, "ATTENTION_COURSE_LANG": "zh"}
    done = subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=600)
    return done.stdout + done.stderr


def report_screens(folder: Path, name: str) -> list[tuple[str, str]]:
    """A report's words: not what the student's code printed (its own words) nor the numbers' tables (data)."""
    page = (folder / "report.html").read_text(encoding="utf-8")
    body = re.sub(r"<(script|style|pre)\b.*?</\1>", " ", page, flags=re.S)
    text = html.unescape(re.sub(r"<img\b[^>]*>", " ", body))
    markdown = re.sub(r"^ *```text$.*?^ *```$", " ", (folder / "report.md").read_text(encoding="utf-8"),
                      flags=re.S | re.M)
    return [(f"{name} report.md", markdown), (f"{name} report.html", text)]


def verdict_screens(tmp_path: Path) -> list[tuple[str, str]]:
    """The last step of the student workflow on a Chinese repository whose push is red."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ZH / "01_scores.ipynb", repo)
    (repo / "self-check.json").write_text(json.dumps({"score": 3.0, "max_score": 10.0, "tests": []}))
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_COURSE_LANG"}
    screens = []
    for platform, extra in (("github", ["feedback-ubuntu-latest"]), ("gitlab", [])):
        done = subprocess.run([sys.executable, "-m", "autograder.feedback.verdict", platform, "self-check.json", *extra],
                              cwd=repo, env={**env, "GITHUB_STEP_SUMMARY": str(summary)}, capture_output=True,
                              text=True, encoding="utf-8", timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr
        screens.append((f"the {platform} verdict", done.stdout + done.stderr))
    return screens + [("the GitHub summary's verdict", summary.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def grader_screens(tmp_path_factory) -> list[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("zh-screens")
    screens = [("check", autograder("check", str(PARTIAL), "--report", str(tmp / "check"))),
               ("grade", autograder("grade", str(PARTIAL), "--sandbox", "weak", "--report", str(tmp / "grade"))),
               ("check --help", autograder("check", "--help")), ("--help", autograder("--help")),
               ("a bad argument", autograder("check", "--bogus")), ("a bad choice", autograder("check", "--format", "xx")),
               ("--section and its notice", autograder("check", str(PARTIAL), "--section", "02_softmax", "--report",
                                                       str(tmp / "grade")))]
    screens += report_screens(tmp / "check", "check") + report_screens(tmp / "grade", "grade --section")
    return screens + verdict_screens(tmp)


def english_on(screens: list[tuple[str, str]]) -> list[str]:
    return [f"{where}: {sentence!r}" for where, text in screens for sentence in english_sentences(text)]


def test_the_chinese_notebooks_and_readme_show_no_english_sentence():
    found = english_on(notebook_screens())
    assert found == [], "\n".join(found)


def test_the_chinese_grader_says_no_english_sentence(grader_screens):
    found = english_on(grader_screens)
    assert found == [], "\n".join(found)
    shown = dict(grader_screens)  # and each path did speak Chinese
    assert "通过" in shown["check"] and "用法：" in shown["check --help"] and "无法识别的参数" in shown["a bad argument"]
    assert "有公开检查未通过" in shown["the github verdict"]
    assert "全部检查" in shown["grade --section report.html"]  # the notice after --section names the earlier run's kind


def test_a_blocked_import_is_said_in_chinese():
    """A notebook that imports the grader or the reference while graded: the worker sends the package's name
    (data), the trusted side words it; its English exception text never reaches a Chinese screen."""
    from autograder import i18n
    from autograder.core.failures import worker_message
    from autograder.worker.guards import BlockAnswers
    from autograder.worker.student_code import describe_error

    with pytest.raises(ImportError) as raised:
        BlockAnswers().find_spec("solutions.multihead")
    described = describe_error(raised.value)
    i18n.set_language("zh")
    try:
        said = worker_message(described)
    finally:
        i18n.set_language("en")
    assert said == "评分时不能导入 solutions.multihead" and english_sentences(said) == []
    assert worker_message(described) == "solutions.multihead cannot be imported while grading"


@pytest.fixture(scope="module")
def instructor_screens(tmp_path_factory) -> list[tuple[str, str]]:
    """What a Chinese instructor reads: `batch --lang zh` over a class of two (the partial example and the
    correct one), its students' feedback pages, the class report, and `batch --help`."""
    tmp = tmp_path_factory.mktemp("zh-instructor")
    for student, example in (("ann", PARTIAL), ("bob", ROOT / "examples" / "correct")):
        (tmp / "class" / student).mkdir(parents=True)
        for notebook in ("01_scores.ipynb", "02_softmax.ipynb"):
            shutil.copy(example / notebook, tmp / "class" / student)
    out = tmp / "grades"
    batch = autograder("batch", str(tmp / "class"), "--section", "01_scores,02_softmax", "--out", str(out),
                       "--report", "--sandbox", "weak", "--lang", "zh")
    report = autograder("report", str(out), "--lang", "zh")
    page = (out / "class_report.html").read_text(encoding="utf-8")
    page = html.unescape(re.sub(r"<(script|style|pre)\b.*?</\1>", " ", page, flags=re.S))
    return [("batch --lang zh", batch), ("batch --help", autograder("batch", "--help")), ("report", report),
            ("the class report", page)] + report_screens(out / "feedback" / "ann", "ann's feedback")


def test_the_chinese_instructor_reads_no_english_sentence(instructor_screens):
    found = english_on(instructor_screens)
    assert found == [], "\n".join(found)
    shown = dict(instructor_screens)  # and each path did speak Chinese
    assert "已评分" in shown["batch --lang zh"] and "用法：" in shown["batch --help"], shown["batch --lang zh"][-2000:]
