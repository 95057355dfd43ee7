"""The path of one submission through the packages: `jaxcourse grade` on one solved notebook of
01_collectives (``--sandbox process``), every function of ``jaxcourse``, ``classroom`` and
``autograder`` it calls in the grading process, in the order it first calls them.

    .venv/bin/python benchmarks/grade_path.py [--before REV] [--list]

Prints how many functions and modules the path visits; the modules of the layers that carry the
submission (the command, the class, grading) in the order their functions are first called, and
how often that order moves from one module to another (a path that goes into a module, out and
back in again moves more); and every call from a lower layer up into a higher one. The sandbox's runner and the trusted worker are processes of
their own, started by the path and counted as the one call that starts them. Functions run while
a module is imported are not the submission's and are left out. With ``--before REV``, the same
submission graded by the package at REV (a commit of this repository) first, in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PACKAGES = ("jaxcourse", "classroom", "autograder")
ASSIGNMENT = "01_collectives"


# The packages' layers, top down, as the import contracts have them (pyproject.toml); the same
# for every revision, so that two revisions are counted alike whatever their folders.
LAYERS = (
    "jaxcourse",
    "classroom",
    "autograder.delivery",
    "autograder.grading",
    "autograder.trusted autograder.untrusted autograder.engine",
    "autograder.harness",
    "autograder.specs",
    "autograder.core",
)


def layer(module: str) -> int:
    """A module's layer, 0 at the top; the notebooks' facades (``autograder.checks``) sit on top."""
    for rank, names in enumerate(LAYERS):
        if any(module == name or module.startswith(name + ".") for name in names.split()):
            return rank
    return -1


def driving(module: str) -> bool:
    """A module of the layers that carry a submission from the command to its grade (the command,
    the class, grading); the layers below are the tools they use."""
    return 0 <= layer(module) <= LAYERS.index("autograder.grading")


def trace(course_root: Path) -> list[tuple[str, str, str]]:
    """Grade the one submission under ``course_root`` here, and return the (module, function,
    calling module) of each function in the order they were first called."""
    import jaxcourse

    root = str(Path(jaxcourse.__file__).resolve().parent.parent)
    seen: dict[tuple[str, str], str] = {}

    def at_import(frame) -> bool:
        while frame is not None and frame.f_globals.get("__name__") != "__main__":
            if frame.f_code.co_name == "<module>":
                return True
            frame = frame.f_back
        return False

    def profile(frame, event, arg):
        code = frame.f_code
        if event != "call" or code.co_name.startswith("<") or not code.co_filename.startswith(root):
            return
        key = (frame.f_globals.get("__name__", "?"), code.co_qualname)
        if key[0].startswith(PACKAGES) and key not in seen and not at_import(frame.f_back):
            seen[key] = frame.f_back.f_globals.get("__name__", "?") if frame.f_back else "?"

    os.chdir(course_root)
    argv = ["grade", ASSIGNMENT, "--sandbox", "process", "--jobs", "1", "--quiet"]
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        code = jaxcourse.main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    if code:
        sys.exit(f"jaxcourse {' '.join(argv)} exited {code}")
    return [(module, name, caller) for (module, name), caller in seen.items()]


def summary(calls: list[tuple[str, str, str]]) -> dict:
    modules = [module for module, _, _ in calls if driving(module)]
    path = [name for i, name in enumerate(modules) if i == 0 or name != modules[i - 1]]
    upward = sorted({f"{caller} -> {module}" for module, _, caller in calls if 0 <= layer(module) < layer(caller)})
    return {
        "functions": len(calls),
        "modules": len({module for module, _, _ in calls}),
        "driving": len(set(modules)),
        "moves": len(path) - 1,
        "upward": upward,
        "path": path,
        "calls": [f"{module}.{name}" for module, name, _ in calls],
    }


def measured(python: str, checkout: Path, course_root: Path) -> dict:
    """The summary of one grading, run by ``python`` (whose packages are ``checkout``'s)."""
    done = subprocess.run(
        [python, str(Path(__file__).resolve()), "--trace", str(course_root)],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"grading under {checkout} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def one_submission(tmp: Path, python: str, checkout: Path, source: Path | None) -> Path:
    """A private copy of ``checkout``'s course with one solved notebook submitted (``source``'s,
    where given, so that both revisions grade the very same file)."""
    root = tmp / f"course-{checkout.name}"
    make = (
        "from pathlib import Path; import sys; sys.path.insert(0, '.');"
        "from tests.helpers.course import copy_course, solved_notebook, write_submission;"
        f"course = copy_course(Path({str(root)!r}));"
        f"write_submission(course.nbgrader_root / 'submitted', 'ada', solved_notebook(course, assignment={ASSIGNMENT!r}), {ASSIGNMENT!r})"
    )
    subprocess.run([python, "-c", make], cwd=checkout, check=True, capture_output=True)
    if source is not None:
        shutil.rmtree(root / "assignments" / "submitted")
        shutil.copytree(source / "assignments" / "submitted", root / "assignments" / "submitted")
    return root


def show(label: str, result: dict, listing: bool) -> None:
    print(
        f"{label}: {result['functions']} functions in {result['modules']} modules; "
        f"{result['driving']} modules of the command, the class and grading, "
        f"{result['moves']} moves between them; {len(result['upward'])} calls up a layer"
    )
    print("  path: " + " -> ".join(module.split(".", 1)[-1] for module in result["path"]))
    for call in result["upward"]:
        print(f"  up: {call}")
    if listing:
        for call in result["calls"]:
            print(f"    {call}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="the same submission graded by the package at REV first")
    parser.add_argument("--list", action="store_true", help="every function, in the order first called")
    parser.add_argument("--trace", type=Path, help=argparse.SUPPRESS)  # the grading process itself
    args = parser.parse_args()
    if args.trace:
        print(json.dumps(summary(trace(args.trace))))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.revisions import REPO, checkout_at, python_for

    with tempfile.TemporaryDirectory() as tmp:
        here = one_submission(Path(tmp), sys.executable, REPO, None)
        if args.before:
            old = checkout_at(args.before, Path(tmp) / "before")
            python = python_for(old, Path(tmp) / "venv-before")
            show(f"at {args.before}", measured(python, old, one_submission(Path(tmp), python, old, here)), args.list)
        show("this checkout", measured(sys.executable, REPO, here), args.list)


if __name__ == "__main__":
    main()
