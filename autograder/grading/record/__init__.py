"""What is kept of a class's grading: ``jaxcourse grade`` over every submission (``batch.py``),
each report recorded as it arrives into results.json, feedback, the gradebook and grades.csv
(``recorder.py``, ``gradebook.py``). It sits over the pipeline, which it runs, and the reports,
which it renders; nothing else in grading imports it."""
