#!/usr/bin/env python3
"""A whole field on a Slurm cluster (docs/python.md): a job array fits the beads, each task a slice of them, and a last
job describes the field from every task's beads. The result is wfs.field()'s on one machine.

    sbatch --array=0-15 --wrap "python3 field_slurm.py fit field.fits out order=4 objective=poisson"
    sbatch --dependency=afterok:JOBID --wrap "python3 field_slurm.py describe field.fits out order=4 objective=poisson"

fit: array task k of n (SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT, which Slurm sets)
fits every n-th bead to fit, starting at the k-th, and writes OUT/beads-k.json. describe: reads OUT/beads-*.json and
writes OUT/beads.csv and OUT/field.json (wavefront-cli field's files), prints the summary, and exits 1 when a bead was
not fitted (a task that failed) or there is no field model.

KEY=VALUE options are wfs.field()'s (crop, threshold, field_order, joint_fit, origin) and reconstruct()'s settings; a
value is read as JSON where it parses (order=4, joint_fit=false, defocus='["-1w", "0", "1w"]'), else as text
(wavelength=600nm). Give both steps the same options.
"""
import argparse
import json
import os
import sys
from pathlib import Path

import wavefront_studio as wfs

DESCRIBE_ONLY = ("field_order", "joint_fit")  # the field model's options, which the beads' fits do not take


def parse_options(pairs):
    options = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            sys.exit(f"field_slurm.py: '{pair}' is not KEY=VALUE")
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = text
    return options


def array_task():
    """This task's number from 0 and the array's size, from the variables Slurm sets."""
    try:
        task = int(os.environ["SLURM_ARRAY_TASK_ID"]) - int(os.environ.get("SLURM_ARRAY_TASK_MIN", "0"))
        return task, int(os.environ["SLURM_ARRAY_TASK_COUNT"])
    except KeyError as e:
        sys.exit(f"field_slurm.py fit: {e.args[0]} is not set: run it as a task of a job array (sbatch --array=0-N)")


def fit(stack, out, options):
    task, count = array_task()
    settings = {k: v for k, v in options.items() if k not in DESCRIBE_ONLY}
    beads = wfs.field_detect(stack, **settings)
    mine = [b["index"] for b in beads if b["status"] == "not-run"][task::count]
    fitted = wfs.field_fit_bead(stack, mine, **settings)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / f".beads-{task}.json.part"
    partial.write_text(json.dumps(fitted))
    partial.replace(out / f"beads-{task}.json")  # whole or absent: describe never reads half a file
    print(f"task {task} of {count}: fitted {len(fitted)} beads into {out / f'beads-{task}.json'}")
    return 0


def describe(stack, out, options):
    fitted = []
    for path in sorted(out.glob("beads-*.json")):
        fitted += json.loads(path.read_text())
    run = wfs.field_describe(stack, fitted, **options)
    (out / "beads.csv").write_text(run.csv())
    (out / "field.json").write_text(run.json())
    print(run.summary(), end="")
    missing = [b["index"] for b in run.beads if b["status"] == "not-run"]
    if missing:
        print(f"field_slurm.py describe: beads {missing} were not fitted: did a task fail?", file=sys.stderr)
    return 1 if missing or run.model is None else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("fit", "describe"))
    parser.add_argument("stack", help="the wide-field z-stack (FITS, TIFF), on a file system every node sees")
    parser.add_argument("out", type=Path, help="the folder of the tasks' beads and the results")
    parser.add_argument("options", nargs="*", metavar="KEY=VALUE")
    args = parser.parse_args()
    step = fit if args.step == "fit" else describe
    return step(args.stack, args.out, parse_options(args.options))


if __name__ == "__main__":
    sys.exit(main())
