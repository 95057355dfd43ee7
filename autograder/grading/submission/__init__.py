"""One submission as every other folder sees it: where it lies (``submissions.py``), its notebook
read into cells (``notebooks.py``), and its grading's outcome as results.json stores it
(``report.py``). It imports nothing else of grading, so the pipeline that writes a ``Report``,
the reports that draw one and the record that keeps one all read the same types."""
