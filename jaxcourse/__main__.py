"""``python -m jaxcourse``: the ``jaxcourse`` command without its script."""

import sys

from .app import main

sys.exit(main())
