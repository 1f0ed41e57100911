#!/usr/bin/env python3
"""The instruction counts' own instrument (bench/instructions/bindings.py and
run.py), without valgrind: a count is never negative or zero, a count that
cannot be taken says so and fails the run, and a count that can be taken is
the slope of the runs that agree.

The end-to-end cases run bindings.py against a stand-in for valgrind that
prints the "Collected" line callgrind prints, with Ir a chosen function of
the number of calls (FAKE_IR), so the incident of a C# raw/2 printed as
-79208 instructions per call (a shorter run carrying 160 M instructions
more than a longer one) can be replayed exactly.

  python3 tests/instructions/test_instrument.py
"""

import json
import os
import random
import re
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
INSTR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "instructions")
sys.path.insert(0, INSTR)

import bindings  # noqa: E402
import run as core_run  # noqa: E402

N, M = 200, 2000
BASE = 224_000_000  # start-up and exit of a run, about what Mono's take


def runner(ir):
    """run(calls) over ``ir`` (calls -> Ir), recording each run made."""
    made = []

    def run(calls):
        made.append(calls)
        return ir(calls)

    return run, made


class LinearCount(unittest.TestCase):
    def test_a_linear_series_gives_its_slope(self):
        points = [(N + k * M, BASE + 730 * (N + k * M)) for k in range(3)]
        self.assertEqual(bindings.linear_count(points), 730)

    def test_two_points_are_never_enough(self):
        self.assertIsNone(bindings.linear_count([(N, BASE), (N + M, BASE + 730 * M)]))

    def test_a_falling_series_is_no_count(self):
        points = [(N + k * M, BASE - 5 * k * M) for k in range(4)]
        self.assertIsNone(bindings.linear_count(points))

    def test_a_flat_series_is_no_count(self):
        self.assertIsNone(bindings.linear_count([(N + k * M, BASE) for k in range(4)]))

    def test_one_run_with_extra_work_is_left_out(self):
        points = [(N + k * M, BASE + 730 * (N + k * M)) for k in range(4)]
        points[0] = (points[0][0], points[0][1] + 160_000_000)
        self.assertEqual(bindings.linear_count(points), 730)

    def test_random_points_never_give_a_count_below_one(self):
        rng = random.Random(5)
        for _ in range(2000):
            points = [(N + k * M, rng.randrange(10**6, 10**9)) for k in range(rng.choice((3, 4)))]
            count = bindings.linear_count(points)
            self.assertTrue(count is None or count > 0, (points, count))


class Measure(unittest.TestCase):
    def test_a_count_well_inside_its_budget_takes_two_runs(self):
        run, made = runner(lambda calls: BASE + 730 * calls)
        count, _, why = bindings.measure(run, N, M, budget=724, tolerance=0.05)
        self.assertEqual((round(count), why), (730, None))
        self.assertEqual(made, [N, N + M])

    def test_a_count_near_its_budgets_edge_is_confirmed_by_a_third_run(self):
        run, made = runner(lambda calls: BASE + 760 * calls)
        count, _, why = bindings.measure(run, N, M, budget=724, tolerance=0.05)
        self.assertEqual((round(count), why), (760, None))
        self.assertEqual(made, [N, N + M, N + 2 * M])

    def test_without_a_budget_a_count_is_always_confirmed(self):
        run, made = runner(lambda calls: BASE + 730 * calls)
        count, _, _ = bindings.measure(run, N, M, budget=None)
        self.assertEqual(round(count), 730)
        self.assertEqual(len(made), 3)

    def test_the_negative_incident_is_resolved_by_the_runs_that_agree(self):
        # The 200-call run carried 160 M instructions more than the others:
        # two points gave -79208 per call; the other three agree on 730.
        def ir(calls):
            return BASE + 730 * calls + (160_000_000 if calls == N else 0)

        run, made = runner(ir)
        count, _, why = bindings.measure(run, N, M, budget=724, tolerance=0.05)
        self.assertEqual((round(count), why), (730, None))
        self.assertEqual(made, [N, N + M, N + 2 * M, N + 3 * M])

    def test_runs_that_never_agree_give_no_count_and_say_why(self):
        extra = {N: 160_000_000, N + M: 0, N + 2 * M: 90_000_000, N + 3 * M: 10_000_000}
        run, made = runner(lambda calls: BASE + 730 * calls + extra[calls])
        count, points, why = bindings.measure(run, N, M, budget=724, tolerance=0.05)
        self.assertIsNone(count)
        self.assertEqual(len(points), 4)
        self.assertIn("cannot be counted", why)
        for calls, ir in points:
            self.assertIn("Ir(%d) = %d" % (calls, ir), why)


class CoreCounts(unittest.TestCase):
    def test_a_path_less_the_loop_is_a_positive_count(self):
        self.assertEqual(core_run.own_count(316.2 + 12.0, 12.0), (316, None))

    def test_a_loop_larger_than_the_path_is_no_count(self):
        for total, loop in ((10.0, 12.0), (12.0, 12.0), (0.0, 12.0), (-5.0, 1.0), (300.0, 0.0)):
            value, why = core_run.own_count(total, loop)
            self.assertIsNone(value, (total, loop))
            self.assertIn("cannot be counted", why)


FAKE_VALGRIND = """\
#!{python}
# Prints callgrind's "Collected" line, Ir a function of --path and --count
# taken from FAKE_IR: {{path: [base, per_call, {{calls: extra}}]}}.
import json, os, sys
argv = sys.argv
path = argv[argv.index("--path") + 1]
calls = int(argv[argv.index("--count") + 1])
base, per, extra = json.loads(os.environ["FAKE_IR"])[path]
print("==1== Collected : %d" % (base + per * calls + int(extra.get(str(calls), 0))))
"""


class EndToEnd(unittest.TestCase):
    """bindings.py's whole run, its table, its summary and its exit status."""

    def run_bindings(self, ir, budgets):
        with tempfile.TemporaryDirectory(prefix="cuabi-instrument-test.") as tmp:
            valgrind = os.path.join(tmp, "valgrind")
            with open(valgrind, "w") as f:
                f.write(FAKE_VALGRIND.format(python=sys.executable))
            os.chmod(valgrind, os.stat(valgrind).st_mode | stat.S_IXUSR)
            specs = os.path.join(tmp, "specs")
            os.mkdir(specs)
            spec = {
                "impl": "fake",
                "label": "a stand-in binding",
                "command": ["fake-binding"],
                "paths": {p: "path %s" % p for p in ir},
                "budgets": budgets,
            }
            with open(os.path.join(specs, "fake.json"), "w") as f:
                json.dump(spec, f)
            env = dict(os.environ, FAKE_IR=json.dumps(ir))
            done = subprocess.run(
                [sys.executable, os.path.join(INSTR, "bindings.py"), "--build", tmp,
                 "--reference", os.path.join(tmp, "reference.so"),
                 "--driver", os.path.join(tmp, "driver.so"), "--specs", specs,
                 "--valgrind", valgrind, "--python", sys.executable,
                 "--n", str(N), "--m", str(M)],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                universal_newlines=True, timeout=120)
            return done.returncode, done.stdout

    def summary(self, out):
        lines = [l for l in out.splitlines() if l.startswith("instructions per launch")]
        self.assertEqual(len(lines), 1, out)
        return lines[0]

    def test_linear_counts_pass_and_are_printed(self):
        rc, out = self.run_bindings(
            {"raw/2": [BASE, 730, {}], "plan/2": [BASE, 877, {}]},
            {"raw/2": 724, "plan/2": 888})
        self.assertEqual(rc, 0, out)
        self.assertIn("fake raw/2 730, plan/2 877", self.summary(out))
        self.assertNotIn("UNMEASURED", out)

    def test_the_incident_gives_the_count_of_the_runs_that_agree(self):
        rc, out = self.run_bindings(
            {"raw/2": [BASE, 730, {str(N): 160_000_000}]}, {"raw/2": 724})
        self.assertEqual(rc, 0, out)
        self.assertIn("fake raw/2 730", self.summary(out))
        self.assertNotIn("-79", out)

    def test_a_count_that_cannot_be_taken_fails_and_is_no_number(self):
        extra = {str(N): 160_000_000, str(N + 2 * M): 90_000_000, str(N + 3 * M): 10_000_000}
        rc, out = self.run_bindings(
            {"raw/2": [BASE, 730, extra], "plan/2": [BASE, 877, {}]},
            {"raw/2": 724, "plan/2": 888})
        self.assertEqual(rc, 1, out)
        self.assertRegex(
            out, r"\| raw/2 \| path raw/2 \| not measured \| – \| 724 \| UNMEASURED \|")
        self.assertIn("UNMEASURED: fake raw/2: cannot be counted", out)
        self.assertIn("FAILED: 1 count(s) could not be taken", out)
        summary = self.summary(out)
        self.assertIn("plan/2 877", summary)
        self.assertNotRegex(summary.split(";")[0], r"raw/2 -?\d")
        # No negative count anywhere in the table's count column.
        for row in re.findall(r"^\| [^|]+ \| [^|]+ \| (-?\d+) \|", out, re.M):
            self.assertGreater(int(row), 0, out)

    def test_a_falling_count_without_a_budget_is_not_measured(self):
        rc, out = self.run_bindings({"raw/2": [BASE, -40, {}]}, {})
        self.assertEqual(rc, 1, out)
        self.assertIn("UNMEASURED: fake raw/2", out)
        self.assertNotIn("raw/2 -", out)

    def test_a_count_over_its_budget_fails_as_a_miss(self):
        rc, out = self.run_bindings({"plan/2": [BASE, 1000, {}]}, {"plan/2": 888})
        self.assertEqual(rc, 1, out)
        self.assertIn("BUDGET MISSED: fake plan/2 costs 1000 instructions per call", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
