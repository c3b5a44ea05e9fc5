#!/usr/bin/env python3
# kcidb_check.py - validate a KCIDB document against tests/kcidb/kcidb-v5.schema.json: SCHEMA FILE.
#
# Prints "valid" and exits 0, or prints one line saying where the document
# first breaks the schema and exits 1 (2 when the schema itself is bad).  The
# validator is python3-jsonschema's: the tests never check a document by hand.
import json
import sys

import jsonschema
from jsonschema.exceptions import best_match


def where(path):
    return "/" + "/".join(str(p) for p in path)


def main():
    if len(sys.argv) != 3:
        print("usage: kcidb_check.py SCHEMA FILE", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"the schema is bad: {e.message}", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[2], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"not JSON: {e}")
        return 1
    error = best_match(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(doc))
    if error is not None:
        # repr() keeps a hostile value on one line
        print(f"invalid at {where(error.absolute_path)}: {error.message!r}"[:400])
        return 1
    print("valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
