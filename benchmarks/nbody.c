/* Compute-bound, regular: one all-pairs n-body step per launch, in double precision. Each
 * work-item sums the pull of every body on its own (tiles of 256 bodies staged in __local
 * memory), then advances its velocity and position. Every launch reads all positions and writes
 * disjoint outputs: O(n^2) work for O(n) data.
 *
 * Double precision, because OpenCL requires double sqrt and division to be correctly rounded
 * (single precision allows 3 and 2.5 ulp), so with FP_CONTRACT OFF every device and the host give
 * the same bits and a split launch must too. Sampled bodies are checked against the host. */
#include "common/bench_util.h"

#include <math.h>

static const char* kSource =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define TILE 256\n"
    "__kernel void nbody_step(__global const double4* pos, __global const double4* vel,\n"
    "                         __global double4* pos_out, __global double4* vel_out,\n"
    "                         uint n, double dt, double eps2) {\n"
    "  __local double4 tile[TILE];\n"
    "  uint i = (uint)get_global_id(0), lid = (uint)get_local_id(0);\n"
    "  double4 p = pos[i];\n"
    "  double ax = 0.0, ay = 0.0, az = 0.0;\n"
    "  for (uint base = 0; base < n; base += TILE) {\n"
    "    tile[lid] = pos[base + lid];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint j = 0; j < TILE; ++j) {\n"
    "      double4 q = tile[j];\n"
    "      double dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;\n"
    "      double r2 = ((dx * dx + dy * dy) + dz * dz) + eps2;\n"
    "      double inv = 1.0 / sqrt(r2);\n"
    "      double s = q.w * ((inv * inv) * inv);\n"
    "      ax = ax + dx * s;\n"
    "      ay = ay + dy * s;\n"
    "      az = az + dz * s;\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  double4 v = vel[i];\n"
    "  v.x = v.x + ax * dt;\n"
    "  v.y = v.y + ay * dt;\n"
    "  v.z = v.z + az * dt;\n"
    "  p.x = p.x + v.x * dt;\n"
    "  p.y = p.y + v.y * dt;\n"
    "  p.z = p.z + v.z * dt;\n"
    "  pos_out[i] = p;\n"
    "  vel_out[i] = v;\n"
    "}\n";

enum { TILE = 256, SAMPLES = 64 };
typedef struct {
  double x, y, z, w;
} Double4;

static void body_reference(const Double4* pos, const Double4* vel, uint32_t n, uint32_t i, double dt,
                           double eps2, Double4* p_out, Double4* v_out) {
  Double4 p = pos[i], v = vel[i];
  double ax = 0.0, ay = 0.0, az = 0.0;
  for (uint32_t j = 0; j < n; ++j) {
    Double4 q = pos[j];
    double dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    double r2 = ((dx * dx + dy * dy) + dz * dz) + eps2;
    double inv = 1.0 / sqrt(r2);
    double s = q.w * ((inv * inv) * inv);
    ax = ax + dx * s;
    ay = ay + dy * s;
    az = az + dz * s;
  }
  v.x = v.x + ax * dt;
  v.y = v.y + ay * dt;
  v.z = v.z + az * dt;
  p.x = p.x + v.x * dt;
  p.y = p.y + v.y * dt;
  p.z = p.z + v.z * dt;
  *p_out = p;
  *v_out = v;
}

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 16384, 1,
                                       "bodies (rounded up to a multiple of 256)", NULL);
  const uint32_t n = (uint32_t)bench_round_up((size_t)o.size, TILE);
  bench_print_work((double)n * n);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "");
  cl_device_fp_config fp64 = 0;
  APP_CHECK(clGetDeviceInfo(b.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL));
  if (fp64 == 0) {
    printf("error: the device has no double precision\nFAIL\n");
    return 1;
  }
  cl_kernel kernel = app_create_kernel(b.program, "nbody_step");
  const size_t bytes = (size_t)n * sizeof(Double4);
  Double4* pos = (Double4*)app_alloc(bytes);
  Double4* vel = (Double4*)app_alloc(bytes);
  Double4* pos_out = (Double4*)app_alloc(bytes);
  Double4* vel_out = (Double4*)app_alloc(bytes);
  for (uint32_t i = 0; i < n; ++i) {
    pos[i].x = bench_unit_float(4 * (uint64_t)i) * 2.0 - 1.0;
    pos[i].y = bench_unit_float(4 * (uint64_t)i + 1) * 2.0 - 1.0;
    pos[i].z = bench_unit_float(4 * (uint64_t)i + 2) * 2.0 - 1.0;
    pos[i].w = (0.5 + bench_unit_float(4 * (uint64_t)i + 3)) / (double)n;  /* mass */
    vel[i].x = pos[i].y * 0.1;
    vel[i].y = -pos[i].x * 0.1;
    vel[i].z = 0.0;
    vel[i].w = 0.0;
  }
  cl_mem pos_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  cl_mem vel_buf = app_create_buffer(b.ctx, CL_MEM_READ_ONLY, bytes, NULL);
  cl_mem pos_out_buf = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  cl_mem vel_out_buf = app_create_buffer(b.ctx, CL_MEM_WRITE_ONLY, bytes, NULL);
  const double dt = 1e-3, eps2 = 1e-4;
  APP_ARG(kernel, 0, pos_buf);
  APP_ARG(kernel, 1, vel_buf);
  APP_ARG(kernel, 2, pos_out_buf);
  APP_ARG(kernel, 3, vel_out_buf);
  APP_ARG(kernel, 4, n);
  APP_ARG(kernel, 5, dt);
  APP_ARG(kernel, 6, eps2);
  size_t global = n, local = TILE;

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, pos_buf, CL_TRUE, 0, bytes, pos, 0, NULL, NULL));
    APP_CHECK(clEnqueueWriteBuffer(b.queue, vel_buf, CL_TRUE, 0, bytes, vel, 0, NULL, NULL));
    bench_kernels_begin(&t);
    APP_CHECK(clEnqueueNDRangeKernel(b.queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    ++t.launches;
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, pos_out_buf, CL_TRUE, 0, bytes, pos_out, 0, NULL, NULL));
    APP_CHECK(clEnqueueReadBuffer(b.queue, vel_out_buf, CL_TRUE, 0, bytes, vel_out, 0, NULL, NULL));
  }
  bench_total_end(&t);

  size_t idx[SAMPLES];
  Double4 got[2 * SAMPLES], want[2 * SAMPLES];
  bench_sample_indices(n, SAMPLES, idx);
  for (size_t k = 0; k < SAMPLES; ++k) {
    got[2 * k] = pos_out[idx[k]];
    got[2 * k + 1] = vel_out[idx[k]];
    body_reference(pos, vel, n, (uint32_t)idx[k], dt, eps2, &want[2 * k], &want[2 * k + 1]);
  }
  /* Bit-exact comparison, through the 64-bit integer check (a double is 8 bytes). */
  if (memcmp(got, want, sizeof(got)) != 0) {
    for (size_t k = 0; k < 2 * SAMPLES; ++k)
      if (memcmp(&got[k], &want[k], sizeof(Double4)) != 0) {
        printf("mismatch %s[%zu]: got %a expected %a\n", k % 2 ? "vel" : "pos", idx[k / 2], got[k].x,
               want[k].x);
        break;
      }
    app_expect(0, "sampled bodies equal the host reference");
  }
  bench_print_checksum("pos", pos_out, bytes);
  bench_print_checksum("vel", vel_out, bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(pos_buf));
  APP_CHECK(clReleaseMemObject(vel_buf));
  APP_CHECK(clReleaseMemObject(pos_out_buf));
  APP_CHECK(clReleaseMemObject(vel_out_buf));
  APP_CHECK(clReleaseKernel(kernel));
  bench_close(&b);
  free(pos);
  free(vel);
  free(pos_out);
  free(vel_out);
  return app_finish();
}
