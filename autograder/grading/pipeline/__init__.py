"""Grading one submission: its notebook read, its tests planned, run sealed in a sandbox, its
results read back, measured against the references on the trusted side, and scored into a
``Report``; ``stages.py`` declares these stages in order and is the module to open first. It may
import the sandbox and the submission's records below it, never the reports nor the record above
it, which read what it returns."""
