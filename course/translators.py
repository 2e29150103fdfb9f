"""The translators' command: the gettext template of the course's English prose, and its catalogues.

    python -m course.translators update      # rewrite the template, merge it into every catalogue
    python -m course.translators init fr     # start the catalogue of a new language (locale fr)

What the catalogues are and how they are read lives in course/catalogue.py; the English units come
from the build (course/localized.py). This module sits above both, so neither imports the other back.
"""
from __future__ import annotations

import argparse
import sys

from course import catalogue, localized


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.translators", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "init"],
                        help="update: rewrite the template, merge it into the catalogues; init: start a language")
    parser.add_argument("locale", nargs="?", help="with init: the new catalogue's locale (e.g. fr, pt_BR)")
    args = parser.parse_args(argv)
    if args.command == "init" and not args.locale:
        parser.error("init needs a locale")
    messages = localized.english_messages()
    if args.command == "init":
        print(catalogue.init(args.locale, messages))
        return 0
    for line in catalogue.update(messages):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
