"""What the layer checks of auto's first launches share (auto_checks.py, moves_checks.py): vector_add
run under coex with a trace, and the expectation on its first launch."""
import json
import os

from layer_checks import expect, run


def expect_first_launch(first, not_split, when):
    """The first launch's trace args `first` show it split (`not_split` None) or run on home for the
    reason `not_split` (or one of a tuple of reasons)."""
    if not_split is None:
        expect(first.get("split"), "%s the first launch was not split: %s" % (when, first))
    else:
        reasons = not_split if isinstance(not_split, tuple) else (not_split,)
        expect(first.get("not_split") in reasons,
               "%s the first launch did not run on home (%s): %s" % (when, " or ".join(reasons), first))


class FirstLaunches:
    """A mixin of layer_checks.Checks: self.build, self.tmp and self.layer are the runner's."""

    def vector_add_first_launch(self, tag, env):
        """vector_add under coex with `env` (and a trace): its output must be the bare one; the args
        of its first launch's slice in the trace."""
        app = os.path.join(self.build, "tests", "apps", "vector_add")
        rc, bare, _ = run([app])
        expect(rc == 0, "vector_add fails bare")
        trace = os.path.join(self.tmp, "%s-trace.json" % tag)
        env = dict(env, COEX_TRACE=trace, COEX_CACHE=os.path.join(self.tmp, "%s-history.json" % tag))
        rc, out, err = run([app], env, self.layer)
        expect(rc == 0 and out == bare, "exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        launches = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "launch"),
                          key=lambda e: e["ts"])
        expect(launches, "no launch in the trace")
        return launches[0]["args"]
