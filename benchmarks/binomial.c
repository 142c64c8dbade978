/* Compute-bound, regular: European call options priced on a binomial tree of --iters steps, one
 * work-group per option (128 work-items sweep the tree's nodes in __local memory, a barrier per
 * step). The option index is get_group_id(0), so a split launch needs coex's rewrite that keeps
 * the original group ids.
 *
 * The host computes each option's tree parameters (the exp and sqrt of the model) once; the kernel
 * uses only +, -, *, comparisons and a fixed sequence of squarings for the leaf prices, under
 * FP_CONTRACT OFF, so every device and the host agree to the bit. Node values below 1e-30 are set
 * to 0, so no denormal is ever produced (a device that flushes denormals would differ otherwise).
 * Sampled options are checked against the host. */
#include "common/bench_util.h"

#include <math.h>

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "float pow_steps(float base, uint e) {\n"
    "  float r = 1.0f;\n"
    "  while (e != 0u) {\n"
    "    if (e & 1u) r = r * base;\n"
    "    base = base * base;\n"
    "    e >>= 1;\n"
    "  }\n"
    "  return r;\n"
    "}\n"
    "/* params: (price at the lowest leaf, up/down ratio, discounted p_up, discounted p_down) */\n"
    "__kernel void binomial(__global const float4* params, __global const float* strike,\n"
    "                       __global float* value) {\n"
    "  __local float buf0[STEPS + 1];\n"
    "  __local float buf1[STEPS + 1];\n"
    "  uint option = (uint)get_group_id(0), lid = (uint)get_local_id(0);\n"
    "  uint lsize = (uint)get_local_size(0);\n"
    "  float4 p = params[option];\n"
    "  float x = strike[option];\n"
    "  for (uint i = lid; i <= STEPS; i += lsize) {\n"
    "    float v = p.x * pow_steps(p.y, i) - x;\n"
    "    buf0[i] = v > 0.0f ? v : 0.0f;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  __local float* cur = buf0;\n"
    "  __local float* next = buf1;\n"
    "  for (uint t = STEPS; t > 0u; --t) {\n"
    "    for (uint i = lid; i < t; i += lsize) {\n"
    "      float v = p.z * cur[i + 1] + p.w * cur[i];\n"
    "      next[i] = v < 1e-30f ? 0.0f : v;\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    __local float* swap = cur;\n"
    "    cur = next;\n"
    "    next = swap;\n"
    "  }\n"
    "  if (lid == 0u) value[option] = cur[0];\n"
    "}\n";

enum { GROUP = 128, SAMPLES = 16 };
typedef struct {
  float s_low, ratio, p_up, p_down;
} TreeParams;

static float pow_steps(float base, uint32_t e) {
  float r = 1.0f;
  while (e != 0u) {
    if (e & 1u) r = r * base;
    base = base * base;
    e >>= 1;
  }
  return r;
}

static float option_reference(TreeParams p, float strike, uint32_t steps, float* scratch) {
  for (uint32_t i = 0; i <= steps; ++i) {
    float v = p.s_low * pow_steps(p.ratio, i) - strike;
    scratch[i] = v > 0.0f ? v : 0.0f;
  }
  for (uint32_t t = steps; t > 0; --t)
    for (uint32_t i = 0; i < t; ++i) {
      float v = p.p_up * scratch[i + 1] + p.p_down * scratch[i];
      scratch[i] = v < 1e-30f ? 0.0f : v;  /* in place: scratch[i + 1] is still the old value */
    }
  return scratch[0];
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 1024, 1024, "options (one work-group each)",
                                       "time steps of each tree");
  const uint32_t options = (uint32_t)o.size, steps = (uint32_t)o.iters;
  bench_print_work((double)options * steps * steps / 2.0);
  if (o.work_only) return 0;

  char build_options[64];
  snprintf(build_options, sizeof(build_options), "-DSTEPS=%uu", steps);
  BenchContext b = bench_open(&o, kSource, build_options);
  cl_kernel kernel = app_create_kernel(b.program, "binomial");

  TreeParams* params = (TreeParams*)app_alloc(options * sizeof(TreeParams));
  float* strike = (float*)app_alloc(options * sizeof(float));
  float* value = (float*)app_alloc(options * sizeof(float));
  const double rate = 0.06;
  for (uint32_t k = 0; k < options; ++k) {
    double s0 = 5.0 + 25.0 * bench_unit_float(3 * (uint64_t)k);
    double x = 1.0 + 99.0 * bench_unit_float(3 * (uint64_t)k + 1);
    double years = 0.25 + 4.75 * bench_unit_float(3 * (uint64_t)k + 2);
    double sigma = 0.10 + 0.20 * bench_unit_float(7 * (uint64_t)k + 5);
    double dt = years / steps;
    double up = exp(sigma * sqrt(dt)), down = 1.0 / up;
    double growth = exp(rate * dt), discount = exp(-rate * dt);
    double p_up = (growth - down) / (up - down);
    params[k].s_low = (float)(s0 * pow(down, (double)steps));
    params[k].ratio = (float)(up * up);
    params[k].p_up = (float)(p_up * discount);
    params[k].p_down = (float)((1.0 - p_up) * discount);
    strike[k] = (float)x;
  }
  cl_mem params_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, options * sizeof(TreeParams), NULL);
  cl_mem strike_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, options * sizeof(float), NULL);
  cl_mem value_buf = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, options * sizeof(float), NULL);
  APP_ARG(kernel, 0, params_buf);
  APP_ARG(kernel, 1, strike_buf);
  APP_ARG(kernel, 2, value_buf);
  size_t global = (size_t)options * GROUP, local = GROUP;

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, params_buf, CL_TRUE, 0, options * sizeof(TreeParams), params,
                                   0, NULL, NULL));
    APP_CHECK(clEnqueueWriteBuffer(b.queue, strike_buf, CL_TRUE, 0, options * sizeof(float), strike, 0,
                                   NULL, NULL));
    bench_kernels_begin(&t);
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    ++t.launches;
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, value_buf, CL_TRUE, 0, options * sizeof(float), value, 0,
                                  NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  float got[SAMPLES], want[SAMPLES];
  float* scratch = (float*)app_alloc((steps + 1) * sizeof(float));
  bench_sample_indices(options, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[k] = value[idx[k]];
    want[k] = option_reference(params[idx[k]], strike[idx[k]], steps, scratch);
  }
  app_check_f32("value", got, want, SAMPLES);
  bench_print_checksum("value", value, options * sizeof(float));
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(params_buf));
  APP_CHECK(clReleaseMemObject(strike_buf));
  APP_CHECK(clReleaseMemObject(value_buf));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(params);
  free(strike);
  free(value);
  free(scratch);
  return app_finish();
}
