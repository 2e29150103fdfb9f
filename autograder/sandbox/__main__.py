"""`python -m autograder.sandbox`: see probe.py."""
from autograder.sandbox.probe import main

raise SystemExit(main())
