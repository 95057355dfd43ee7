"""Tries to import the code that decides scores (the trusted side, the grading engine, the
delivery code above them, the class and the command line) and looks for their files wherever
Python finds packages: the image's site-packages, the grader's mount at /opt/grader, and the
package's own path. The sandbox holds only core/, specs/, harness/ and untrusted/ (the image's
classroom/ and jaxcourse/ are hidden under empty folders), so the attack finds nothing and the
notebook earns full marks; had it found anything, its cell would raise and the notebook would
get an error."""

EXPECTED = {}
EXTRA_CELL = """import importlib, os, site, sys
import autograder
wanted = ("trusted", "grading", "delivery")
others = ("classroom", "jaxcourse")  # the class and the command line, beside the core in the image
found = []
modules = [*("autograder." + w for w in wanted), "autograder.trusted.verdict", "autograder.grading.pipeline.grader"]
for module in [*modules, "classroom.hub", "classroom.queue.jobs", "classroom.cluster_engines", "jaxcourse.app"]:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name and module.startswith(err.name):
            continue  # not there: what the sandbox must say
        found.append(module + " (there, but its import failed: " + repr(err) + ")")
    except Exception as err:
        found.append(module + " (there, but its import failed: " + repr(err) + ")")
    else:
        found.append(module)
roots = {*site.getsitepackages(), "/opt/grader", *autograder.__path__, *(p for p in sys.path if p)}
for root in sorted(r for r in roots if os.path.isdir(r)):
    for here, dirs, files in os.walk(root):
        if os.path.basename(here) == "autograder":
            found += [os.path.join(here, n) for n in dirs + files if n.split(".")[0] in wanted]
        if os.path.basename(here) in others:
            found += [os.path.join(here, n) for n in files]
if found:
    raise RuntimeError("trusted code in the sandbox: " + ", ".join(sorted(set(found))[:5]))"""
