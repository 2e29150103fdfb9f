"""The attention course's autograder: hidden checks run against student code in a worker."""
