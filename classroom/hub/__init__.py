"""A class on one Docker host: JupyterHub with a container per student, the roster, the secure
exchange's deployment and the grading service that grades each submission as it arrives.

``roster`` and ``authenticator`` say who may log in; ``deploy`` starts and stops the class
(``jaxcourse hub up/down``); ``grading_service`` records what the queue's workers grade. The
exchange itself (the service and the students' client) is in ``delivery/exchange``.
"""
