// An Oclgrind plugin that records every load and store through a global or constant buffer
// argument of a kernel, per work-group (access_log.h). Loaded by Oclgrind from OCLGRIND_PLUGINS;
// compiled without RTTI, as liboclgrind is, since it derives from oclgrind::Plugin.
#include <oclgrind/Context.h>
#include <oclgrind/Kernel.h>
#include <oclgrind/KernelInvocation.h>
#include <oclgrind/Memory.h>
#include <oclgrind/Plugin.h>
#include <oclgrind/WorkGroup.h>
#include <oclgrind/WorkItem.h>

#include <llvm/IR/Argument.h>

#include "access_log.h"

namespace {

using coex::oracle::KernelRun;

KernelRun g_run;

class AccessRecorder : public oclgrind::Plugin {
 public:
  explicit AccessRecorder(const oclgrind::Context* context) : oclgrind::Plugin(context) {}

  // Callbacks come from one thread at a time: Oclgrind runs one worker when a plugin is not safe.
  bool isThreadSafe() const override { return false; }

  void kernelBegin(const oclgrind::KernelInvocation* invocation) override {
    size_t launches = g_run.launches + 1;
    g_run = KernelRun{};
    g_run.launches = launches;
    const oclgrind::Kernel* kernel = invocation->getKernel();
    g_run.kernel = kernel->getName();
    args_.assign(kernel->getNumArguments(), Buffer{});
    const oclgrind::Memory* global = m_context->getGlobalMemory();
    for (auto it = kernel->values_begin(); it != kernel->values_end(); ++it) {
      const auto* argument = llvm::dyn_cast<llvm::Argument>(it->first);
      if (!argument || argument->getArgNo() >= args_.size()) continue;
      unsigned index = argument->getArgNo();
      unsigned space = kernel->getArgumentAddressQualifier(index);
      if (space != CL_KERNEL_ARG_ADDRESS_GLOBAL && space != CL_KERNEL_ARG_ADDRESS_CONSTANT) continue;
      size_t address = it->second.getPointer();
      if (!address) continue;
      args_[index] = {true, global->extractBuffer(address), global->extractOffset(address)};
    }
  }

  void memoryLoad(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, size_t address, size_t size) override {
    record(memory, item->getWorkGroup()->getGroupID(), address, size, false);
  }
  void memoryLoad(const oclgrind::Memory* memory, const oclgrind::WorkGroup* group, size_t address, size_t size) override {
    record(memory, group->getGroupID(), address, size, false);
  }
  void memoryStore(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, size_t address, size_t size,
                   const uint8_t*) override {
    record(memory, item->getWorkGroup()->getGroupID(), address, size, true);
  }
  void memoryStore(const oclgrind::Memory* memory, const oclgrind::WorkGroup* group, size_t address, size_t size,
                   const uint8_t*) override {
    record(memory, group->getGroupID(), address, size, true);
  }
  void memoryAtomicLoad(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, oclgrind::AtomicOp,
                        size_t address, size_t size) override {
    record(memory, item->getWorkGroup()->getGroupID(), address, size, false);
  }
  void memoryAtomicStore(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, oclgrind::AtomicOp,
                         size_t address, size_t size) override {
    record(memory, item->getWorkGroup()->getGroupID(), address, size, true);
  }

  void log(oclgrind::MessageType type, const char* message) override {
    if (type == oclgrind::ERROR) g_run.errors.push_back(message ? message : "");
  }

 private:
  struct Buffer {
    bool set = false;
    size_t id = 0;
    size_t offset = 0;  // where the argument starts in its buffer
  };
  std::vector<Buffer> args_;

  void record(const oclgrind::Memory* memory, oclgrind::Size3 group, size_t address, size_t size, bool store) {
    if (memory != m_context->getGlobalMemory()) return;  // private and __local memory
    size_t id = memory->extractBuffer(address), offset = memory->extractOffset(address);
    auto& per_arg = g_run.groups[{group.x, group.y, group.z}];
    per_arg.resize(args_.size());
    bool attributed = false;
    for (size_t i = 0; i < args_.size(); ++i) {
      if (!args_[i].set || args_[i].id != id || offset < args_[i].offset) continue;
      coex::coherence::ByteRange range{offset - args_[i].offset, offset - args_[i].offset + size};
      (store ? per_arg[i].stores : per_arg[i].loads).add(range);
      attributed = true;
    }
    if (!attributed) ++g_run.unattributed;
  }
};

AccessRecorder* g_plugin = nullptr;

}  // namespace

extern "C" const coex::oracle::KernelRun* coex_oracle_last_run() { return &g_run; }

// The entry points Oclgrind looks up in a plugin library.
extern "C" void initializePlugins(oclgrind::Context* context) {
  g_plugin = new AccessRecorder(context);
  context->registerPlugin(g_plugin);
}

extern "C" void releasePlugins(oclgrind::Context* context) {
  context->unregisterPlugin(g_plugin);
  delete g_plugin;
  g_plugin = nullptr;
}
