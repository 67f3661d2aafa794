/* A C program as written for a board, linked with -lrknnrt: it must find the host runtime under
 * the vendor's name (host/runtime/rknnrt/meson.build) and multiply through the matmul API
 * (docs/matmul.md): int8 x int8 -> int32 with native B and C, and float16 -> float32 over a
 * dynamic shape set, each against a naive reference. Exits non-zero on the first difference. */
#define _GNU_SOURCE
#include <rknnxx/abi/c_matmul_api.h>

#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      ++failures;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* float16 bits of small integers (exact) and back, enough for this test's values. */
static uint16_t half_of_int(int v) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000u : 0;
  unsigned a = (unsigned)(v < 0 ? -v : v), e = 0;
  while ((a >> e) > 1) ++e;
  return (uint16_t)(sign | ((e + 15u) << 10) | (((a << 10) >> e) & 0x3FFu));
}

static int int8_native(void) {
  enum { M = 3, K = 64, N = 32 };
  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.M = M;
  info.K = K;
  info.N = N;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  info.B_layout = RKNN_MM_LAYOUT_NATIVE;
  info.AC_layout = RKNN_MM_LAYOUT_NATIVE;
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) return 1;
  EXPECT(io.C.n_dims == 3 && io.C.dims[2] == 4, "C native: [N/4, M, 4] expected");

  int8_t a[M * K], b[K * N];
  for (int i = 0; i < M * K; ++i) a[i] = (int8_t)(i % 11 - 5);
  for (int i = 0; i < K * N; ++i) b[i] = (int8_t)(i % 13 - 6);
  rknn_tensor_mem* ma = rknn_create_mem(ctx, io.A.size);
  rknn_tensor_mem* mb = rknn_create_mem(ctx, io.B.size);
  rknn_tensor_mem* mc = rknn_create_mem(ctx, io.C.size);
  if (!ma || !mb || !mc) return 1;
  /* A native: [K/subK, M, subK]; B through the runtime's converter. */
  const unsigned sub_k = io.A.dims[2];
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) ((int8_t*)ma->virt_addr)[(k / sub_k * M + m) * sub_k + k % sub_k] = a[m * K + k];
  if (rknn_B_normal_layout_to_native_layout(b, mb->virt_addr, K, N, &info) != RKNN_SUCC) return 1;
  if (rknn_matmul_set_io_mem(ctx, ma, &io.A) || rknn_matmul_set_io_mem(ctx, mb, &io.B) ||
      rknn_matmul_set_io_mem(ctx, mc, &io.C) || rknn_matmul_run(ctx))
    return 1;
  const unsigned sub_n = io.C.dims[2];
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int32_t want = 0;
      for (int k = 0; k < K; ++k) want += a[m * K + k] * b[k * N + n];
      const int32_t got = ((int32_t*)mc->virt_addr)[(n / sub_n * M + m) * sub_n + n % sub_n];
      EXPECT(got == want, "int8: C[%d][%d] = %d, expected %d", m, n, got, want);
    }
  rknn_destroy_mem(ctx, ma);
  rknn_destroy_mem(ctx, mb);
  rknn_destroy_mem(ctx, mc);
  return rknn_matmul_destroy(ctx) != RKNN_SUCC;
}

static int float16_dynamic(void) {
  enum { K = 32, N = 16, MAX_M = 4 };
  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
  rknn_matmul_shape shapes[2] = {{1, K, N}, {MAX_M, K, N}};
  rknn_matmul_io_attr io[2];
  rknn_matmul_ctx ctx = 0;
  if (rknn_matmul_create_dynamic_shape(&ctx, &info, 2, shapes, io) != RKNN_SUCC) return 1;
  rknn_tensor_mem* ma = rknn_create_mem(ctx, io[1].A.size);
  rknn_tensor_mem* mb = rknn_create_mem(ctx, io[1].B.size);
  rknn_tensor_mem* mc = rknn_create_mem(ctx, io[1].C.size);
  if (!ma || !mb || !mc) return 1;
  for (int i = 0; i < MAX_M * K; ++i) ((uint16_t*)ma->virt_addr)[i] = half_of_int(i % 5 - 2);
  for (int i = 0; i < K * N; ++i) ((uint16_t*)mb->virt_addr)[i] = half_of_int(i % 7 - 3);
  for (int s = 0; s < 2; ++s) {
    if (rknn_matmul_set_dynamic_shape(ctx, &shapes[s]) || rknn_matmul_set_io_mem(ctx, ma, &io[s].A) ||
        rknn_matmul_set_io_mem(ctx, mb, &io[s].B) || rknn_matmul_set_io_mem(ctx, mc, &io[s].C) || rknn_matmul_run(ctx))
      return 1;
    for (int m = 0; m < shapes[s].M; ++m)
      for (int n = 0; n < N; ++n) {
        float want = 0;
        for (int k = 0; k < K; ++k) want += (float)((m * K + k) % 5 - 2) * (float)((k * N + n) % 7 - 3);
        const float got = ((float*)mc->virt_addr)[m * N + n];
        EXPECT(got == want, "float16 shape %d: C[%d][%d] = %g, expected %g", s, m, n, got, want);
      }
  }
  rknn_destroy_mem(ctx, ma);
  rknn_destroy_mem(ctx, mb);
  rknn_destroy_mem(ctx, mc);
  return rknn_matmul_destroy(ctx) != RKNN_SUCC;
}

/* Counts the loaded objects named librknnrt.so and librknnxx_host.so. */
static int count_runtime(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  int* counts = data;
  const char* base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  base = base ? base + 1 : info->dlpi_name;
  if (base && strcmp(base, "librknnrt.so") == 0) ++counts[0];
  if (base && strncmp(base, "librknnxx_host.so", 17) == 0) ++counts[1];
  return 0;
}

int main(void) {
  int counts[2] = {0, 0};
  dl_iterate_phdr(count_runtime, counts);
  EXPECT(counts[0] == 1 && counts[1] == 0, "loaded: %d librknnrt.so and %d librknnxx_host.so; expected 1 and 0",
         counts[0], counts[1]);
  EXPECT(int8_native() == 0, "the int8 native multiplication failed");
  EXPECT(float16_dynamic() == 0, "the float16 dynamic-shape multiplication failed");
  if (failures == 0) printf("matmul through librknnrt.so: ok\n");
  return failures == 0 ? 0 : 1;
}
