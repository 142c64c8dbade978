/* Short and launch-bound: modified Gram-Schmidt QR of an S x S float matrix stored column by column,
 * as textbook GPU codes write it. Column k takes two launches: `gs_normalize` (one work-group of 256)
 * reduces the column to its norm R[k][k] and divides the column by it (it becomes Q's column k), and
 * `gs_project` gives each later column j its coefficient R[k][j] = q_k . a_j and subtracts R[k][j] q_k
 * from it. 2S - 1 launches (the last column has nothing to project), the projections shrinking from
 * S - 1 columns of work to one: half the launches cannot be split at all (one work-group), and the
 * program as a whole runs about a second on one CPU core at S = 768 (docs/testbed.md).
 *
 * The matrix is diagonally dominant, so Q is far from singular. Checked without a host run of the
 * whole factorization: sampled pairs of Q's columns must be orthonormal and sampled entries of Q R
 * must give back A, within 1e-4. Divisions and square roots are built correctly rounded, so that a
 * GPU and a CPU round them alike when coex splits a launch over both. */
#include <math.h>

#include "common/bench_util.h"

static const char* kSource =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#define GROUP 256\n"
    "__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))\n"
    "void gs_normalize(__global float* a, __global float* r, uint m, uint n, uint k) {\n"
    "  __local float part[GROUP];\n"
    "  uint lid = (uint)get_local_id(0);\n"
    "  float s = 0.0f;\n"
    "  for (uint i = lid; i < m; i += GROUP) s = s + a[k * m + i] * a[k * m + i];\n"
    "  part[lid] = s;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint step = GROUP / 2; step > 0; step /= 2) {\n"
    "    if (lid < step) part[lid] = part[lid] + part[lid + step];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  float norm = sqrt(part[0]);\n"
    "  if (lid == 0) r[k * n + k] = norm;\n"
    "  for (uint i = lid; i < m; i += GROUP) a[k * m + i] = a[k * m + i] / norm;\n"
    "}\n"
    "__kernel void gs_project(__global float* a, __global float* r, uint m, uint n, uint k) {\n"
    "  uint j = k + 1 + (uint)get_global_id(0);\n"
    "  if (j >= n) return;\n"
    "  float dot = 0.0f;\n"
    "  for (uint i = 0; i < m; ++i) dot = dot + a[k * m + i] * a[j * m + i];\n"
    "  r[k * n + j] = dot;\n"
    "  for (uint i = 0; i < m; ++i) a[j * m + i] = a[j * m + i] - dot * a[k * m + i];\n"
    "}\n";

enum { GROUP = 256, COLUMN_GROUP = 64, SAMPLES = 512 };

int main(int argc, char** argv) {
  BenchOptions o = bench_parse_options(argc, argv, 512, 1, "matrix order", NULL);
  const uint32_t n = (uint32_t)o.size, m = n;
  bench_print_work(2.0 * m * n * n);
  if (o.work_only) return 0;

  BenchContext b = bench_open(&o, kSource, "-cl-fp32-correctly-rounded-divide-sqrt");
  cl_kernel normalize = app_create_kernel(b.program, "gs_normalize");
  cl_kernel project = app_create_kernel(b.program, "gs_project");
  const size_t a_bytes = (size_t)m * n * sizeof(float), r_bytes = (size_t)n * n * sizeof(float);
  float* input = (float*)app_alloc(a_bytes);
  float* q = (float*)app_alloc(a_bytes);
  float* r = (float*)calloc((size_t)n * n, sizeof(float));
  if (r == NULL) app_die(CL_OUT_OF_HOST_MEMORY, "calloc", __FILE__, __LINE__);
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < m; ++i) input[j * m + i] = bench_unit_float(j * m + i) + (i == j ? (float)n : 0.0f);
  cl_mem a_buf = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, a_bytes, NULL);
  cl_mem r_buf = app_create_buffer(b.ctx, CL_MEM_READ_WRITE, r_bytes, NULL);
  cl_kernel both[2] = {normalize, project};
  for (int i = 0; i < 2; ++i) {
    APP_ARG(both[i], 0, a_buf);
    APP_ARG(both[i], 1, r_buf);
    APP_ARG(both[i], 2, m);
    APP_ARG(both[i], 3, n);
  }

  BenchTimer t = {0};
  for (long rep = 0; rep < o.reps; ++rep) {
    bench_total_begin(&t);
    APP_CHECK(clEnqueueWriteBuffer(b.queue, a_buf, CL_TRUE, 0, a_bytes, input, 0, NULL, NULL));
    APP_CHECK(clEnqueueWriteBuffer(b.queue, r_buf, CL_TRUE, 0, r_bytes, r, 0, NULL, NULL));
    bench_kernels_begin(&t);
    for (uint32_t k = 0; k < n; ++k) {
      size_t group = GROUP;
      for (int i = 0; i < 2; ++i) APP_ARG(both[i], 4, k);
      APP_CHECK(clEnqueueNDRangeKernel(b.queue, normalize, 1, NULL, &group, &group, 0, NULL, NULL));
      ++t.launches;
      if (k + 1 < n) {
        size_t later = bench_round_up(n - k - 1, COLUMN_GROUP), column_group = COLUMN_GROUP;
        APP_CHECK(clEnqueueNDRangeKernel(b.queue, project, 1, NULL, &later, &column_group, 0, NULL, NULL));
        ++t.launches;
      }
    }
    bench_kernels_end(&t, b.queue);
    APP_CHECK(clEnqueueReadBuffer(b.queue, a_buf, CL_TRUE, 0, a_bytes, q, 0, NULL, NULL));
    APP_CHECK(clEnqueueReadBuffer(b.queue, r_buf, CL_TRUE, 0, r_bytes, r, 0, NULL, NULL));
  }
  bench_total_end(&t);

  /* Sampled checks, in double: q_i . q_j = (i == j), and (Q R)[i][j] = A[i][j] (R is upper
   * triangular: the sum runs over k <= j). */
  size_t idx[SAMPLES];
  bench_sample_indices((size_t)m * n, SAMPLES, idx);
  long bad = 0;
  for (size_t s = 0; s < SAMPLES; ++s) {
    size_t row = idx[s] % m, col = idx[s] / m, other = idx[(s + 1) % SAMPLES] / m;
    if (s % 4 == 0) other = col;
    double dot = 0.0, qr = 0.0;
    for (size_t i = 0; i < m; ++i) dot += (double)q[col * m + i] * q[other * m + i];
    for (size_t k = 0; k <= col; ++k) qr += (double)q[k * m + row] * r[k * n + col];
    double want_dot = other == col ? 1.0 : 0.0, want_a = input[col * m + row];
    if (!(fabs(dot - want_dot) <= 1e-4) || !(fabs(qr - want_a) <= 1e-4 * (fabs(want_a) + 1.0))) {
      if (bad < 5)
        printf("mismatch at column %zu (row %zu, against column %zu): q.q %.9g (want %g), (QR) %.9g (want %.9g)\n", col,
               row, other, dot, want_dot, qr, want_a);
      ++bad;
    }
  }
  app_expect(bad == 0, "Q is orthonormal and Q R gives back A within 1e-4 on sampled entries");
  bench_print_checksum("q", q, a_bytes);
  bench_print_checksum("r", r, r_bytes);
  bench_print_times(&t);

  APP_CHECK(clReleaseMemObject(a_buf));
  APP_CHECK(clReleaseMemObject(r_buf));
  for (int i = 0; i < 2; ++i) APP_CHECK(clReleaseKernel(both[i]));
  bench_close(&b);
  free(input);
  free(q);
  free(r);
  return app_finish();
}
