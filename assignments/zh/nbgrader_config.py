"""nbgrader configuration of the course directory `assignments/`.

The builder (`python -m course.builder`) runs `nbgrader generate_assignment` in a
scratch copy of this directory; an instructor may also run nbgrader here
directly (the gradebook and the nbgrader work folders are git-ignored).
"""
c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "attention-course-zh"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"

# nbgrader's exchange (release_assignment, fetch, submit, collect) stays at nbgrader's default,
# /usr/local/share/nbgrader/exchange. To move it, set it here and in a configuration the students' servers
# read as well (e.g. /etc/jupyter/nbgrader_config.py): their fetch and submit never read this file.
# c.Exchange.root = "/srv/nbgrader/exchange"  # for instance

# What a student sees in place of each solution region.
c.ClearSolutions.code_stub = {"python": "# 在这里写你的代码\nraise NotImplementedError()"}
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
