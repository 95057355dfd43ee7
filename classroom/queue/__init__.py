"""The grading queue, transport only: Celery on Redis, workers on any number of Docker hosts.

``jobs`` is what travels (plain JSON, size-capped, validated and signed), ``app`` the Celery
configuration (JSON only, late acknowledgement, one job at a time per slot), ``dispatch`` the
sender's side (enqueue, collect results as they arrive, send again what a dead host never
finished), ``inbox`` the class directory's requests to the grading service, ``liveness`` how a
worker says it is alive. Nothing here grades or records: that is ``classroom.grading``'s.
"""
