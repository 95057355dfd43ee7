"""What talks to the Docker engine: the course's images (``images.py``), a container's life
(``containers.py``) and its health (``health.py``). Below every role that starts containers: the
sandbox, the lab, the hub and the queue's workers."""
