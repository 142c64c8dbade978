// Shared by the call handlers of src/api/: the C boundary (nothing thrown reaches the app) and the
// last-release test that keeps the registries in step with the app's objects.
#pragma once

#include <CL/cl.h>
#include <spdlog/spdlog.h>

#include <exception>

#include "api/runtime.h"
#include "model/registries.h"

namespace coex::api {

inline Runtime& rt() { return Runtime::get(); }
inline const cl_icd_dispatch& cl() { return Runtime::get().next(); }

// Runs bookkeeping after the driver has answered. A failure here is coex's problem, never the
// app's: it is logged and the app's call still returns the driver's result.
template <typename F>
void record_safely(const char* call, F&& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    spdlog::warn("{}: coex could not record the call: {}", call, e.what());
  } catch (...) {
    spdlog::warn("{}: coex could not record the call", call);
  }
}

// Whether releasing `handle` now destroys it: its reference count is 1. The count is read just
// before the release; the spec calls it stale for any other use, but here the app is releasing
// its last reference, so no other thread may rightly hold one.
template <typename Handle, typename InfoFn, typename Info>
bool is_last_reference(InfoFn info_fn, Handle handle, Info param) {
  cl_uint refs = 0;
  return info_fn && info_fn(handle, param, sizeof(refs), &refs, nullptr) == CL_SUCCESS && refs == 1;
}

// The app retained / released an object whose record counts the app's references (records.h).
template <typename Registry, typename Handle>
void app_retained(Registry& registry, Handle handle) {
  if (auto record = registry.find(handle)) ++record->app_refs;
}
template <typename Registry, typename Handle>
void app_released(Registry& registry, Handle handle) {
  if (auto record = registry.find(handle); record && --record->app_refs == 0) registry.erase(handle);
}

}  // namespace coex::api
