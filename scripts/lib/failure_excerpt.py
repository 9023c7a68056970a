"""Print the first failed task of an ansible/molecule log, short enough for a CI summary.

scripts/test prints this after its summary table for each failed molecule scenario: CI
shows the end of a run's output, and a scenario's full log (printed where it failed)
scrolls out of that view. Usage: python failure_excerpt.py LOG [MAX_LINES]
"""

import re
import sys

FAILURE = re.compile(r"^(fatal|failed): \[|^ERROR! ")
TASK = re.compile(r"^(TASK|PLAY|RUNNING HANDLER) \[")
LINE_CAP = 400


def excerpt(lines, max_lines):
    """The last failure that was not ignored, under its task's header; else the log's end.

    The last one: scenarios provoke failures on purpose (ignored, or rescued to check what
    they say), and a verifier's block ends with a task that fails with the check that failed.
    """
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if not FAILURE.search(line) or "...ignoring" in "".join(lines[index + 1 : index + 3]):
            continue
        header = next((lines[i] for i in range(index - 1, -1, -1) if TASK.search(lines[i])), None)
        body = lines[index : index + max_lines]
        return ([header] if header else []) + body
    return lines[-max_lines:]


def main():
    path = sys.argv[1]
    max_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with open(path, encoding="utf-8", errors="replace") as log:
        lines = log.read().splitlines()
    for line in excerpt(lines, max_lines):
        print(line if len(line) <= LINE_CAP else line[:LINE_CAP] + " [...]")


if __name__ == "__main__":
    main()
