"""Writes its own results file claiming full marks, then leaves before the runner can write
the real one. The file is checked field by field on the grader's side and refused."""

STATUS = "invalid"
MESSAGE = "invalid results: malformed results"
EXTRA_CELL = """import json, os, sys
fake = {"version": 1, "notebook": {"status": "ok", "message": ""}, "meshes": {}, "tests": {}, "score": 50}
with open(os.path.join(sys.argv[3], "results.json"), "w") as f:
    json.dump(fake, f)
os._exit(0)"""
