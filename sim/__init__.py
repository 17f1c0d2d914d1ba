"""Simulator: physics (pymunk), camera renderer and ground truth for both games."""


def run_scenario(*args, **kwargs):
    """Simulate a scenario and write its files (see :func:`sim.run.run_scenario`); imported lazily so
    ``import sim`` stays light."""
    from .run import run_scenario as _run
    return _run(*args, **kwargs)
