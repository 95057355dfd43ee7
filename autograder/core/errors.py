"""The one base class of every error the course's tools raise on purpose.

``jaxcourse`` turns any ``JaxcourseError`` into one line and a non-zero exit; anything else that
escapes is a bug in the tools, and keeps its traceback.
"""

from __future__ import annotations


class JaxcourseError(Exception):
    """A problem the user can act on: the message says what is wrong and what to do."""
