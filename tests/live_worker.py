"""Subprocess for the crash test: judges a folder of frames with a scripted pipeline into a journal.

usage: python live_worker.py JOURNAL FRAMES_DIR RECORDS_JSON DELAY_S
Shot k (1-based) ends at frame 4k-1; prints a JSON summary when it finishes.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hardware import ImageFolderSource  # noqa: E402
from judge.journal import Journal  # noqa: E402
from judge.live import run_live  # noqa: E402
from judge.match import Match  # noqa: E402
from novuss_shots import novuss_engine  # noqa: E402
from rules import parse_record  # noqa: E402


class ScriptedPipeline:
    def __init__(self, records, delay_s):
        self.records, self.delay_s = records, delay_s

    def feed(self, frame):
        time.sleep(self.delay_s)
        k, r = divmod(frame.index + 1, 4)
        return [self.records[k - 1]] if r == 0 and 1 <= k <= len(self.records) else []


def main():
    journal_path, frames_dir, records_path, delay_s = sys.argv[1:5]
    records = [parse_record(r) for r in json.load(open(records_path))]
    journal = Journal.open(journal_path, create=True, match={"game": "novuss", "source": frames_dir})
    match = Match(novuss_engine(), journal)
    with ImageFolderSource(frames_dir, fps=30) as source:
        result = run_live(source, ScriptedPipeline(records, float(delay_s)), match, queue_size=1000)
    journal.close()
    print(json.dumps({"resumed": match.resumed_shots, "shots": result.shots, "skipped": result.skipped,
                      "frames": result.frames}))


if __name__ == "__main__":
    main()
