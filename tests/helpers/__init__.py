"""Helpers the tests share, one module per concern: the course and its notebooks (``course``),
the known-wrong submissions and attacks (``submissions``), the grading snapshot (``snapshot``),
the source notebooks' solution regions (``notebooks``), the Docker engine (``engine``) and the
image tests' containers and browser (``images``, ``browser``).

Plain functions and constants only: fixtures live in the conftest files, and no test module
imports another test module or a conftest (``tests/test_suite_layout.py`` checks both).
"""
