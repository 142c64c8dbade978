#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "devices/loader_probe.h"

using coex::devices::file_contains;
using coex::devices::opencl_loader_in_ldd_output;
using coex::devices::opencl_loader_of;

TEST(LoaderProbe, FindsTheLoaderInLddOutput) {
  const std::string output =
      "\tlinux-vdso.so.1 (0x00007ffd6b3f2000)\n\tlibOpenCL.so.1 => "
      "/usr/local/cuda/targets/x86_64-linux/lib/libOpenCL.so.1 (0x00007f6b73c00000)\n\tlibc.so.6 => "
      "/lib/x86_64-linux-gnu/libc.so.6 (0x00007f6b73a00000)\n";
  EXPECT_EQ(opencl_loader_in_ldd_output(output), "/usr/local/cuda/targets/x86_64-linux/lib/libOpenCL.so.1");
}

TEST(LoaderProbe, NoLoaderWhenTheAppDoesNotLinkOne) {
  EXPECT_EQ(opencl_loader_in_ldd_output("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n"), "");
  EXPECT_EQ(opencl_loader_in_ldd_output("\tlibOpenCL.so.1 => not found\n"), "");
  EXPECT_EQ(opencl_loader_in_ldd_output("\tnot a dynamic executable\n"), "");
}

TEST(LoaderProbe, FileContainsLooksAtEveryByte) {
  std::string path = ::testing::TempDir() + "/coex_loader_probe_file";
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string("\0\x7f", 2) << "ELF" << std::string(100000, 'x') << "OPENCL_LAYERS" << '\0';
  }
  EXPECT_EQ(file_contains(path, "OPENCL_LAYERS"), std::optional<bool>(true));
  EXPECT_EQ(file_contains(path, "OPENCL_LAYERX"), std::optional<bool>(false));
  EXPECT_EQ(file_contains(path + ".missing", "OPENCL_LAYERS"), std::nullopt);
}

// The app tests link this machine's libOpenCL; /bin/sh links none.
TEST(LoaderProbe, LddOfARealProgram) {
  EXPECT_EQ(opencl_loader_of("sh"), "");
  EXPECT_EQ(opencl_loader_of("/no/such/program"), "");
  const std::string interpreter = coex::devices::elf_interpreter("/bin/sh");
  ASSERT_FALSE(interpreter.empty());
  EXPECT_EQ(interpreter.find("/ld-"), interpreter.rfind('/')) << interpreter;  // .../ld-linux-x86-64.so.2
  EXPECT_EQ(coex::devices::elf_interpreter("/etc/passwd"), "");
}

// The app tests (built beside the unit tests, in tests/apps) link libOpenCL.so.1: the dynamic
// linker's listing names the file it would load.
TEST(LoaderProbe, FindsTheLoaderOfAnOpenCLApp) {
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  std::string dir(self, size_t(n));
  dir.resize(dir.rfind('/'));
  const std::string app = dir + "/apps/vector_add";
  if (access(app.c_str(), X_OK) != 0) GTEST_SKIP() << app << " is not built";
  const std::string loader = opencl_loader_of(app);
  ASSERT_FALSE(loader.empty());
  EXPECT_EQ(loader.front(), '/');
  EXPECT_NE(loader.find("libOpenCL.so"), std::string::npos) << loader;
}
