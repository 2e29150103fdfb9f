"""The untrusted side: code that runs next to student code in a worker process.

Nothing in this folder may import the rest of `autograder`, `solutions` or the
hidden checks: the worker is started with only this folder on its path.
"""
