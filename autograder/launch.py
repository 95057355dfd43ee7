"""Public: ``launch(fn, num_processes=2, devices_per_process=4)`` runs JAX in several processes."""

from .harness.launch import LaunchError, launch

__all__ = ["LaunchError", "launch"]
