// What coex observes of the app for its report and trace, by wrapping the intercept table's entries
// (whatever handler src/api/ installed under them):
//  - with a trace, each OpenCL call of the app that enqueues, waits, builds or creates is one slice on
//    the track of the app thread that made it (report/trace.h, kApiTrackBase);
//  - with a report or a trace, each launch that runs unsplit is timed on the app's device by a callback
//    on its event (coex asks the driver for one when the app passes none): the report adds the time to
//    the device's busy seconds and the trace shows the launch on that device's track. Without either,
//    nothing is wrapped: a launch costs no event and no callback.
#pragma once

#include <CL/cl_icd.h>

#include <string>

namespace coex::report {
struct LaunchRecord;
}

namespace coex::api {

void install_observers(cl_icd_dispatch& table, bool trace_calls, bool time_unsplit);

// Waits up to `max_ms` for the completion callbacks of launches not split still to come: the driver
// calls them on its own thread, shortly after the app's last clFinish, and the report and the trace
// are written at exit.
void wait_for_timed_launches(int max_ms);

// The report's launch observer (ReportRecorder::set_launch_observer): puts each launch on the trace's
// launch track, except a launch not split that the app's thread records inside a wrapped enqueue,
// which its completion callback puts there with its real span.
void observe_launch(const std::string& kernel, const report::LaunchRecord& launch);

// Whether observe_launch would use a launch this thread records now, one not split: with a trace
// every launch is drawn; with a report alone, only a launch being timed (most are not), so that the
// others are counted without a LaunchRecord (report::ReportRecorder::record_unsplit).
bool unsplit_launch_observed();

}  // namespace coex::api
