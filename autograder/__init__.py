"""The course's autograder and tools.

Public, for notebooks: ``autograder.checks`` (``check``), ``autograder.mesh``
(``use_devices``), ``autograder.launch`` (``launch``), ``autograder.trace`` (``hlo_census``).
Everything else is organised by role (docs/architecture.md): ``core``, ``specs``, ``harness``,
``untrusted``, ``trusted``, ``grading``, ``delivery``, ``engine``. This is the grader's core: it
imports nothing of ``classroom`` (running a class) or ``jaxcourse`` (the command line).
"""
