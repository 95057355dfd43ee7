"""A notebook whose own cell raises before anything can be graded."""

STATUS = "error"
EXTRA_CELL = "raise RuntimeError('I broke my notebook')"
