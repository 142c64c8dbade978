#define COEX_LIBCLANG_NO_REDIRECT
#include "kernel/libclang_api.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace coex::kernel::libclang {

#define COEX_LIBCLANG_DEFINE(name) decltype(&::name) name = nullptr;
COEX_LIBCLANG_FUNCTIONS(COEX_LIBCLANG_DEFINE)
#undef COEX_LIBCLANG_DEFINE

namespace {

std::mutex g_mutex;
std::string g_preferred;
std::string g_refused;  // refuse_loads's reason: every load fails with it
bool g_tried = false;
bool g_loaded = false;
std::string g_failure;
std::string g_version;
std::atomic<bool> g_wanted{false};
std::atomic<bool> g_missing_told{false};

// g++ says so with __SANITIZE_*__, clang 14 only through __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COEX_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COEX_UNDER_SANITIZER 1
#endif
#endif

// RTLD_DEEPBIND makes libclang bind to its own libLLVM even when another LLVM is already global
// (an app or driver that loaded one with RTLD_GLOBAL). The sanitizer runtimes refuse it.
int open_flags() {
  int flags = RTLD_NOW | RTLD_LOCAL;
#ifndef COEX_UNDER_SANITIZER
  flags |= RTLD_DEEPBIND;
#endif
  return flags;
}

// libclang and an OpenCL driver that compiles with LLVM (PoCL) would otherwise share one libLLVM in
// the process, since both load the same libLLVM-N.so.1: its command-line options, its fatal-error
// handler and its other globals, used from the driver's threads and coex's at once (the driver's
// code-generation errors then print as "LIBCLANG FATAL ERROR"). dlmopen with LM_ID_NEWLM loads
// libclang with its own libLLVM, C++ runtime and C library in a separate link-map namespace, so
// nothing of LLVM is shared. A thread started by the C library of a second namespace crashes at
// times (glibc supports no threads there), and libclang parses on a thread of its own unless
// LIBCLANG_NOTHREADS is set: it is set in that namespace's environment only, through its own
// setenv, so the app's environment is untouched and libclang parses on the calling thread. The
// sanitizer runtimes and Valgrind do not follow a second namespace: there, dlopen as before
// (docs/kernel-analysis.md, "Loading libclang").
#ifndef COEX_UNDER_SANITIZER
bool under_valgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && std::strstr(preload, "vgpreload");
}
#endif

void* open_library(const std::string& name) {
#ifndef COEX_UNDER_SANITIZER
  if (!under_valgrind()) {
    if (void* handle = dlmopen(LM_ID_NEWLM, name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      using SetEnv = int (*)(const char*, const char*, int);
      auto namespace_setenv = reinterpret_cast<SetEnv>(dlsym(handle, "setenv"));
      if (namespace_setenv && namespace_setenv("LIBCLANG_NOTHREADS", "1", 1) == 0) return handle;
      dlclose(handle);
    }
  }
#endif
  return dlopen(name.c_str(), open_flags());
}

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (!g_preferred.empty()) out.push_back(g_preferred);
  for (int major = 24; major >= 14; --major) out.push_back("libclang-" + std::to_string(major) + ".so.1");
  for (int major = 24; major >= 14; --major) out.push_back("/usr/lib/llvm-" + std::to_string(major) + "/lib/libclang.so.1");
  out.push_back("libclang.so.1");
  out.push_back("libclang.so");
  return out;
}

bool resolve_all(void* handle, std::string& missing) {
#define COEX_LIBCLANG_RESOLVE(name)                                      \
  name = reinterpret_cast<decltype(name)>(dlsym(handle, #name));        \
  if (!name) {                                                           \
    missing = #name;                                                     \
    return false;                                                        \
  }
  COEX_LIBCLANG_FUNCTIONS(COEX_LIBCLANG_RESOLVE)
#undef COEX_LIBCLANG_RESOLVE
  return true;
}

}  // namespace

void load_wanted() { g_wanted.store(true, std::memory_order_release); }

bool is_load_wanted() { return g_wanted.load(std::memory_order_acquire); }

bool claim_missing_notice() { return !g_missing_told.exchange(true); }

std::string missing_notice(const std::string& why, bool some_kept) {
  return std::string(some_kept ? "coex: no kernel can be analysed, so only programs an earlier run analysed are split ("
                               : "coex: no kernel can be analysed, so nothing is split (") +
         why + "); install libclang 14 or newer (Debian: libclang1-14)";
}

void set_preferred_path(const std::string& path) {
  std::lock_guard lock(g_mutex);
  g_preferred = path;
}

void refuse_loads(const std::string& why) {
  std::lock_guard lock(g_mutex);
  g_refused = why;
}

bool load(std::string* why_not) {
  std::lock_guard lock(g_mutex);
  if (!g_tried) {
    g_tried = true;
    std::string tried;
    for (const std::string& name : g_refused.empty() ? candidates() : std::vector<std::string>{}) {
      void* handle = open_library(name);
      if (!handle) continue;
      std::string missing;
      if (resolve_all(handle, missing)) {
        g_loaded = true;
        CXString v = clang_getClangVersion();
        g_version = clang_getCString(v) ? clang_getCString(v) : "";
        clang_disposeString(v);
        break;
      }
      tried += " " + name + " (no " + missing + ")";
      dlclose(handle);
    }
    if (!g_loaded)
      g_failure = g_refused.empty() ? "no usable libclang (libclang-N.so.1, N >= 14) found" + tried : g_refused;
  }
  if (!g_loaded && why_not) *why_not = g_failure;
  return g_loaded;
}

std::optional<bool> loaded_without_waiting(std::string* why_not) {
  std::unique_lock lock(g_mutex, std::try_to_lock);
  if (!lock || !g_tried) return std::nullopt;
  if (!g_loaded && why_not) *why_not = g_failure;
  return g_loaded;
}

// One long-lived thread runs every parse: a thread that has used the second namespace's C library
// leaves its per-thread malloc cache there when it exits (that library never sees the exit), about
// 50 kB per parse when each had a thread of its own.
class ParserThread {
 public:
  static ParserThread& instance() {
    static ParserThread* thread = new ParserThread();  // never freed: it may still run at exit
    return *thread;
  }

  void run(const std::function<void()>& work) {
    std::lock_guard call(call_mutex_);
    std::unique_lock lock(mutex_);
    if (!started_ && !start()) {
      lock.unlock();
      work();
      return;
    }
    work_ = &work;
    wake_.notify_one();
    done_.wait(lock, [this] { return work_ == nullptr; });
  }

 private:
  ParserThread() {
    // A child of fork() has no such thread: it starts its own on first use.
    pthread_atfork(nullptr, nullptr, [] { instance().started_ = false; });
  }

  bool start() {
    constexpr size_t kStackBytes = 8u << 20;  // what libclang's own parse thread gets
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return false;
    pthread_t thread;
    bool ok = pthread_attr_setstacksize(&attributes, kStackBytes) == 0 &&
              pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED) == 0 &&
              pthread_create(&thread, &attributes, [](void* self) -> void* {
                static_cast<ParserThread*>(self)->loop();
                return nullptr;
              }, this) == 0;
    pthread_attr_destroy(&attributes);
    started_ = ok;
    return ok;
  }

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return work_ != nullptr; });
      lock.unlock();
      (*work_)();
      lock.lock();
      work_ = nullptr;
      done_.notify_all();
    }
  }

  std::mutex call_mutex_;  // one caller at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void()>* work_ = nullptr;
  bool started_ = false;
};

void run_on_parser_stack(const std::function<void()>& work) { ParserThread::instance().run(work); }

std::string version() {
  std::lock_guard lock(g_mutex);
  return g_version;
}

}  // namespace coex::kernel::libclang
