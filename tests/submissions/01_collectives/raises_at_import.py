"""A notebook whose own cell raises before anything can be graded: the whole submission is an
error, and the message names the cell, the exception and its text."""

STATUS = "error"
MESSAGE = "raised RuntimeError at line 1: I broke my notebook"
EXTRA_CELL = "raise RuntimeError('I broke my notebook')"
