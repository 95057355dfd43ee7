"""A dishonest student's helper, pasted as one cell before every graded function: it writes nothing
of its own and looks for an answer wherever the installed package could hold one. Each graded
function then calls ``answer(name, *args)``, which returns the first candidate's result that does
not raise, and raises ``NotImplementedError`` when no candidate answers.

Where it looks: every module of the installed ``autograder`` package (a function named as the graded
one, or whose name says oracle, reference, solution or closed form), the task records themselves
(every callable field of the task of that name), and a ``solutions`` package wherever Python can
import one. ``tests/adversarial/test_no_answers.py`` proves that it finds the references where
they are (the instructor's checkout) and that a student who hands it in scores 0.
"""

import dataclasses
import importlib
import inspect
import pkgutil

WORDS = ("oracle", "reference", "solution", "closed_form", "answer")


def _modules(package):
    yield package
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".", onerror=lambda name: None):
        if info.name.endswith("__main__"):
            continue  # a command's entry point runs when imported
        try:
            yield importlib.import_module(info.name)
        except Exception:
            continue


def _packages():
    found = []
    for name in ("autograder", "solutions"):
        try:
            found.append(importlib.import_module(name))
        except Exception:
            continue
    return found


def candidates(name, worded=True):
    """Every callable that might compute ``name``'s answer, the likeliest first: a function of that
    name, a closed form kept for that task, a callable field of its task record, then (``worded``)
    any function whose name says what it is."""
    named, kept, said = [], [], []
    for package in _packages():
        for module in _modules(package):
            for attr, value in list(vars(module).items()):
                if getattr(value, "__module__", None) == __name__ or inspect.isclass(value):
                    continue
                if callable(value) and attr.strip("_") == name:
                    named.append(value)
                elif callable(value) and any(word in attr.lower() for word in WORDS):
                    said.append(value)
                elif attr == "TARGETS" and isinstance(value, dict) and name in value:
                    kept += [v for v in vars(value[name]).values() if callable(v)]
    try:
        from autograder.specs import ASSIGNMENTS, EXERCISES

        for assignment in (*ASSIGNMENTS.values(), *EXERCISES.values()):
            for task in assignment.tasks:
                if task.name == name:
                    kept += [getattr(task, f.name) for f in dataclasses.fields(task) if callable(getattr(task, f.name))]
    except Exception:
        pass
    return named + kept + (said if worded else [])


def answer(name, *args, **kwargs):
    for candidate in candidates(name):
        try:
            return candidate(*args, **kwargs)
        except Exception:
            continue
    raise NotImplementedError(f"no reference for {name} in reach")
