"""nbgrader, student side: one course and one exchange.

Read through JUPYTER_CONFIG_PATH, by the image and by `jaxcourse lab` without Docker alike. The
image keeps its exchange inside the container; the local fallback sets JAXCOURSE_EXCHANGE to a
folder of its own.
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = os.environ.get("JAXCOURSE_COURSE_ID", "jax-distributed")
c.Exchange.root = os.environ.get("JAXCOURSE_EXCHANGE", "/srv/nbgrader/exchange")
# Where fetched assignments live: the work dir, whatever the server's current directory.
c.Exchange.assignment_dir = os.environ.get("JAXCOURSE_WORK", ".")
