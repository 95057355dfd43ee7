"""Shared fixtures: JAX's devices, a private copy of the course, the Docker engine and the course's
cpu image, the one-machine Slurm cluster. The helpers the tests share are plain modules under ``tests/helpers/``."""

from __future__ import annotations

import pytest

from autograder.engine import images
from autograder.mesh import use_cpu_devices

from .helpers.cluster import session_cluster
from .helpers.course import REPO, copy_course
from .helpers.engine import clear_dead_classes, engine_lock, unavailable


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--first-parameters",
        action="store_true",
        help="run each parametrized test on its first parameters only (the Python 3.13 container's "
        "run: every test's code on that interpreter, each sweep once, on the host)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--first-parameters"):
        return
    seen: set[tuple[object, str]] = set()
    kept, dropped = [], []
    for item in items:
        key = (item.path, getattr(item, "originalname", item.name))
        (dropped if key in seen else kept).append(item)
        seen.add(key)
    config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def cpu_devices() -> None:
    """The course's 8 simulated devices for the tests that run JAX in this process. It must run
    before JAX starts its backends: ``use_cpu_devices`` fails if they started with fewer (a test
    module that touched JAX at import would make every test fail here, not just some)."""
    use_cpu_devices(8)


@pytest.fixture(scope="session")
def course(tmp_path_factory: pytest.TempPathFactory):
    """One released copy of the course for the whole session."""
    return copy_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def client(tmp_path_factory: pytest.TempPathFactory):
    """The Docker engine, this session's alone (``engine_lock``), cleared of what killed sessions left."""
    try:
        engine = images.connect()
    except images.EngineUnavailable as err:
        unavailable("a Docker engine", str(err))
    with engine_lock():
        mine = tmp_path_factory.getbasetemp()
        cleared = clear_dead_classes(engine, mine.parent, mine)
        if cleared:
            print(f"\nstopped classes a killed test session left running: {', '.join(cleared)}")
        yield engine


@pytest.fixture(scope="session")
def sources(course) -> images.Sources:
    """The checkout's lectures and a fresh release of its assignments."""
    return images.Sources(REPO, REPO / "course", course.nbgrader_root / "release", course.nbgrader_root / "expected")


@pytest.fixture(scope="session")
def cpu_image(client, sources) -> str:
    """``jaxcourse:cpu``, built once per session (seconds when Docker's layer cache is warm)."""
    images.build("cpu", client=client, sources=sources)
    return images.tag("cpu")


@pytest.fixture(scope="session")
def slurm_cluster():
    """``jaxcourse cluster up`` once per session, down at its end; Open MPI needs no daemon."""
    with session_cluster() as where:
        yield where
