# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validate every record and host report a scenario's runs wrote against docs/schemas/deploy_record.schema.json.

usage: validate_reports.py SCHEMA DIR...  (each DIR a report directory: <run id>/ below it holds the files)

Every *.json below each DIR is checked but the run summaries (summary.json); one line per file, and the exit
status is 1 when any fails, or when no file was found (a scenario that wrote nothing proves nothing)."""

import json
import pathlib
import sys

import jsonschema


def main(argv):
    schema = json.loads(pathlib.Path(argv[1]).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted(p for d in argv[2:] for p in pathlib.Path(d).rglob("*.json") if p.name != "summary.json")
    failed = 0
    for path in files:
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
        print(f"{'ok' if not errors else 'INVALID'} {path}" + "".join(f"\n  {e}" for e in errors[:5]))
        failed += bool(errors)
    if not files:
        print(f"no report found below {', '.join(argv[2:])}")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
