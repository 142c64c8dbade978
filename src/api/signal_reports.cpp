#include "api/signal_reports.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

namespace coex::api {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};

struct State {
  int pipe_read = -1;
  int pipe_write = -1;
  struct sigaction previous[2] = {};
  bool installed[2] = {false, false};
  std::function<void()> flush;
  std::atomic<bool> passed_on{false};
};

State& state() {
  static State* s = new State();  // never freed: a signal may come during exit
  return *s;
}

// Only what is async-signal-safe: one byte into the pipe (a full pipe drops it: a signal already
// waits there).
void on_signal(int signal) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] ssize_t ignored = ::write(state().pipe_write, &byte, 1);
  errno = saved;
}

// The app's disposition comes back and the signal is raised again: its handler runs, or the
// default action ends the process as the signal would have.
void pass_on(int signal) {
  State& s = state();
  if (s.passed_on.exchange(true)) return;
  for (int i = 0; i < 2; ++i)
    if (s.installed[i]) sigaction(kSignals[i], &s.previous[i], nullptr);
  ::kill(::getpid(), signal);
}

void watch() {
  State& s = state();
  for (;;) {
    unsigned char byte = 0;
    ssize_t n = ::read(s.pipe_read, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;
    int signal = byte;
    // A flush that hangs (a device that never answers) must not hold the signal back.
    std::thread([signal] {
      std::this_thread::sleep_for(std::chrono::seconds(kFlushSeconds));
      pass_on(signal);
    }).detach();
    if (s.flush) s.flush();
    pass_on(signal);
    return;
  }
}

}  // namespace

void write_reports_on_signals(std::function<void()> flush) {
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return;
  State& s = state();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  s.pipe_read = fds[0];
  s.pipe_write = fds[1];
  ::fcntl(s.pipe_write, F_SETFL, O_NONBLOCK);
  s.flush = std::move(flush);
  for (int i = 0; i < 2; ++i) {
    struct sigaction current = {};
    if (sigaction(kSignals[i], nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
    struct sigaction mine = {};
    mine.sa_handler = on_signal;
    sigemptyset(&mine.sa_mask);
    mine.sa_flags = SA_RESTART;
    s.installed[i] = sigaction(kSignals[i], &mine, &s.previous[i]) == 0;
  }
  std::thread(watch).detach();
}

}  // namespace coex::api
