"""The instructor's side of the course: each assignment's and lecture's references, hidden cases
and closed-form targets (one module each), and the secret below.

``SECRET`` salts the seeds of the inputs a grade is decided on (``autograder.core.tasks.case_seed``):
no student can make those inputs, so no answer to them can be looked up, and the counts of data
that only communication may reveal stay unknown. Keep it with the solutions; a class may set its own.
"""

SECRET = "jaxcourse: the inputs a grade is decided on"
