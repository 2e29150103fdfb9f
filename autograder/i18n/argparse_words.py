"""argparse's own words (its usage line, its headings, its errors) in the reader's language.

argparse looks its messages up through the module-level names `_` and `ngettext` it imports from
gettext, at the moment it says them; `speaking()` points those two names at the grader's catalogue
for the length of one command line's parse, and puts gettext's back afterwards. The messages below
are argparse's own templates (Python 3.9 to 3.13), marked here so that the catalogues hold them:
a template argparse has that is not here stays English.
"""
from __future__ import annotations

import argparse
from contextlib import contextmanager

from autograder.i18n import N_, _, _f

# i18n: argparse's headings of a command's help
HEADINGS = (N_("positional arguments"), N_("options"), N_("optional arguments"))
WORDS = (
    # i18n: argparse's usage line begins with this (keep the space at its end)
    N_("usage: "),
    *HEADINGS,
    # i18n: the help of -h/--help
    N_("show this help message and exit"),
    # i18n: argparse's errors; %s and %(name)s are filled in by argparse (an option, a value, a list)
    N_("argument %(argument_name)s: %(message)s"),
    N_("unrecognized arguments: %s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"),
    N_("ignored explicit argument %r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected %s argument"),
    N_("expected %s arguments"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("unexpected option string: %s"),
    N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
)


def headed(help_text: str) -> str:
    """argparse's help with its headings' colons as the current language writes them ("选项：", not "选项:"):
    argparse ends a heading with ':' itself, outside the words it translates."""
    for title in map(_, HEADINGS):
        # i18n: a heading of a command's help, e.g. "options:"
        help_text = help_text.replace(f"\n{title}:\n", "\n" + _f("{title}:", title=title) + "\n")
    return help_text


def _plural(singular: str, plural: str, count: int) -> str:
    return _(singular if count == 1 else plural)


@contextmanager
def speaking():
    """argparse's words in the grader's current language while the block runs (a parse, a help)."""
    saved = argparse._, argparse.ngettext
    argparse._, argparse.ngettext = _, _plural
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved
