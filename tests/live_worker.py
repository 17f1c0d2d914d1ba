"""Subprocess for the crash test: ``shotjudge live`` on a folder of frames, with vision replaced by a script.

usage: python live_worker.py JOURNAL FRAMES_DIR RECORDS_JSON CALIBRATION DELAY_S
Shot k (1-based) ends at frame 4k-1. The result is the command's own: its console output and exit status.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import judge.cmd_live  # noqa: E402
from judge import cli  # noqa: E402
from rules import parse_record  # noqa: E402
from sim.scripted_vision import ScriptedShot  # noqa: E402


class ScriptedPipeline:
    """Stands in for vision (the ``Vision`` seam): the same records whatever it is told."""

    in_shot = False
    timings: dict = {}

    def __init__(self, records, delay_s):
        self.records, self.delay_s = records, delay_s

    def start(self, hints, frame, t_s):
        pass

    def tell(self, hints):
        pass

    def positions(self):
        return {}

    def prepare(self, image):
        return None  # nothing to work out ahead of feed

    def feed(self, frame):
        time.sleep(self.delay_s)
        k, r = divmod(frame.index + 1, 4)
        return ScriptedShot(self.records[k - 1]) if r == 0 and 1 <= k <= len(self.records) else None

    def finish(self, t_s=None):
        return None


def main():
    journal_path, frames_dir, records_path, calibration, delay_s = sys.argv[1:6]
    with open(records_path, encoding="utf-8") as fh:
        records = [parse_record(r) for r in json.load(fh)]
    judge.cmd_live.make_pipeline = lambda *args, **kwargs: ScriptedPipeline(records, float(delay_s))
    return cli.main(["live", "--game", "novuss", "--source", frames_dir, "--fps", "30", "--calibration", calibration,
                     "--journal", journal_path, "--no-overlay", "--no-clips", "--queue", "1000"])


if __name__ == "__main__":
    sys.exit(main())
