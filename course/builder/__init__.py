"""Build every course notebook from the specs and the reference solutions.

    python -m course.builder          # (re)write all generated files
    python -m course.builder --check  # exit 1 and name every generated file that is out of date

Inputs (hand-written):
    course/notebooks/<id>.py         notebook spec of a section (teaching text, setup, visible tests);
                                     `# %% [test] <name> <weight>`: the cell carries the points of the
                                     checks about <name> (autograder/checks/; several cells of one name
                                     share them by weight), so nbgrader and grades.csv count the same
    course/attention_plots.py        the plotting helper the notebooks import (`show_weights`)
    solutions/<module>.py            reference code, one `# %% <name>` block per graded name
    course/partial_submissions.py    what the partial example submission holds
    course/student_readme.md         the students' README, with {{placeholders}} for the torch
                                     releases the self-check accepts (autograder/instructor/selfcheck_export.py)
    assignments/nbgrader_config.py   the nbgrader course configuration

Outputs (generated, committed, never edited by hand):
    assignments/source/<id>/<id>.ipynb   nbgrader source notebook (solutions between markers)
    student_template/<id>.ipynb          released notebook (what students receive)
    examples/correct/<id>.ipynb          released notebook with the reference code filled in
    examples/partial/<id>.ipynb          released notebook with a mix of right, wrong and blank answers
    examples/correct_py/<id>.py          the reference code as one self-contained Python file
    student_template/attention_plots.py  a copy of the helper (students' repositories need the file)
    student_template/README.md           the students' README (install, check), torch range filled in
    student_template/grader/<wheel>.whl  the grader without the answers (`python -m autograder
                                         export-selfcheck`): students install it to run `check`
    assignments/source/<id>/attention_plots.py, README.md, grader/<wheel>.whl
                                         copies of the helper, the students' README (with a note on
                                         the section) and the wheel: nbgrader releases every file of
                                         the source folder with the notebook, so a folder released
                                         through nbgrader's exchange carries the self-check too. Real
                                         files, never links: assignments/ is a course directory that
                                         instructors copy to their JupyterHub as it is.
    attention_plots.py                   a symbolic link to the helper next to the other notebooks
                                         in examples/correct/ and examples/partial/
    assignments/zh/, student_template/zh/, locale/notebooks.pot
                                         the course in Chinese and the translators' template, written
                                         by course/localized.py from locale/zh_CN/LC_MESSAGES/notebooks.po
                                         (docs/translating.md); every notebook records the language of
                                         its prose in metadata["course"]["language"]

A section whose spec does not exist yet gets only its `correct_py` file. Every
output is a pure function of the inputs: building twice gives identical bytes.

The build is a declared list of steps (course/builder/steps.py), one job each, over these modules:
    layout.py           where inputs and outputs lie
    reference.py        read the reference solutions (`# %% <name>` blocks, BEGIN/END SOLUTION regions)
    specs.py            read the notebook specs (`# %% [kind] args` cells, the common setup)
    notebooks.py        make a section's nbgrader source notebook
    points.py           share out a section's points over its test cells
    nbgrader_release.py release the source notebooks with nbgrader
    readme.py           the students' README
    examples.py         the correct and partial examples
    course/localized.py the other languages (the step ReleaseOtherLanguages), with course/prose.py
                        and course/catalogue.py
    outputs.py          compare the generated files with the disk (--check), or write them
"""
