"""``shotjudge live`` that kills itself (SIGKILL) right after the journal has ``SHOTJUDGE_KILL_AFTER_SEEN``
shot records written ahead: the point between a shot's record and its ruling, which no outside timing can
hit. Everything else is the real command: usage ``python live_crash.py live ARGS...``."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from judge import cli, journal  # noqa: E402

KILL_AFTER = int(os.environ["SHOTJUDGE_KILL_AFTER_SEEN"])
_append_seen = journal.Journal.append_seen


def append_seen(self, *args, **kwargs):
    seq = _append_seen(self, *args, **kwargs)
    if len(self.entries("seen")) >= KILL_AFTER:
        os.kill(os.getpid(), signal.SIGKILL)  # the record is committed; its ruling never will be by this process
    return seq


journal.Journal.append_seen = append_seen

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
