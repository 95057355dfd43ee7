"""A class on one Docker host: JupyterHub with a container per student, the secure exchange's
deployment, Redis and the grading service's container, and the same on a Docker Swarm.

``authenticator`` says who may log in (from ``classroom.roster``); ``deploy`` starts and stops the
class (``jaxcourse hub up/down``), each service by its entry point; ``quota`` holds each work folder
to its size; the class page and the report page show the class to its instructors. What grades
the class is ``classroom.grading``'s; the exchange itself is ``classroom.exchange``.
"""
