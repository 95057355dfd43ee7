"""Grading on a queue: Celery on Redis, workers on any number of Docker hosts, one recorder.

``jobs`` is what travels (plain JSON, size-capped, validated on arrival), ``app`` the Celery
configuration (JSON only, late acknowledgement, one job at a time per slot), ``worker`` what a
worker does with a job (the same ``Grader`` as ``jaxcourse grade``), ``dispatch`` the recorder's
side: enqueue, collect results as they arrive, send again what a dead host never finished.
"""
