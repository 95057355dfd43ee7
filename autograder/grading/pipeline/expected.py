"""The records a student's check judges against, shipped with the course as data.

A student's image holds no reference: no solution, no closed form that answers an exercise, no
hidden case. What ``check(fn)`` and ``jaxcourse check`` need to judge the visible cases exactly as
the grader does (each case's expected values, the reference program's census, the closed-form
targets evaluated on the case) is computed from the instructor's references by ``jaxcourse
release``, for the visible cases only and on unsalted seeds, and shipped as JSON and ``.npz``
files: ``<nbgrader root>/expected/<assignment or lecture>/<record key>.{json,npz}``. The image
copies them to ``/opt/jaxcourse/expected`` and names that folder in ``JAXCOURSE_EXPECTED``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...core import environment
from ...core.course import Course, CourseError
from ...core.mesh import MeshSpec, default_device_count
from ...core.tasks import Assignment
from ...engine import images
from .plan import plan
from .references import Provider, ensure, record_key

ENV = environment.EXPECTED
FOLDER = "expected"
TIMEOUT = 600.0  # seconds to compute one assignment's records (03's layouts start processes)


def folder_name(assignment: Assignment) -> str:
    """``lecture 05_sharded_matmul`` -> ``lecture_05_sharded_matmul``."""
    return assignment.name.replace(" ", "_")


def find_store(assignment: Assignment, course: Course | None = None) -> Path | None:
    """The folder of ``assignment``'s shipped records: under ``JAXCOURSE_EXPECTED`` when it is
    set (the image), else under the course's own release (``course``, or the one the working
    directory is in), else, outside any course, under the release of the checkout this package
    was installed from (``make venv``: a student's check from their work folder), if there is one."""
    env = os.environ.get(ENV)
    if env:
        root: Path | None = Path(env)
    else:
        try:
            root = (course or Course.find()).nbgrader_root / FOLDER
        except CourseError:
            root = installed_root()
    if root is None:
        return None
    store = root / folder_name(assignment)
    return store if store.is_dir() else None


def installed_checkout() -> Path | None:
    """The course checkout this package was installed from (an editable install, as ``make venv``
    makes it), or None for a package installed from a wheel (the image)."""
    try:
        return images.find_repo(Path(__file__).parents[3])
    except images.ImageError:
        return None


def installed_root() -> Path | None:
    """Where ``jaxcourse release`` writes the records in the checkout this package was installed
    from (``images.Sources``: the folder the local lab names in ``JAXCOURSE_EXPECTED``)."""
    checkout = installed_checkout()
    return images.Sources.of(checkout).expected if checkout is not None else None


def ship(course: Course, assignment: Assignment, root: Path | None = None) -> Path:
    """Compute ``assignment``'s records for its visible cases from the course's solutions and
    write them, and nothing else, into ``root`` (the course's ``expected/``); returns the folder."""
    provider = Provider.solutions(course, assignment, salted=False)
    tests = plan(assignment.name, assignment.tasks, provider.salt, provider.targets)
    devices = max([default_device_count()] + [MeshSpec.parse(t.case.mesh).size for t in tests])
    cache = course.nbgrader_root / ".jaxcourse" / "reference" / folder_name(assignment)
    prefixes = ensure(provider, tests, cache, devices, TIMEOUT)
    store = (root or course.nbgrader_root / FOLDER) / folder_name(assignment)
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    for test in tests:
        for suffix in (".json", ".npz"):
            made = Path(prefixes[test.id]).with_suffix(suffix)
            if made.is_file():
                shutil.copyfile(made, (store / record_key(test.sig, test.seed)).with_suffix(suffix))
    return store
