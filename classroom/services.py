"""The class's services, each named once by the command that starts it.

Each is an entry point of the package (``[project.scripts]`` in pyproject.toml), installed on the
PATH of every image that installs the package: the hub's and the course's. A module's path written
as a string (``python -m ...``) moved with the module and failed only when a class started;
tests/classroom/test_services.py holds each name to pyproject and to the function it runs.
"""

from __future__ import annotations

GRADING = "jaxcourse-grading-service"  # grades each submission on arrival: classroom/grading/service.py
EXCHANGE = "jaxcourse-exchange"  # the class's exchange, a service of the hub: classroom/exchange/service.py
QUOTA = "jaxcourse-quota"  # holds each work folder to its quota, a service of the hub: classroom/hub/quota.py
