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

Checks: each path at most `tolerance` over its budget (a path well under it
is noted). Exit 0 when all hold, 1 on a miss, 77 when valgrind is missing.

  bindings.py --build DIR --reference LIB --driver LIB [--only impl,...]
              [--carry DIR] [--n 200] [--m 2000] [--update] [--json FILE]
"""
import argparse
import atexit
import glob
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
        print("%s (%s): instructions per call, (Ir(%d + %d) - Ir(%d)) / %d"
              % (spec.get("label", impl), os.path.basename(spec_path), args.n, args.m, args.n, args.m))
        print("| path | what | instructions | Δ own raw | budget | |")
        print("|---|---|---|---|---|---|")
        for path, what in spec["paths"].items():
            try:
                a = instructions(cmd, run_env, path, args.n, args.valgrind)
                b = instructions(cmd, run_env, path, args.n + args.m, args.valgrind)
            except RuntimeError as e:
                failures.append("%s %s: %s" % (impl, path, e))
                continue
            c = round((b - a) / args.m)
            if c <= 0:
                # Fewer instructions for more calls: something else in the
                # process (a JIT, a collector) moved between the two runs.
                # One more point tells a wobble from a count that cannot be
                # taken; a count is never negative.
                try:
                    b2 = instructions(cmd, run_env, path, args.n + 2 * args.m, args.valgrind)
                except RuntimeError as e:
                    failures.append("%s %s: %s" % (impl, path, e))
                    continue
                c2 = round((b2 - b) / args.m)
                if c2 <= 0 or abs(c2 - round((b2 - a) / (2 * args.m))) > max(50, 0.1 * c2):
                    unmeasured.append("%s %s: cannot be counted: Ir(%d) = %d, Ir(%d) = %d, Ir(%d) = %d "
                                      "are not linear in the number of calls"
                                      % (impl, path, args.n, a, args.n + args.m, b,
                                         args.n + 2 * args.m, b2))
                    print("| %s | %s | cannot be counted | – | %s | UNMEASURED |"
                          % (path, what, budgets.get(path, "–")))
                    continue
                c = c2
            counts[path] = c
            ran += 1
            k = path.split("/")[-1]
            raw = counts.get("raw/" + k)
            budget = budgets.get(path)
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
    if failures and not args.update:
        for t in failures:
            print("BUDGET MISSED: " + t if "under callgrind" not in t else "FAILED: " + t)
        return 1
    if ran == 0:
        print("instructions (bindings): skipped: no binding could run")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
