"""The class report as a page of the instructor's own server, ``/jaxcourse/report/<assignment>``
beside formgrader: the same page ``jaxcourse report --class`` writes, drawn from the class
directory her server mounts, as it is when she opens it. Only instructors' servers load this
extension (``docker/jupyter-instructor``), and the server's own login guards it: the hub's
OAuth, so no one else's browser can open it.

The page is served with a policy that lets nothing in it run or load: it holds students' names
and their error messages, escaped, and only inline styles and SVG."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

from autograder.core.course import Course
from autograder.core.errors import JaxcourseError
from autograder.grading.record.recorder import results_dir
from classroom import environment
from classroom.classdir import ClassDir

from .class_page import class_view

ROUTE = r"jaxcourse/report/([A-Za-z0-9][A-Za-z0-9_.-]{0,63})"
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"


class ReportPage(JupyterHandler):
    @web.authenticated
    def get(self, assignment: str) -> None:
        from autograder import specs

        where = os.environ.get(environment.CLASS)
        if not where:
            raise web.HTTPError(404, f"this server has no class directory ({environment.CLASS} is not set)")
        try:
            specs.get(assignment)
            checkout = Course.find()
            classdir = ClassDir.open(Path(where))
            page = class_view(checkout, results_dir(classdir.course(checkout), assignment), assignment, classdir)
        except JaxcourseError as err:
            raise web.HTTPError(404, str(err)) from None
        self.set_header("Content-Security-Policy", POLICY)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(page.to_html())

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """The reason in one line of plain text (what to run first, the known assignments)."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        reason = error.log_message if isinstance(error, web.HTTPError) and error.log_message else self._reason
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"{reason}\n")


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    web_app = serverapp.web_app
    web_app.add_handlers(".*$", [(url_path_join(web_app.settings["base_url"], ROUTE), ReportPage)])
