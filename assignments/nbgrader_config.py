"""nbgrader configuration for the course. The course root is this directory."""

c = get_config()  # noqa: F821 - provided by nbgrader's config loader

c.CourseDirectory.course_id = "jax-distributed"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
# Solution cells become this stub in the release; students replace it.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
# Released notebooks are graded by `jaxcourse grade`; nbgrader's own autograde also works.
c.Execute.timeout = 300
