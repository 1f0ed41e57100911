#!/usr/bin/env python3
"""Instructions per launch through each binding, under callgrind.

Each binding's benchmark program has an ``instructions`` mode:

    PROGRAM... instructions --path PATH --count N

which sets up (device, stream, the empty kernels, the reference library's
raw CUfunction) against the stand-in driver and then makes N calls of PATH
(``raw/2``: the language's own cuLaunchKernel through its FFI; ``plan/2``,
``packed/16`` ...: cuabi's paths, as its paired series name them) and exits.
This script runs each (program, path) twice under callgrind, with N and with
N + M calls, and takes (Ir(N + M) - Ir(N)) / M: set-up, start-up and exit
cancel, and what is left is one call's instructions, the same on any
machine with the same compiler, C library and runtime.

What to run comes from ``bench/instructions/bindings/*.json``, one file per
implementation:

    {"impl": "py_ctypes", "label": "Python ctypes",
     "command": ["{python}", "{repo}/bench/python/bench_lowlevel.py"],
     "env": {"CUABI_BACKEND": "ctypes"},
     "needs": ["{python}"],             # files that must exist, else skipped
     "build": [["cargo", "build", ...]], # optional: run (in order) when a
                                        # need is missing, then look again
     "paths": {"raw/2": "what it is", "plan/2": "...", ...},
     "budgets": {"raw/2": 12345, ...},  # instructions per call
     "tolerance": 0.05,                 # optional, default 5%
     "accepted_misses": {"plan/2": "why"}}

Placeholders: {python} {repo} {build} {carry}. The environment also gets
CUABI_DRIVER_PATH (the stand-in, for cuabi), LD_LIBRARY_PATH starting with a
folder whose libcuda.so.1 is the stand-in (for the binding's own raw calls,
which open "libcuda.so.1" as they do on a GPU machine), then libcuabi's
folder; CUABI_BENCH_REFERENCE (the reference library built against the
stand-in) and CUABI_LIBRARY.

A count is taken only where the runs agree (measure, linear_count): two runs
give it when it is positive and well inside its budget; otherwise further
runs, at N + 2M and N + 3M calls, must put at least three points on one
line of positive slope. A run can carry work that the others do not (a
collection, a compile), and a count from two such runs could come out as
anything, negative included; a count that cannot be taken is printed as
UNMEASURED, with every point, never as a number, and fails the run.

Checks: each path measured, and at most `tolerance` over its budget (a path
well under it is noted). Exit 0 when all hold, 1 on a miss or a count that
could not be taken, 77 when valgrind is missing.

  bindings.py --build DIR --reference LIB --driver LIB [--only impl,...]
              [--carry DIR] [--n 200] [--m 2000] [--update] [--json FILE]
"""
import argparse
import atexit
import glob
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SKIP = 77
COLLECTED = re.compile(r"==\d+== Collected : (\d+)")


def expand(value, subst):
    for k, v in subst.items():
        value = value.replace("{" + k + "}", v)
    return value


def instructions(cmd, env, path, count, valgrind):
    full = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd + [
        "instructions", "--path", path, "--count", str(count)]
    p = subprocess.run(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    m = COLLECTED.findall(p.stdout)
    if p.returncode != 0 or not m:
        tail = "\n".join(p.stdout.splitlines()[-25:])
        raise RuntimeError("%s (path %s, %d calls) exited with %d under callgrind:\n%s"
                           % (" ".join(cmd), path, count, p.returncode, tail))
    return int(m[-1])


LINEAR = 0.02  # successive slopes of one count agree within this much (or 2 instructions)


def _slope(p, q):
    return (q[1] - p[1]) / float(q[0] - p[0])


def linear_count(points, linear=LINEAR):
    """Instructions per call from (calls, Ir) points of separate runs, or None
    when no three of them lie on one line of positive slope. A run can carry
    work the others do not (a collection, a compile, a thread's exit), so a
    count is taken only where at least three runs agree: the widest set of
    points (in order of calls) whose successive slopes are all positive and
    agree within ``linear``; the count is the slope between its ends. Never
    negative, never zero."""
    points = sorted(points)
    for size in range(len(points), 2, -1):
        for chosen in itertools.combinations(points, size):
            slopes = [_slope(p, q) for p, q in zip(chosen, chosen[1:])]
            low, high = min(slopes), max(slopes)
            if low > 0 and high - low <= max(linear * high, 2.0):
                return _slope(chosen[0], chosen[-1])
    return None


def measure(run, n, m, budget=None, tolerance=0.05):
    """(instructions per call or None, the (calls, Ir) points, why not).

    ``run(calls)`` is Ir of one run making that many calls. Two runs, N and
    N + M calls, give the count when it is positive and within half the
    tolerance of ``budget`` (no decision hangs on it). Otherwise (no budget,
    near or past its edge, zero or negative) a third run at N + 2M, and a
    fourth at N + 3M when the three disagree, must confirm it on one line
    (linear_count); when they cannot, the count cannot be taken, and the
    reason says so with every point."""
    points = [(n, run(n)), (n + m, run(n + m))]
    two = _slope(points[0], points[1])
    if two > 0 and budget and abs(two - budget) <= budget * tolerance / 2:
        return two, points, None
    for k in (2, 3):
        points.append((n + k * m, run(n + k * m)))
        count = linear_count(points)
        if count is not None:
            return count, points, None
    return None, points, (
        "cannot be counted: %s are not linear in the number of calls (no three runs agree "
        "within %g%%)" % (", ".join("Ir(%d) = %d" % p for p in points), 100 * LINEAR))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="folder of libcuabi.so")
    ap.add_argument("--reference", help="libcuabi_bench_reference built against the stand-in")
    ap.add_argument("--driver", help="the stand-in driver (fake_driver.c)")
    ap.add_argument("--carry", default=os.path.join(REPO, ".carry", "bench"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", default="", help="implementations to run (default: all)")
    ap.add_argument("--specs", default=os.path.join(HERE, "bindings"))
    ap.add_argument("--valgrind", default=shutil.which("valgrind") or "")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--update", action="store_true", help="write today's counts as budgets")
    ap.add_argument("--json", help="write the counts to this file")
    ap.add_argument("--skip", help="report skipped with this reason (set by CMake)")
    args = ap.parse_args()
    if args.skip:
        print("instructions (bindings): skipped: %s" % args.skip)
        return SKIP
    if not args.valgrind or not os.path.exists(args.valgrind):
        print("instructions (bindings): skipped: valgrind not found")
        return SKIP
    if not args.reference or not args.driver:
        ap.error("--reference and --driver are required")
    build = os.path.abspath(args.build)
    # The interpreter itself, not a launcher that execs it (a pyenv shim, a
    # wrapper script): callgrind follows no exec, so it would count the
    # launcher alone.
    try:
        python = subprocess.run([args.python, "-c", "import sys; print(sys.executable)"],
                                stdout=subprocess.PIPE, universal_newlines=True,
                                check=True).stdout.strip() or args.python
    except (OSError, subprocess.CalledProcessError):
        python = args.python
    subst = {"python": python, "repo": REPO, "build": build,
             "carry": os.path.abspath(args.carry)}
    only = {s for s in args.only.split(",") if s}

    env = dict(os.environ)
    driver_dir = tempfile.mkdtemp(prefix="cuabi-instructions-driver.")
    atexit.register(shutil.rmtree, driver_dir, True)
    os.symlink(os.path.abspath(args.driver), os.path.join(driver_dir, "libcuda.so.1"))
    env.update({
        "CUABI_DRIVER_PATH": os.path.abspath(args.driver),
        "CUABI_BENCH_REFERENCE": os.path.abspath(args.reference),
        # The stand-in loads any image: the reference skips its NVRTC compile.
        "CUABI_BENCH_REFERENCE_STANDIN": "1",
        "CUABI_LIBRARY": os.path.join(build, "libcuabi.so"),
        "LD_LIBRARY_PATH": driver_dir + ":" + build +
                           (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""),
        "PYTHONPATH": os.path.join(REPO, "bindings", "python") +
                      (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    env.pop("CUABI_CACHE", None)

    failures, notes, results, ran = [], [], {}, 0
    unmeasured = []  # paths whose count could not be taken (never shown as a number)
    for spec_path in sorted(glob.glob(os.path.join(args.specs, "*.json"))):
        with open(spec_path, encoding="utf-8") as f:
            spec = json.load(f)
        impl = spec["impl"]
        if only and impl not in only:
            continue
        cmd = [expand(c, subst) for c in spec["command"]]
        def missing_needs():
            return [expand(n, subst) for n in spec.get("needs", [])
                    if not os.path.exists(expand(n, subst))]

        missing = missing_needs()
        if missing and spec.get("build"):
            for step in spec["build"]:
                step = [expand(c, subst) for c in step]
                tool = shutil.which(step[0]) or (step[0] if os.path.exists(step[0]) else None)
                if not tool:
                    print("instructions (%s): cannot build: %s not found" % (impl, step[0]))
                    break
                build_env = dict(env)
                build_env.update({k: expand(v, subst) for k, v in spec.get("env", {}).items()})
                p = subprocess.run(step, env=build_env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, universal_newlines=True)
                if p.returncode != 0:
                    failures.append("%s: building with %s failed:\n%s"
                                    % (impl, " ".join(step), "\n".join(p.stdout.splitlines()[-30:])))
                    break
            missing = missing_needs()
        if missing:
            print("instructions (%s): skipped: %s missing" % (impl, ", ".join(missing)))
            continue
        run_env = dict(env)
        run_env.update({k: expand(v, subst) for k, v in spec.get("env", {}).items()})
        tol = float(spec.get("tolerance", 0.05))
        budgets = spec.get("budgets", {})
        accepted = spec.get("accepted_misses", {})
        counts = {}
        print("%s (%s): instructions per call, (Ir(%d + %d) - Ir(%d)) / %d, confirmed by runs "
              "of %d + 2 x %d and %d + 3 x %d calls where needed"
              % (spec.get("label", impl), os.path.basename(spec_path), args.n, args.m, args.n,
                 args.m, args.n, args.m, args.n, args.m))
        print("| path | what | instructions | Δ own raw | budget | |")
        print("|---|---|---|---|---|---|")
        for path, what in spec["paths"].items():
            budget = budgets.get(path)
            try:
                value, _points, why = measure(
                    lambda calls: instructions(cmd, run_env, path, calls, args.valgrind),
                    args.n, args.m, None if args.update else budget, tol)
            except RuntimeError as e:
                failures.append("%s %s: %s" % (impl, path, e))
                print("| %s | %s | failed to run | – | %s | FAILED |"
                      % (path, what, budget if budget is not None else "–"))
                continue
            if value is None:
                # A count that cannot be taken is never shown as a number,
                # and never passes.
                unmeasured.append("%s %s: %s" % (impl, path, why))
                print("| %s | %s | not measured | – | %s | UNMEASURED |"
                      % (path, what, budget if budget is not None else "–"))
                continue
            c = max(1, round(value))
            counts[path] = c
            ran += 1
            k = path.split("/")[-1]
            raw = counts.get("raw/" + k)
            state = ""
            if budget is None:
                notes.append("%s %s: no budget" % (impl, path))
            elif c > budget * (1 + tol):
                text = ("%s %s costs %d instructions per call, %+.1f%% over its budget of %d"
                        % (impl, path, c, 100.0 * (c - budget) / budget, budget))
                if path in accepted:
                    print("BUDGET MISSED (accepted: %s): %s" % (accepted[path], text))
                    state = "OVER (accepted)"
                else:
                    failures.append(text)
                    state = "OVER"
            else:
                state = "ok"
                if c < budget * (1 - tol):
                    notes.append("%s %s: %d, %.1f%% under its budget of %d: lower it (--update)"
                                 % (impl, path, c, 100.0 * (budget - c) / budget, budget))
            print("| %s | %s | %d | %s | %s | %s |"
                  % (path, what, c, "%+d" % (c - raw) if raw is not None and not path.startswith("raw/") else "–",
                     budget if budget is not None else "–", state))
        print()
        results[impl] = counts
        if args.update and counts:
            spec["budgets"] = dict(sorted(counts.items()))
            with open(spec_path, "w", encoding="utf-8") as f:
                json.dump(spec, f, indent=2)
                f.write("\n")
            print("instructions (%s): wrote today's counts to %s" % (impl, spec_path))

    summary = "; ".join("%s %s" % (impl, ", ".join("%s %d" % kv for kv in c.items()))
                        for impl, c in results.items())
    if unmeasured:
        summary += "; not counted (see UNMEASURED): " + ", ".join(u.split(":")[0] for u in unmeasured)
    print("instructions per launch through the bindings: " + (summary or "none ran"))
    for n in notes:
        print("note: " + n)
    for u in unmeasured:
        print("UNMEASURED: " + u)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2, sort_keys=True)
    if unmeasured:
        print("FAILED: %d count(s) could not be taken (UNMEASURED above); a budget is "
              "checked only on a count" % len(unmeasured))
    if failures and not args.update:
        for t in failures:
            print("BUDGET MISSED: " + t if "under callgrind" not in t else "FAILED: " + t)
        return 1
    if unmeasured:
        return 1
    if ran == 0:
        print("instructions (bindings): skipped: no binding could run")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
