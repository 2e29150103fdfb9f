"""The grader in two languages: English is the messages themselves, Chinese comes from catalogues
that translate every message of the code, fully, with the same fields, and compiled as committed."""
from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest
from support import ROOT

from autograder import i18n
from autograder.i18n import _, _f, catalogues
from autograder.i18n.mo import mo_bytes, mo_messages


@pytest.fixture(autouse=True)
def back_to_english():
    yield
    i18n.set_language("en")


def planted_catalogue(tmp_path, messages: dict[str, str]):
    folder = tmp_path / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "a.mo").write_bytes(mo_bytes(messages, "zh_CN"))
    (folder / "b.mo").write_bytes(mo_bytes({"from the second catalogue": "来自第二个目录"}, "zh_CN"))
    return tmp_path


def test_english_is_the_message_itself(tmp_path):
    folder = planted_catalogue(tmp_path, {"the check passed": "检查通过"})
    i18n.set_language("en", folder)
    assert i18n.language() == "en"
    assert _("the check passed") == "the check passed"
    assert _f("{name} modified its argument #{number}", name="f", number=2) == "f modified its argument #2"
    assert _f("{value:.4f}", value=1 / 3) == "0.3333"
    assert i18n.N_("a title") == "a title"


def test_a_chinese_catalogue_entry_is_used_from_any_catalogue_of_the_language(tmp_path):
    folder = planted_catalogue(tmp_path, {"{name} modified its argument #{number}": "{name} 修改了它的第 {number} 个参数"})
    i18n.set_language("zh", folder)
    assert i18n.language() == "zh"
    assert _f("{name} modified its argument #{number}", name="f", number=2) == "f 修改了它的第 2 个参数"
    assert _("from the second catalogue") == "来自第二个目录"
    assert _("a message nobody translated") == "a message nobody translated"


def test_the_grader_s_own_chinese_catalogues_are_loaded():
    translated = {msgid: text for where, msgid, text in entries() if where.startswith("zh_CN/")}
    assert translated, "no Chinese translation at all"
    i18n.set_language("zh")
    assert {msgid: _(msgid) for msgid in translated} == translated


def test_the_empty_message_is_empty_in_every_language():
    i18n.set_language("zh")
    assert _("") == ""


def test_a_missing_field_fails_loudly():
    with pytest.raises(KeyError, match="number"):
        _f("{name} modified its argument #{number}", name="f")


def test_resolve_takes_the_flag_then_the_environment_then_the_notebook(monkeypatch):
    monkeypatch.delenv(i18n.ENVIRONMENT, raising=False)
    assert i18n.resolve() == "en"
    assert i18n.resolve(notebook_language="zh") == "zh"
    monkeypatch.setenv(i18n.ENVIRONMENT, "en")
    assert i18n.resolve(notebook_language="zh") == "en"
    assert i18n.resolve("zh", notebook_language="en") == "zh"
    monkeypatch.setenv(i18n.ENVIRONMENT, " ZH ")
    assert i18n.resolve() == "zh"


@pytest.mark.parametrize("where", ["flag", "environment", "notebook"])
def test_an_unknown_language_is_one_clear_line(monkeypatch, where):
    monkeypatch.delenv(i18n.ENVIRONMENT, raising=False)
    kwargs = {"flag": {"explicit": "fr"}, "notebook": {"notebook_language": "fr"}}.get(where, {})
    if where == "environment":
        monkeypatch.setenv(i18n.ENVIRONMENT, "fr")
    with pytest.raises(i18n.LanguageError) as caught:
        i18n.resolve(**kwargs)
    message = str(caught.value)
    assert "'fr'" in message and "en, zh" in message and "\n" not in message
    with pytest.raises(i18n.LanguageError):
        i18n.set_language("fr")


def test_every_message_of_the_code_has_a_reviewed_chinese_translation():
    missing = defaultdict(list)
    for problem in catalogues.problems():
        missing[f"{problem.locale}/{problem.area}.po"].append(f"{problem.where} ({problem.what}): {problem.msgid!r}")
    summary = {area: len(lines) for area, lines in missing.items()}
    assert not missing, f"to translate, by catalogue: {summary}\n" + "\n".join(
        line for lines in missing.values() for line in lines)


def test_the_extraction_finds_each_kind_of_message():
    source = ('x = _("plain")\ny = _f("{name} at {value:.2f}", name=n, value=v)\nZ = N_("marked")\n'
              '@check(1, "a check\'s title", visible=True)\ndef f(): pass\n')
    assert [msgid for _line, msgid, _comments in catalogues.extract_text(source)] == [
        "plain", "{name} at {value:.2f}", "marked", "a check's title"]


def entries():
    """(catalogue, msgid, translation) of every translated entry of every PO file."""
    for locale in catalogues.locales():
        for po in sorted((catalogues.HERE / locale / "LC_MESSAGES").glob("*.po")):
            for msgid, text in catalogues.translations(po, locale).items():
                yield f"{locale}/{po.name}", msgid, text


FIELD = re.compile(r"\{([^{}:!]*)[^{}]*\}")


def test_a_translation_has_the_fields_of_its_message():
    wrong = [(where, msgid, text) for where, msgid, text in entries()
             if sorted(FIELD.findall(msgid)) != sorted(FIELD.findall(text))]
    assert wrong == []


# Chinese sets one space between itself and Latin text (code, numbers, names), none beside full-width
# punctuation: a translation's own text keeps the rule, and `fill` keeps it where a field is joined in.
CHINESE_TOUCHES_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9(\[]|[A-Za-z0-9)\]][\u4e00-\u9fff]")


def test_a_translation_s_own_text_spaces_chinese_from_latin():
    wrong = [(where, text) for where, _msgid, text in entries()
             if CHINESE_TOUCHES_LATIN.search(FIELD.sub("\u3000", text))]
    assert wrong == []


@pytest.mark.parametrize("template, fields, text", [
    ("这看起来像是{mistake}", {"mistake": "softmax 之前用 0 填充"}, "这看起来像是 softmax 之前用 0 填充"),
    ("这看起来像是{mistake}", {"mistake": "把 softmax 作用在维度 0 上"}, "这看起来像是把 softmax 作用在维度 0 上"),
    ("{name} 处理{kind}时出错", {"name": "f", "kind": "批次"}, "f 处理批次时出错"),
    ("{kind}形状", {"kind": "dtype"}, "dtype 形状"),
    ("头{h}", {"h": 2}, "头 2"),
    ("{what} 的权重", {"what": "f（x）"}, "f（x）的权重"),
    ("{what}：{detail}", {"what": "f(x)", "detail": "-inf 出现"}, "f(x)：-inf 出现"),
    ("{a}{b}", {"a": "用", "b": "x.T"}, "用 x.T"),
    ("{what} 应返回二元组", {"what": "f(x)，其中 mask 是因果掩码"}, "f(x)，其中 mask 是因果掩码应返回二元组"),
    ("其中 {what}", {"what": "掩码"}, "其中掩码"),
])
def test_fill_joins_chinese_and_latin_with_one_space(template, fields, text):
    assert i18n.fill(template, fields) == text


def english_sentence(text: str) -> str | None:
    """A run of 4 or more English words in `text`, outside `code`, {fields} and identifiers, or None."""
    text = re.sub(r"`[^`]*`|\{[^{}]*\}", " ", text)
    text = re.sub(r"\S*[_0-9()\[\]=.<>/\\]\S*", " ", text)  # identifiers, calls, shapes, paths
    found = re.search(r"[A-Za-z][A-Za-z'-]*(?:[ ,;:]+[A-Za-z][A-Za-z'-]*){3,}", text)
    return found.group(0) if found else None


def test_the_english_finder_finds_a_planted_sentence():
    assert english_sentence("检查 `score_matrix(x)` 的输出：the scores are wrong here") == "the scores are wrong here"
    assert english_sentence("{name} 修改了参数 `x.add_(1)`，形状 (B, T, d)，见 MultiHeadAttention") is None
    assert english_sentence("使用 torch.softmax 与 Dropout") is None


def test_no_chinese_translation_keeps_an_english_sentence():
    found = [(where, msgid, sentence) for where, msgid, text in entries()
             if where.startswith("zh_CN") and (sentence := english_sentence(text))]
    assert found == []


def test_the_compiled_catalogues_match_their_po_files():
    compiled = catalogues.compiled()
    on_disk = {path.relative_to(ROOT).as_posix() for path in catalogues.HERE.glob("*/LC_MESSAGES/*.mo")}
    assert sorted(on_disk) == sorted(compiled), "python -m course.builder compiles them"
    stale = [rel for rel, data in compiled.items() if (ROOT / rel).read_bytes() != data]
    assert stale == [], "python -m course.builder compiles them"


def test_the_self_check_wheel_ships_no_hidden_check_s_message():
    from autograder.instructor.selfcheck_export import only_shipped_messages
    mo = "autograder/i18n/zh_CN/LC_MESSAGES/checks_99.mo"
    files = [("autograder/checks/section_99_x.py", b'SECTION = {"title": "A section"}\n\n\n'
              b'@check(1, "a visible title", visible=True)\ndef f(): pass\n'),
             (mo, mo_bytes({"a visible title": "可见的标题", "a hidden title": "隐藏的标题", "A section": "一节"},
                           "zh_CN"))]
    assert mo_messages(dict(only_shipped_messages(files))[mo]) == (
        "zh_CN", {"a visible title": "可见的标题", "A section": "一节"})


# ---------------------------------------------------------------- the entry points choose the language


def test_the_command_line_speaks_the_language_asked_for_then_english_again(tmp_path, capsys, monkeypatch):
    from autograder.cli import main

    monkeypatch.delenv(i18n.ENVIRONMENT, raising=False)
    missing = tmp_path / "missing"
    assert main(["grade", str(missing), "--lang", "zh"]) == 2
    assert capsys.readouterr().err == f"autograder：错误：{missing}：没有这个文件或文件夹\n"
    assert i18n.language() == "en"
    monkeypatch.setenv(i18n.ENVIRONMENT, "zh")
    assert main(["check", str(missing), "--lang", "en"]) == 2
    assert capsys.readouterr().err == f"autograder: error: {missing}: no such file or folder\n"


def test_an_unknown_language_is_a_bad_command_line(tmp_path, capsys, monkeypatch):
    from autograder.cli import main

    monkeypatch.setenv(i18n.ENVIRONMENT, "fr")
    assert main(["grade", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autograder: error: unknown language 'fr'") and err.count("\n") == 1, err
    assert main(["grade", str(tmp_path), "--lang", "fr"]) == 2
    assert "invalid choice: 'fr'" in capsys.readouterr().err


@pytest.mark.parametrize("verb", ["grade", "check", "batch", "report", "similarity", "export-gradescope",
                                  "export-selfcheck", "classroom-roster"])
def test_each_verb_people_read_has_the_language_flag(verb, capsys):
    from autograder.cli import main

    with pytest.raises(SystemExit):
        main([verb, "--help"])
    assert "--lang {en,zh}" in capsys.readouterr().out


def test_the_notebook_s_metadata_names_its_language():
    from autograder.core.extract import extract
    from autograder.core.submission import SectionSource, written_language
    from autograder.core.sections import SECTIONS

    def notebook(metadata):
        return json.dumps({"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}).encode()

    said = [extract("a.ipynb", notebook(metadata)).language for metadata in (
        {"course": {"language": "zh"}}, {"course": {"language": 3}}, {"course": "zh"}, {}, {"course": {}})]
    assert said == ["zh", None, None, None, None]
    sources = [SectionSource(SECTIONS[0], None, extract("a.ipynb", notebook(m))) for m in ({}, {"course": {"language": "zh"}})]
    assert written_language(sources) == "zh"
    assert i18n.resolve(notebook_language=written_language(sources)) in ("zh", "en")  # the environment may say en


def test_a_chinese_message_of_the_grader_reads_as_chinese(monkeypatch):
    from autograder.core.student import Budget
    from autograder.sandbox import tiers

    i18n.set_language("zh")
    monkeypatch.setattr(tiers.sys, "platform", "linux")
    lines = [tiers.protection_line(None), tiers.protection_line({"layers": [{"id": "landlock_filesystem"}], "missing": []}),
             Budget(60).which(), _f("{what}: wrong values, {detail}", what="softmax(x)", detail="…")]
    assert lines[0] == "自检：这台机器上没有沙箱，公开检查以你自己的身份运行你的代码"
    assert lines[2] == "本节 60 秒的时间预算"
    assert [line for line in lines if english_sentence(line)] == []


def test_the_place_of_an_error_is_worded_from_the_worker_s_data():
    from autograder.core.failures import place, where_raised

    error = {"where": 'the cell "def f(x):", line 3', "cell": 'the cell "def f(x):"', "lineno": 3,
             "line": "return x.T"}
    assert where_raised(error) == ' (the cell "def f(x):", line 3: return x.T)'
    i18n.set_language("zh")
    assert where_raised(error) == '（the cell "def f(x):"，第 3 行：return x.T）'
    forged = {**error, "lineno": "3, line 4"}  # not a line number: the worker's own words, as they came
    assert place(forged) == 'the cell "def f(x):", line 3'
    assert place({**error, "lineno": True}) == 'the cell "def f(x):", line 3'  # a bool is no line number


def test_the_worker_sends_the_line_of_an_error_as_a_number():
    from autograder.worker import student_code, wire

    def cell_code():
        raise ValueError("bad")

    try:
        cell_code()
    except ValueError as error:
        described = student_code.describe_error(error, locate=lambda filename: "cell 1" if filename == __file__
                                                else None)
    assert described["cell"] == "cell 1" and isinstance(described["lineno"], int) and described["lineno"] > 0
    wire.check_reply({"ok": False, "error": described})
    with pytest.raises(wire.WireError):
        wire.check_reply({"ok": False, "error": {**described, "lineno": "12"}})


def test_the_worker_s_memory_limit_is_worded_from_the_number_it_sent():
    """The worker sends the limit as a number (worker/student_code.describe_error); the grader says it,
    and never reads a figure back out of the worker's message (here English from torch)."""
    from autograder.core.failures import describe_failure

    torch_said = "DefaultCPUAllocator: can't allocate memory: you tried to allocate 8589934592 bytes"
    error = {"kind": "memory", "type": "RuntimeError", "message": torch_said, "limit_bytes": 4 * 1024**3}
    no_limit = {**error, "limit_bytes": None}  # Windows, or no limit set: the machine's memory
    small = {**error, "limit_bytes": 512 * 1024**2}
    assert describe_failure("f", error).message == (
        "f raised RuntimeError: your code tried to allocate more than the 4 GiB limit")
    assert describe_failure("f", small).message.endswith("more than the 512 MiB limit")
    assert describe_failure("f", no_limit).message == (
        "f raised RuntimeError: your code tried to allocate more memory than the machine has")
    i18n.set_language("zh")
    assert describe_failure("f", error).message == "f 抛出了 RuntimeError: 你的代码试图分配超过 4 GiB 上限的内存"
    assert describe_failure("f", no_limit).message == "f 抛出了 RuntimeError: 你的代码试图分配的内存超过了本机的内存"


def test_the_worker_sends_its_memory_limit_as_a_number(monkeypatch):
    import resource

    from autograder.worker import student_code, wire

    monkeypatch.setattr(resource, "getrlimit", lambda which: (3 * 1024**3, resource.RLIM_INFINITY))
    error = student_code.describe_error(MemoryError())
    assert error["kind"] == "memory" and error["limit_bytes"] == 3 * 1024**3
    wire.check_reply({"ok": False, "error": error})  # the figure fits the wire's schema
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert student_code.describe_error(MemoryError())["limit_bytes"] is None
    assert "limit_bytes" not in student_code.describe_error(ValueError("not memory"))


def test_update_brings_a_new_message_untranslated_and_a_changed_one_fuzzy(tmp_path):
    source = tmp_path / "autograder" / "cli.py"
    source.parent.mkdir()
    source.write_text('_("the grade is ready for you")\n_("a file is missing")\n', encoding="utf-8")
    folder = tmp_path / "i18n"
    catalogues.update(tmp_path, folder)
    po = catalogues.po_path("zh_CN", "cli", folder)
    catalogue = catalogues.read(po, "zh_CN")
    catalogue["the grade is ready for you"].string = "你的成绩已经出来了"
    po.write_bytes(catalogues.po_text(catalogue))
    assert [(p.where, p.what) for p in catalogues.problems(tmp_path, folder, ["cli"])] == [
        ("autograder/cli.py:2", "untranslated")]
    source.write_text('_("the grade is ready for you now")\n_("a file is missing")\n', encoding="utf-8")
    assert catalogues.update(tmp_path, folder) == [po.relative_to(tmp_path).as_posix()]
    changed = catalogues.read(po, "zh_CN")["the grade is ready for you now"]
    assert changed.fuzzy and changed.string == "你的成绩已经出来了"
    assert [(p.where, p.what) for p in catalogues.problems(tmp_path, folder, ["cli"])] == [
        ("autograder/cli.py:1", "fuzzy"), ("autograder/cli.py:2", "untranslated")]
    assert catalogues.translations(po, "zh_CN") == {}  # a fuzzy translation is not used


def test_a_notebook_that_asks_for_chinese_is_checked_in_chinese_unless_told_otherwise(tmp_path):
    import os
    import subprocess
    import sys

    cell = {"cell_type": "code", "metadata": {}, "source": "%pip install x\n", "outputs": [], "execution_count": None}
    notebook = tmp_path / "01_scores.ipynb"
    notebook.write_text(json.dumps({"cells": [cell], "metadata": {"course": {"language": "zh"}},
                                    "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != i18n.ENVIRONMENT}
    env["PYTHONPATH"] = str(ROOT)

    def check(*flags):
        return subprocess.run([sys.executable, "-m", "autograder", "check", str(notebook), "--report",
                               str(tmp_path / "feedback"), *flags], capture_output=True, text=True, cwd=ROOT,
                              env=env, timeout=300)

    chinese, english = check(), check("--lang", "en")
    assert chinese.returncode == english.returncode == 0, chinese.stderr + english.stderr
    assert "01_scores  不含可训练权重的注意力分数" in chinese.stdout
    assert '! 单元格 "%pip install x"，第 1 行：评分时不运行 %pip' in chinese.stdout
    assert "你的笔记本里没有定义 dot_scores" in chinese.stdout
    assert "01_scores  Attention scores without trainable weights" in english.stdout
    assert '! the cell "%pip install x", line 1: %pip is not run while grading' in english.stdout


def test_an_operation_mixing_devices_is_sent_as_data_and_worded_in_the_reader_s_language():
    from autograder.core.failures import mixing_words
    from autograder.worker import wire

    mixing = {"op": "aten::mm", "devices": ["cpu", "meta"]}
    wire.check_reply({"ok": True, "mixed_devices": [mixing]})
    with pytest.raises(wire.WireError):  # a sentence is no longer what the worker sends
        wire.check_reply({"ok": True, "mixed_devices": ["aten::mm got tensors on cpu and meta"]})
    assert mixing_words(mixing) == "aten::mm got tensors on cpu and meta"
    assert mixing_words({"op": "aten::add", "devices": ["cpu", "cuda", "meta"]}) == (
        "aten::add got tensors on cpu, cuda, meta")
    i18n.set_language("zh")
    assert mixing_words(mixing) == "aten::mm 收到了分别位于 cpu 和 meta 上的张量"
