"""Running a class on the grader's core: the hub and its services (``hub``), the exchange that
carries assignments and submissions (``exchange``), who is in it (``roster``), the class's grading
(``grading``: on submit, a whole class, formgrader's button, a worker) over the queue that carries
its jobs (``queue``), a Docker Swarm, and the Slurm and Open MPI engines with a one-machine cluster to try them on.

The core (``autograder``) imports none of it. The class plugs in where the core leaves a seam: a
cluster engine is an entry point of ``jaxcourse.engines`` that the launcher loads by name; a
queue or the hub's grading service is a ``GradeMany`` that ``grading.record.batch.grade_class`` runs; a
Swarm's placement of students' servers is a ``hub.deploy.Placement``. docs/architecture.md.
"""
