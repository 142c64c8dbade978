// Reports survive SIGINT and SIGTERM: coex writes its report and trace, then the signal takes its
// course (the app's own handler, or the default action). The signal is never swallowed.
#pragma once

#include <functional>

namespace coex::api {

// Installs handlers for SIGINT and SIGTERM, except where the app ignores the signal. On a signal a
// thread of coex's runs flush (bounded: after kFlushSeconds the signal goes on regardless), puts
// back the disposition found here and raises the signal again. Once per process.
void write_reports_on_signals(std::function<void()> flush);

inline constexpr int kFlushSeconds = 5;

}  // namespace coex::api
