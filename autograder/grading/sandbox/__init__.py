"""Where untrusted code runs: the local process sandbox and the locked-down docker one, their
warm pool and scratch folders, the sealed results they hand back, the untrusted package they are
given and the limits they run under. It imports nothing else of grading: what runs inside knows
nothing of how it is graded."""
