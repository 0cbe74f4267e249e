#!/usr/bin/env python3
"""Validates JSON files against a JSON Schema with python3-jsonschema (a validator that shares no code
with the program).

  validate_json.py SCHEMA.json FILE.json [FILE.json ...]

Prints one line per invalid file (the file, the path in the document and the reason) and exits 1 when
any file is invalid, 0 when all are valid, 77 when jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
except ImportError as e:  # the test skips, naming what is missing
    print("missing: %s" % e, file=sys.stderr)
    sys.exit(77)


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    bad = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            document = json.load(f)
        for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            print("%s: %s: %s" % (path, where, error.message))
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
