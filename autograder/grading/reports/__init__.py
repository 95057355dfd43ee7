"""What is drawn from results: a student's feedback page and its figures, the class's report,
leaderboard and failure reasons, and the similarity of submissions. It reads ``Report`` records
(the submission folder) and notebooks only, never the pipeline nor the sandbox, so a report can
be drawn again from stored results without grading anything."""
