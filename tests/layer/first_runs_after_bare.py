"""What the layer checks of coex's builds and compiles share (compile_checks.py,
compile_ahead_checks.py): a user's first coex run of an app after its bare run filled PoCL's cache,
traced, once for each value of a setting."""
import json
import os

from layer_checks import FAST_FRESH_MEMORY, expect, run


class FirstRunsAfterBare:
    def traced_after_bare(self, app, devices, trace, settings):
        # A user's first coex run of `app` (a path, or a command line): bare with `devices` (filling the PoCL cache of their
        # POCL_CACHE_DIR, as the runs before coex did), then under coex with `settings` and the trace
        # on, its output the bare one. The trace's slices.
        cmd = app if isinstance(app, list) else [app]
        rc, bare, _ = run(cmd, devices)
        expect(rc == 0, "%s fails bare" % " ".join(os.path.basename(a) for a in cmd))
        rc, out, err = run(cmd, dict(devices, COEX_TRACE=trace, **settings), self.layer)
        expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (settings, rc, out, err))
        with open(trace) as f:
            return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]

    def first_runs_by_setting(self, app, setting, values, tag="", extra=None):
        # A user's first coex run of `app` over two `basic` devices under auto with the report on, once
        # for each value of COEX_<setting> (None: unset, the default), each in a PoCL cache of its own
        # that its bare run filled:
        # the value, the trace's slices and the report's compile_ahead. What these settings decide
        # (compile ahead, probe, split at once) comes after the analysis, which the first launch waits
        # for up to auto_analysis_wait: 30 s here, for a machine busy with other tests (at 0.1 s CI's
        # run of matmul's tiled product found none and ran it on home as `preparing`), and, for a kernel
        # without loops, after the rule of moves into new memory, which takes it as fast as the nominal
        # rate here (FAST_FRESH_MEMORY: on a 2-core machine two_programs' launches would stay on home
        # before any of them). A process starts at the first launch that wants it (compile_ahead_start
        # `launch`; under `auto`, on a machine with no core beside the devices', only once the kernel's
        # launches show it pays: check_process_pays). `tag` keeps one call's files apart from another's
        # of the same setting; `extra`, more settings.
        label = setting.lower().replace("_", "-") + tag
        trace = os.path.join(self.tmp, label + "-trace.json")
        for value in values:
            devices = {"POCL_DEVICES": "basic basic",
                       "POCL_CACHE_DIR": os.path.join(self.tmp, "%s-pocl-%s" % (label, value))}
            settings = dict(FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="30", COEX_REPORT=self.report,
                            COEX_COMPILE_AHEAD_START="launch", COEX_CACHE=os.path.join(self.tmp, "%s-%s.json" % (label, value)))
            settings.update(extra or {})
            if value is not None:
                settings["COEX_" + setting] = value
            slices = self.traced_after_bare(app, devices, trace, settings)
            yield value, slices, self.load_report().get("compile_ahead", {})
