"""nbgrader, student side: one course and one exchange.

Read through JUPYTER_CONFIG_PATH, by the image and by `jaxcourse lab` without Docker alike. On its
own, the image keeps its exchange inside the container (the local fallback sets JAXCOURSE_EXCHANGE
to a folder of its own). Spawned by the class hub, it gets JAXCOURSE_EXCHANGE_URL: Fetch, Submit
and Fetch Feedback then go to the hub's exchange service, as this student (the hub's token), and
an instructor's server (JAXCOURSE_INSTRUCTOR) gets the class directory as nbgrader's course root.
"""

import os

from classroom import environment

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = os.environ.get(environment.COURSE_ID, "jax-distributed")
c.Exchange.root = os.environ.get(environment.EXCHANGE, "/srv/nbgrader/exchange")
# Where fetched assignments live: the work dir, whatever the server's current directory.
c.Exchange.assignment_dir = os.environ.get(environment.WORK, ".")

if os.environ.get(environment.EXCHANGE_URL):
    plugins = "classroom.exchange.client"
    c.ExchangeFactory.list = f"{plugins}.ExchangeList"
    c.ExchangeFactory.fetch_assignment = f"{plugins}.ExchangeFetchAssignment"
    c.ExchangeFactory.submit = f"{plugins}.ExchangeSubmit"
    c.ExchangeFactory.fetch_feedback = f"{plugins}.ExchangeFetchFeedback"

if os.environ.get(environment.INSTRUCTOR) and os.environ.get(environment.CLASS):
    c.CourseDirectory.root = os.environ[environment.CLASS]
    # The class's own gradebook, whatever the server's current directory (the course's config
    # names it relative to the course root).
    c.CourseDirectory.db_url = f"sqlite:///{os.environ[environment.CLASS]}/gradebook.db"
    # formgrader's Autograde runs no student code in this server: nbgrader's Execute step is the
    # class's grading service, whose workers grade in their sandboxes (classroom/grading/formgrader.py).
    from classroom.grading.formgrader import AUTOGRADE_PREPROCESSORS

    c.Autograde.autograde_preprocessors = AUTOGRADE_PREPROCESSORS
