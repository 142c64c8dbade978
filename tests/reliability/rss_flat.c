/* Memory (docs/reliability.md, section 3): resident memory must stay flat while an app creates and
 * releases objects, and while it launches. The app samples VmRSS (/proc/self/status) after a
 * warm-up share of the work until the end. Anything coex keeps per object or per launch and never
 * frees raises the low point of the samples, in step with the work done.
 *
 *   rss_flat buffers|programs|kernels|launches|contexts [--count N] [--limit-kb L] [--release-order a|k|p]
 *
 * buffers:  N buffers created and released (default 100000); every 50th is a 64 KiB buffer that a
 *           split launch reads and writes (so coex makes shadows of it), and every 100th
 *           also gets a sub-buffer that outlives its parent's release.
 * programs: N programs built from source (default 100), each with a kernel and a split launch on a
 *           fresh buffer; --release-order: a (default) alternates, k releases the kernel first, p
 *           the program first (the kernel keeps the program alive until its own release).
 * kernels:  N kernels created and released from one program (default 10000), every 10th launched.
 * launches: N split launches of one kernel on one buffer (default 10000).
 * contexts: N cycles (default 1000) of a context, a queue, a program, two buffers and one split
 *           launch, all released at the end of the cycle (the queue after the context, as apps
 *           often do): whatever coex keeps per context must go with it.
 * RSS is sampled from object max(N/10, 10) to N; the lowest sample of the last quarter of that span
 * may exceed the lowest of the first quarter by --limit-kb at most (KiB, default 4096).
 *
 * stdout: checksums and PASS (the same bare and under coex); the RSS figures go to stderr as
 * `rss <phase>: lowest <kB> kB over objects <a>-<b>, ... growth <kB> kB (limit <kB> kB)`. */
#include <limits.h>

#include "common/app_util.h"

static const char* kSource =
    "__kernel void bump(__global uint* data, uint k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  data[i] = data[i] * 3u + k;\n"
    "}\n";

enum { WORK = 16384 }; /* work-items of every launch: above coex's min_split_work_items (4096) */

static struct {
  cl_context ctx;
  cl_device_id device;
  cl_command_queue q;
  cl_program program;
  long limit_kb;
  uint32_t host[WORK];
  uint32_t want[WORK];
} G;

static long vm_rss_kb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

/* Samples: after a warm-up (a tenth of the run, at least 10 objects: the allocator's arenas and
 * the drivers' caches fill over the first few), then some 200 more to the end. RSS also moves up
 * and down by a few MB while a build or a copy is under way at the moment of a sample, so each end
 * of the run counts by its lowest sample over a quarter of the measured span: a leak raises the
 * low point, a transient does not. */
static struct {
  long first_n, step, span, low_first_kb, low_last_kb;
  int failed_read;
} S;

static void sample_rss(long i, long count) {
  if (i == 1) {
    S.first_n = count / 10 > 10 ? count / 10 : 10;
    S.span = count - S.first_n;
    S.step = S.span / 200 > 1 ? S.span / 200 : 1;
    S.low_first_kb = S.low_last_kb = LONG_MAX;
    S.failed_read = 0;
  }
  if (i < S.first_n || (i - S.first_n) % S.step != 0) return;
  long kb = vm_rss_kb();
  if (kb < 0) S.failed_read = 1;
  if (i <= S.first_n + S.span / 4 && kb < S.low_first_kb) S.low_first_kb = kb;
  if (i >= count - S.span / 4 && kb < S.low_last_kb) S.low_last_kb = kb;
}

/* Prints the figures to stderr and counts a failure when the low point rose by more than the limit. */
static void check_growth(const char* phase, long count) {
  long growth = S.low_last_kb - S.low_first_kb;
  fprintf(stderr,
          "rss %s: lowest %ld kB over objects %ld-%ld, lowest %ld kB over %ld-%ld: growth %ld kB (limit %ld kB)\n",
          phase, S.low_first_kb, S.first_n, S.first_n + S.span / 4, S.low_last_kb, count - S.span / 4, count, growth,
          G.limit_kb);
  if (S.failed_read || S.low_first_kb == LONG_MAX || S.low_last_kb == LONG_MAX) {
    printf("check failed: cannot read VmRSS from /proc/self/status\n");
    ++app_failures;
  } else if (growth > G.limit_kb) {
    printf("check failed: resident memory grew by more than %ld kB during the %s phase\n", G.limit_kb, phase);
    ++app_failures;
  }
}

/* One launch of `bump` on `mem` (WORK uints) with factor k, mirrored on the host in G.want. */
static void bump(cl_kernel kernel, cl_mem mem, uint32_t k) {
  APP_ARG(kernel, 0, mem);
  APP_ARG(kernel, 1, k);
  size_t global = WORK;
  APP_CHECK(clEnqueueNDRangeKernel(G.q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
  for (size_t i = 0; i < WORK; ++i) G.want[i] = G.want[i] * 3u + k;
}

/* A fresh buffer holding G.host, bumped once, read back and compared. */
static int bump_fresh_buffer(cl_kernel kernel, uint32_t k, int with_sub_buffer) {
  cl_mem mem = app_create_buffer(G.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof G.host, G.host);
  memcpy(G.want, G.host, sizeof G.host);
  bump(kernel, mem, k);
  cl_mem sub = NULL;
  if (with_sub_buffer) {
    cl_int err = CL_SUCCESS;
    cl_buffer_region region = {0, 4096};
    sub = clCreateSubBuffer(mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    APP_CHECK_ERR(err, "clCreateSubBuffer");
  }
  uint32_t got[WORK];
  APP_CHECK(clEnqueueReadBuffer(G.q, mem, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
  APP_CHECK(clReleaseMemObject(mem)); /* with a sub-buffer: the parent outlives this release */
  if (sub) APP_CHECK(clReleaseMemObject(sub));
  return memcmp(got, G.want, sizeof got) == 0;
}

static void buffers_phase(long buffers) {
  cl_kernel kernel = app_create_kernel(G.program, "bump");
  long bad = 0;
  for (long i = 1; i <= buffers; ++i) {
    if (i % 50 == 0) {
      bad += !bump_fresh_buffer(kernel, (uint32_t)i, i % 100 == 0);
    } else {
      cl_mem mem = app_create_buffer(G.ctx, CL_MEM_READ_WRITE, 4096, NULL);
      APP_CHECK(clReleaseMemObject(mem));
    }
    sample_rss(i, buffers);
  }
  check_growth("buffers", buffers);
  app_expect(bad == 0, "every launch on a fresh buffer read back the host's result");
  app_print_checksum("last_result", G.want, sizeof G.want);
  APP_CHECK(clReleaseKernel(kernel));
}

/* order: 'k' releases the kernel first, 'p' the program first (the kernel keeps it alive until
 * its own release), 'a' alternates. */
static void programs_phase(long programs, char order) {
  long bad = 0;
  for (long i = 1; i <= programs; ++i) {
    cl_program program = app_build_program(G.ctx, G.device, 1, &kSource, "");
    cl_kernel k = app_create_kernel(program, "bump");
    bad += !bump_fresh_buffer(k, (uint32_t)i, 0);
    if (order == 'p' || (order == 'a' && i % 2)) {
      APP_CHECK(clReleaseProgram(program));
      APP_CHECK(clReleaseKernel(k));
    } else {
      APP_CHECK(clReleaseKernel(k));
      APP_CHECK(clReleaseProgram(program));
    }
    sample_rss(i, programs);
  }
  check_growth("programs", programs);
  app_expect(bad == 0, "every launch of a fresh program read back the host's result");
  app_print_checksum("last_result", G.want, sizeof G.want);
}

static void kernels_phase(long kernels) {
  long bad = 0;
  for (long i = 1; i <= kernels; ++i) {
    cl_kernel k = app_create_kernel(G.program, "bump");
    if (i % 10 == 0) bad += !bump_fresh_buffer(k, (uint32_t)i, 0);
    APP_CHECK(clReleaseKernel(k));
    sample_rss(i, kernels);
  }
  check_growth("kernels", kernels);
  app_expect(bad == 0, "every launch of a fresh kernel read back the host's result");
  app_print_checksum("last_result", G.want, sizeof G.want);
}

static void launches_phase(long launches) {
  cl_kernel kernel = app_create_kernel(G.program, "bump");
  cl_mem mem = app_create_buffer(G.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof G.host, G.host);
  memcpy(G.want, G.host, sizeof G.host);
  uint32_t first_word = 0;
  for (long i = 1; i <= launches; ++i) {
    bump(kernel, mem, (uint32_t)i);
    /* A blocking read now and then, so that the queue never holds more than a few hundred
     * launches and what grows is what coex keeps, not the queue. */
    if (i % 100 == 0) APP_CHECK(clEnqueueReadBuffer(G.q, mem, CL_TRUE, 0, 4, &first_word, 0, NULL, NULL));
    sample_rss(i, launches);
  }
  check_growth("launches", launches);
  uint32_t* got = (uint32_t*)app_alloc(sizeof G.want);
  APP_CHECK(clEnqueueReadBuffer(G.q, mem, CL_TRUE, 0, sizeof G.want, got, 0, NULL, NULL));
  app_check_u32("data", got, G.want, WORK);
  app_print_checksum("data", got, sizeof G.want);
  free(got);
  APP_CHECK(clReleaseMemObject(mem));
  APP_CHECK(clReleaseKernel(kernel));
}

static void contexts_phase(cl_platform_id platform, long contexts) {
  long bad = 0;
  for (long i = 1; i <= contexts; ++i) {
    cl_context ctx = app_create_context(platform, G.device);
    cl_command_queue q = app_create_queue(ctx, G.device, 0);
    cl_program program = app_build_program(ctx, G.device, 1, &kSource, "");
    cl_kernel kernel = app_create_kernel(program, "bump");
    cl_mem mem = app_create_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof G.host, G.host);
    cl_mem spare = app_create_buffer(ctx, CL_MEM_READ_ONLY, 4096, NULL);
    uint32_t k = (uint32_t)i;
    APP_ARG(kernel, 0, mem);
    APP_ARG(kernel, 1, k);
    size_t global = WORK;
    APP_CHECK(clEnqueueNDRangeKernel(q, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    uint32_t got[WORK];
    APP_CHECK(clEnqueueReadBuffer(q, mem, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    for (size_t j = 0; j < WORK; ++j) G.want[j] = G.host[j] * 3u + k;
    bad += memcmp(got, G.want, sizeof got) != 0;
    APP_CHECK(clReleaseMemObject(spare));
    APP_CHECK(clReleaseMemObject(mem));
    APP_CHECK(clReleaseKernel(kernel));
    APP_CHECK(clReleaseProgram(program));
    APP_CHECK(clReleaseContext(ctx));
    APP_CHECK(clReleaseCommandQueue(q)); /* the queue kept the context alive until now */
    sample_rss(i, contexts);
  }
  check_growth("contexts", contexts);
  app_expect(bad == 0, "every launch in a fresh context read back the host's result");
  app_print_checksum("last_result", G.want, sizeof G.want);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  long count = -1;
  char order = 'a';
  G.limit_kb = 4096;
  int usage = 0;
  for (int i = 2; i + 1 < argc && !usage; i += 2) {
    if (strcmp(argv[i], "--count") == 0)
      count = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--limit-kb") == 0)
      G.limit_kb = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--release-order") == 0)
      order = argv[i + 1][0];
    else
      usage = 1;
  }
  static const struct {
    const char* mode;
    long count;
  } kModes[] = {{"buffers", 100000}, {"programs", 100}, {"kernels", 10000}, {"launches", 10000}, {"contexts", 1000}};
  int m = -1;
  for (int i = 0; i < 5; ++i)
    if (strcmp(mode, kModes[i].mode) == 0) m = i;
  if (m >= 0 && count < 0) count = kModes[m].count;
  if (usage || m < 0 || argc % 2 != 0 || count < 20 || (order != 'a' && order != 'k' && order != 'p')) {
    printf(
        "usage: rss_flat buffers|programs|kernels|launches|contexts [--count N] [--limit-kb L]\n"
        "       [--release-order a|k|p]   (programs: alternate, kernel first, program first; N >= 10)\nFAIL\n");
    return 2;
  }
  cl_platform_id platform;
  app_pick_device(&platform, &G.device);
  G.ctx = app_create_context(platform, G.device);
  G.q = app_create_queue(G.ctx, G.device, 0);
  G.program = app_build_program(G.ctx, G.device, 1, &kSource, "");
  uint32_t seed = 99;
  for (size_t i = 0; i < WORK; ++i) G.host[i] = app_rand(&seed);

  switch (m) {
    case 0:
      buffers_phase(count);
      break;
    case 1:
      programs_phase(count, order);
      break;
    case 2:
      kernels_phase(count);
      break;
    case 3:
      launches_phase(count);
      break;
    default:
      contexts_phase(platform, count);
      break;
  }

  clReleaseProgram(G.program);
  clReleaseCommandQueue(G.q);
  clReleaseContext(G.ctx);
  return app_finish();
}
