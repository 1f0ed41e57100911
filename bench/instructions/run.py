#!/usr/bin/env python3
"""Instructions per call of each launch path of cuabi's C ABI, under callgrind.

Runs cuabi_instructions (instructions.c) under valgrind's callgrind tool
against the benchmark stand-in driver (fake_driver.c), reads one dump per
measured loop, and prints a table of instructions per call: each path's
count, its difference to the raw driver call, how much of it ran inside the
stand-in driver and how much in cuabi, and its budget. Checks:

  * no path costs more than 5% over its count in budgets.json;
  * cuabi_launch_plan_launch costs at most 150 instructions more than the
    raw cuLaunchKernel call (2 and 16 arguments);
  * cuabi_stream_query answering CUABI_ERROR_NOT_READY costs no more than
    answering CUABI_SUCCESS;
  * every count is a count: a path's instructions per call less the empty
    loop's must be positive (own_count), else it is printed as UNMEASURED,
    never as a number, and the run fails.

A miss names itself ("BUDGET MISSED: ...") and prints callgrind_annotate's
top functions for that path. budgets.json's "accepted_misses" maps a path
("plan/2") to a reason; its misses are then printed with the reason and do
not fail the run.

Exit status 0 when every check holds, 1 when one fails, 77 (skipped) when
valgrind is missing or the build is not the one the budgets were taken on.

  run.py --program BIN --driver LIB [--budgets FILE] [--build-type T]
         [--update] [--json FILE] [--keep DIR]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
TOLERANCE = 0.05  # a path may cost this much over its budget
PLAN_OVER_RAW = 150  # the budget: plan launch vs the raw driver call
# The stand-in's entry points the measured calls reach; what runs inside them
# (their callees included) is the driver's share of a call.
DRIVER_ENTRIES = {"cuLaunchKernel", "cuLaunchKernelEx", "switchable_stream_query"}
LAUNCH_PATHS = [
    ("raw", "cuLaunchKernel (the stand-in's, via dlsym)"),
    ("launch", "cuabi_function_launch"),
    ("sized", "cuabi_function_launch_sized"),
    ("packed", "cuabi_function_launch_packed"),
    ("plan", "cuabi_launch_plan_launch"),
]
NVTX_PATHS = ["nvtx/default", "nvtx/named"]  # reported, not budgeted
QUERY_PATHS = [
    ("raw_query/success", "cuStreamQuery (stand-in) -> CUDA_SUCCESS"),
    ("raw_query/not_ready", "cuStreamQuery (stand-in) -> CUDA_ERROR_NOT_READY"),
    ("query/success", "cuabi_stream_query -> CUABI_SUCCESS"),
    ("query/not_ready", "cuabi_stream_query -> CUABI_ERROR_NOT_READY"),
]


def parse_dump(path):
    """(label, total Ir, Ir inside the stand-in's entry points) of one dump."""
    label, total, driver = None, None, 0
    names = {}  # callgrind's compressed names: "(id) name" once, then "(id)"
    fn = cfn = None
    pending_call = False

    def name_of(value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), value)

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if pending_call:
                pending_call = False
                parts = line.split()
                if cfn in DRIVER_ENTRIES and fn not in DRIVER_ENTRIES and len(parts) >= 2:
                    driver += int(parts[1])
                continue
            if line.startswith("desc: Trigger: Client Request: "):
                label = line[len("desc: Trigger: Client Request: "):].strip()
            elif line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split(":", 1)[1].split()[0])
            elif line.startswith("fn="):
                fn = name_of(line[3:])
            elif line.startswith("cfn="):
                cfn = name_of(line[4:])
            elif line.startswith("calls="):
                pending_call = True
    return label, total, driver


def run_callgrind(args, out_dir):
    env = dict(os.environ)
    env["CUABI_DRIVER_PATH"] = os.path.abspath(args.driver)
    env.pop("CUABI_CACHE", None)
    cmd = [args.valgrind, "--tool=callgrind", "--collect-atstart=no",
           "--callgrind-out-file=" + os.path.join(out_dir, "callgrind.out"),
           args.program, str(args.n), str(args.m)]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        print("instructions: %s exited with %d under callgrind" % (args.program, p.returncode))
        sys.exit(1)
    dumps = {}
    for name in os.listdir(out_dir):
        if not name.startswith("callgrind.out."):
            continue
        path = os.path.join(out_dir, name)
        label, total, driver = parse_dump(path)
        m = re.match(r"path=(\S+) n=(\d+)$", label or "")
        if m and total is not None:
            dumps[(m.group(1), int(m.group(2)))] = (total, driver, path)
    return dumps


def per_call(dumps, path, n, m):
    """Instructions per call and the stand-in's share, from the N and N+M loops."""
    try:
        t0, d0, _ = dumps[(path, n)]
        t1, d1, _ = dumps[(path, n + m)]
    except KeyError:
        print("instructions: no dump for path %s" % path)
        sys.exit(1)
    return (t1 - t0) / m, (d1 - d0) / m


def own_count(total, loop):
    """(a path's own instructions per call, None), its per-call total less
    the empty loop's; or (None, why) when that cannot be a count: a total or
    a loop that is not positive, or a total no larger than the loop (the
    loop's cost would be subtracted from something that does not contain
    it). Never negative, never zero."""
    if loop <= 0 or total <= 0 or total - loop < 0.5:
        return None, ("cannot be counted: %.1f instructions per call less the empty loop's "
                      "%.1f is not a positive count" % (total, loop))
    return round(total - loop), None


def top_functions(dumps, path, n, m, program, lines=14):
    """callgrind_annotate's top functions (inclusive) of a path's longer loop,
    per call, leaving out the measuring program's own frames."""
    annotate = shutil.which("callgrind_annotate")
    if not annotate:
        return "(callgrind_annotate not found)"
    p = subprocess.run([annotate, "--inclusive=yes", dumps[(path, n + m)][2]],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    prog = os.path.realpath(program)
    out = ["  per call  function [object]"]
    for line in p.stdout.splitlines():
        mt = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not mt or prog in mt.group(2) or "below main" in mt.group(2) or \
                "libc_start" in mt.group(2) or "libc-start" in mt.group(2) or \
                "ld-linux" in mt.group(2):
            continue
        ir = int(mt.group(1).replace(",", ""))
        where = re.sub(r"^\?\?\?:", "", mt.group(2))
        out.append("%10.1f  %s" % (ir / float(n + m), where))
        if len(out) > lines:
            break
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--program", help="the cuabi_instructions executable")
    ap.add_argument("--driver", help="the stand-in driver built from fake_driver.c")
    ap.add_argument("--budgets", default=os.path.join(HERE, "budgets.json"))
    ap.add_argument("--build-type", default="", help="the build's CMAKE_BUILD_TYPE")
    ap.add_argument("--valgrind", default=shutil.which("valgrind") or "")
    ap.add_argument("--n", type=int, default=200, help="calls in the shorter loop")
    ap.add_argument("--m", type=int, default=2000, help="calls the longer loop adds")
    ap.add_argument("--update", action="store_true", help="write today's counts as the budgets")
    ap.add_argument("--json", help="write the counts to this file")
    ap.add_argument("--keep", help="keep the callgrind dumps in this folder")
    ap.add_argument("--skip", help="report skipped with this reason (set by CMake)")
    args = ap.parse_args()

    if args.skip:
        print("instructions: skipped: %s" % args.skip)
        return SKIP
    if not args.valgrind or not os.path.exists(args.valgrind):
        print("instructions: skipped: valgrind not found (scripts/deps.sh installs it)")
        return SKIP
    if not args.program or not args.driver:
        ap.error("--program and --driver are required")
    with open(args.budgets, encoding="utf-8") as f:
        budgets = json.load(f)
    want_type = budgets.get("build_type", "Release")
    if args.build_type and args.build_type != want_type and not args.update:
        print("instructions: skipped: the budgets are counts of a %s build, this build is %s"
              % (want_type, args.build_type))
        return SKIP

    out_dir = args.keep or tempfile.mkdtemp(prefix="cuabi-instructions.")
    os.makedirs(out_dir, exist_ok=True)
    try:
        dumps = run_callgrind(args, out_dir)
        loop, _ = per_call(dumps, "loop", args.n, args.m)
        counts, unmeasured = {}, []

        def count(name):
            total, driver = per_call(dumps, name, args.n, args.m)
            value, why = own_count(total, loop)
            if why:
                unmeasured.append("instructions %s: %s" % (name, why))
            return value, round(driver)

        for name, _ in LAUNCH_PATHS:
            for k in (2, 16):
                counts["%s/%d" % (name, k)] = count("%s/%d" % (name, k))
        for name, _ in QUERY_PATHS:
            counts[name] = count(name)
        nvtx = {}
        for name in NVTX_PATHS:
            nvtx[name] = count(name)[0]
        if unmeasured:
            # Never a number for a count that cannot be taken, and never a pass.
            for text in unmeasured:
                print("UNMEASURED: " + text)
            print("FAILED: %d count(s) could not be taken; no budget is checked" % len(unmeasured))
            return 1
        print("instructions per NVTX range push + pop, no tool attached: default domain %d, "
              "named domain %d" % (nvtx["nvtx/default"], nvtx["nvtx/named"]))
        return report(args, budgets, counts, dumps, out_dir)
    finally:
        if not args.keep:
            shutil.rmtree(out_dir, ignore_errors=True)


def report(args, budgets, counts, dumps, out_dir):
    limits = budgets.get("counts", {})
    failures, notes = [], []

    def budget_cell(key):
        b = limits.get(key)
        if b is None:
            notes.append("%s: no budget in %s" % (key, os.path.basename(args.budgets)))
            return "–", ""
        c = counts[key][0]
        if c > b * (1 + TOLERANCE):
            failures.append(("%s costs %d instructions per call, %+.1f%% over its budget of %d "
                             "(tolerance %d%%)" % (key, c, 100.0 * (c - b) / b, b,
                                                   round(TOLERANCE * 100)), key))
            return str(b), "OVER"
        if c < b * (1 - TOLERANCE):
            notes.append("%s: %d, %.1f%% under its budget of %d: lower it (run.py --update)"
                         % (key, c, 100.0 * (b - c) / b, b))
        return str(b), "ok"

    print("Instructions per call against the stand-in driver (callgrind; loop overhead "
          "of %d-call loops subtracted)" % args.m)
    print()
    print("| path | args | instructions | Δ raw | in the stand-in | outside it | budget | |")
    print("|---|---|---|---|---|---|---|---|")
    for name, what in LAUNCH_PATHS:
        for k in (2, 16):
            key = "%s/%d" % (name, k)
            total, driver = counts[key]
            raw = counts["raw/%d" % k][0]
            b, state = budget_cell(key)
            print("| %s | %d | %d | %+d | %d | %d | %s | %s |"
                  % (what, k, total, total - raw, driver, total - driver, b, state))
    for name, what in QUERY_PATHS:
        total, driver = counts[name]
        raw = counts["raw_" + name if not name.startswith("raw_") else name][0]
        b, state = budget_cell(name)
        print("| %s | – | %d | %+d | %d | %d | %s | %s |"
              % (what, total, total - raw, driver, total - driver, b, state))
    print()

    # The budget: a plan launch within 150 instructions of the raw call.
    for k in (2, 16):
        plan, raw = counts["plan/%d" % k][0], counts["raw/%d" % k][0]
        if plan - raw > PLAN_OVER_RAW:
            failures.append(("cuabi_launch_plan_launch (%d args) costs %d instructions, %d above "
                             "the raw driver call (%d); the budget is raw + %d"
                             % (k, plan, plan - raw, raw, PLAN_OVER_RAW), "plan/%d" % k))
        else:
            print("budget holds: cuabi_launch_plan_launch (%d args) %+d vs the raw call "
                  "(budget +%d)" % (k, plan - raw, PLAN_OVER_RAW))
    own = [counts["plan/%d" % k][0] - counts["plan/%d" % k][1] for k in (2, 16)]
    print("cuabi_launch_plan_launch outside the stand-in: %d / %d instructions (2 / 16 args; "
          "the raw call's own set-up: %d)" % (own[0], own[1],
                                             counts["raw/2"][0] - counts["raw/2"][1]))
    nr, ok = counts["query/not_ready"][0], counts["query/success"][0]
    if nr > ok:
        failures.append(("cuabi_stream_query answering NOT_READY costs %d instructions, more "
                         "than answering SUCCESS (%d)" % (nr, ok), "query/not_ready"))
    else:
        print("budget holds: cuabi_stream_query NOT_READY %d <= SUCCESS %d" % (nr, ok))

    def pair(name):
        return "%d / %d" % (counts[name + "/2"][0], counts[name + "/16"][0])

    print("instructions per launch (2 / 16 args): raw %s, launch %s, sized %s, packed %s, "
          "plan %s; stream query success %d, not ready %d"
          % (pair("raw"), pair("launch"), pair("sized"), pair("packed"), pair("plan"),
             ok, nr))
    for n in notes:
        print("note: " + n)

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({k: {"instructions": v[0], "in_driver": v[1]} for k, v in counts.items()},
                      f, indent=2, sort_keys=True)
    if args.update:
        budgets["counts"] = {k: v[0] for k, v in sorted(counts.items())}
        if args.build_type:
            budgets["build_type"] = args.build_type
        with open(args.budgets, "w", encoding="utf-8") as f:
            json.dump(budgets, f, indent=2)
            f.write("\n")
        print("instructions: wrote today's counts to %s" % args.budgets)
        return 0

    accepted = budgets.get("accepted_misses", {})
    for text, key in [f for f in failures if f[1] in accepted]:
        print("BUDGET MISSED (accepted in %s: %s): %s"
              % (os.path.basename(args.budgets), accepted[key], text))
    failures = [f for f in failures if f[1] not in accepted]
    if failures:
        print()
        for text, key in failures:
            print("BUDGET MISSED: " + text)
        shown = set()
        for _, key in failures:
            if key in shown:
                continue
            shown.add(key)
            print()
            print("where the instructions of %s go (callgrind_annotate --inclusive=yes, "
                  "over %d calls):" % (key, args.n + args.m))
            print(top_functions(dumps, key, args.n, args.m, args.program))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
