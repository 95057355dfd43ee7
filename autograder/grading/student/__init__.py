"""A student's own checks, from her notebook: ``check(fn)`` judges a function on the visible cases
as the grader would (``self_check.py``) and ``probe(fn)`` shows what it compiles to
(``probe.py``); ``autograder.checks`` is their public face. It sits on top, over the pipeline,
the sandbox and the reports, and nothing in grading imports it."""
