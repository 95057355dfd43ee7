"""The course's autograder and tools.

Public, for notebooks: ``autograder.checks`` (``check``), ``autograder.mesh``
(``use_devices``), ``autograder.launch`` (``launch``), ``autograder.trace`` (``hlo_census``).
Everything else is organised by role (docs/architecture.md): ``core``, ``specs``, ``harness``,
``untrusted``, ``trusted``, ``grading``, ``delivery``, ``cli``.
"""
