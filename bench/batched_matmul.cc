#include "batched_matmul.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "foresight/core/stopwatch.h"

namespace foresight::bench {

namespace {

bool Ok(dnnl_status_t s, const char* what) {
  if (s == dnnl_success) return true;
  std::fprintf(stderr, "batched matmul: %s: %s\n", what, dnnl_status2str(s));
  return false;
}

}  // namespace

double BestBatchedMatmulSeconds(int64_t count, int64_t m, int64_t n, int64_t k, bool trans_b, int threads, int reps) {
  std::vector<float> a(static_cast<size_t>(count * m * k)), b(static_cast<size_t>(count * k * n)),
      c(static_cast<size_t>(count * m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 11) * 0.01f - 0.05f;
  // Row-major per product; op(b) = b^T reads b stored [n, k] with the
  // [k, n] view's strides swapped.
  const dnnl_dims_t a_dims = {count, m, k}, a_strides = {m * k, k, 1};
  const dnnl_dims_t b_dims = {count, k, n};
  const dnnl_dims_t b_strides = {k * n, trans_b ? 1 : n, trans_b ? k : 1};
  const dnnl_dims_t c_dims = {count, m, n}, c_strides = {m * n, n, 1};
  dnnl_memory_desc_t a_md, b_md, c_md;
  dnnl_matmul_desc_t op;
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_t am = nullptr, bm = nullptr, cm = nullptr;
  double best = -1.0;
  omp_set_num_threads(threads);
  if (Ok(dnnl_memory_desc_init_by_strides(&a_md, 3, a_dims, dnnl_f32, a_strides), "a") &&
      Ok(dnnl_memory_desc_init_by_strides(&b_md, 3, b_dims, dnnl_f32, b_strides), "b") &&
      Ok(dnnl_memory_desc_init_by_strides(&c_md, 3, c_dims, dnnl_f32, c_strides), "c") &&
      Ok(dnnl_matmul_desc_init(&op, &a_md, &b_md, nullptr, &c_md), "matmul desc") &&
      Ok(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine") &&
      Ok(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream") &&
      Ok(dnnl_primitive_desc_create(&pd, &op, nullptr, engine, nullptr), "primitive desc") &&
      Ok(dnnl_primitive_create(&prim, pd), "primitive") && Ok(dnnl_memory_create(&am, &a_md, engine, a.data()), "a") &&
      Ok(dnnl_memory_create(&bm, &b_md, engine, b.data()), "b") &&
      Ok(dnnl_memory_create(&cm, &c_md, engine, c.data()), "c")) {
    const dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    for (int r = 0; r <= reps; ++r) {
      Stopwatch t;
      if (!Ok(dnnl_primitive_execute(prim, stream, 3, args), "execute") || !Ok(dnnl_stream_wait(stream), "wait")) {
        best = -1.0;
        break;
      }
      const double s = t.Seconds();
      if (r > 0) best = best < 0 ? s : std::min(best, s);  // run 0 is the warm-up
    }
  }
  for (dnnl_memory_t mem : {am, bm, cm}) {
    if (mem != nullptr) dnnl_memory_destroy(mem);
  }
  if (prim != nullptr) dnnl_primitive_destroy(prim);
  if (pd != nullptr) dnnl_primitive_desc_destroy(pd);
  if (stream != nullptr) dnnl_stream_destroy(stream);
  if (engine != nullptr) dnnl_engine_destroy(engine);
  omp_set_num_threads(1);
  return best;
}

}  // namespace foresight::bench
