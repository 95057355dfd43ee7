"""What the trusted side's tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def compiles():
    """The programs this process compiles while the test runs, JAX's caches cleared first (a
    program compiled by an earlier test would not be compiled again)."""
    import jax
    from jax._src import monitoring  # JAX's public module can register a listener, not remove it

    jax.clear_caches()
    seen: list[str] = []

    def listen(event: str, duration: float, **_) -> None:
        if event == "/jax/core/compile/backend_compile_duration":  # JAX's, for each program compiled
            seen.append(event)

    jax.monitoring.register_event_duration_secs_listener(listen)
    yield seen
    monitoring.unregister_event_duration_listener(listen)
