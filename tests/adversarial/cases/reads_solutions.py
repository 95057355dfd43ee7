"""Looks everywhere for the reference solutions, the instructor's notebooks and other students'
submissions; none of them may be in the sandbox. {course} is the course's path on the grader's
machine, tried directly as well as by a walk of the whole file system."""

EXPECTED = {}
EXTRA_CELL = """import os
found = [p for p in ("{course}/solutions/collectives.py", "{course}/assignments/submitted") if os.path.exists(p)]
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    for name in files + dirs:
        path = os.path.join(root, name)
        parts = path.split(os.sep)
        course_file = "01_collectives" in parts and {"source", "submitted", "autograded", "feedback"} & set(parts)
        if course_file or path.endswith("solutions/collectives.py") or name == "gradebook.db" and "nbgrader" not in parts:
            found.append(path)
if found:
    raise RuntimeError(f"found {found[:3]}")"""
