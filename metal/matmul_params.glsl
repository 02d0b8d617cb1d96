// Push constants of every matmul kernel (matmul_tiled.glsl, coop/matmul_coop.glsl); the host
// fills them in one place, gpu::matmul (cpp/pcp/backend/gpu/ops.cpp).
layout(push_constant) uniform Params {
  uint M, N, K, batch;
  uint a_off, b_off, c_off, tiles_n;
  int rsa, csa, rsb, csb;
  // Batch entry bi = bo * inner + bn: its A starts bo * a_outer + bn * a_batch elements after
  // a_off (strides 0: broadcast), so two batch dimensions, like attention's (batch, head), need
  // no copy even when they do not merge into one stride.
  int a_batch, b_batch;
  uint inner;
  int a_outer, b_outer;
  float alpha;  // scales the products as they are written
} p;
