"""Hidden checks: one pytest file per section, run only by the grader."""
