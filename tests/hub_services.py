"""The hall's real servers (``bench.hall_servers``) for the tests: a program not installed is a skip that says so."""
import pytest

from bench import hall_servers
from bench.hall_servers import free_port

__all__ = ["Broker", "Postgres", "free_port"]


def Broker(folder):  # noqa: N802 - stands in for the class
    try:
        return hall_servers.Broker(folder)
    except hall_servers.ServerMissing as exc:
        pytest.skip(str(exc))


def Postgres():  # noqa: N802 - stands in for the class
    try:
        return hall_servers.Postgres()
    except hall_servers.ServerMissing as exc:
        pytest.skip(str(exc))
