"""The class's exchange: students fetch released assignments, submit, and fetch feedback, each
reaching only their own submissions and feedback, whatever their container writes.

nbgrader's own exchange is a shared folder that separates students by Unix user; in a container
per student every student is uid 1000, so a shared folder would let each read the others. Here
the exchange is a JupyterHub service (``service``): a student's server calls it with the token the
hub gave that student, and the service files everything under the hub's name for that token. The
student's server talks to it through nbgrader's exchange plugins (``client``), so nbgrader's
Assignments panel works unchanged; no student container mounts any part of the store (``store``).
"""
