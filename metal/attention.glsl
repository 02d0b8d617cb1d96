// Shared by the fused attention kernels (attention*.comp): flash-style, one invocation per query
// row (or key row, for dk and dv), scores in blocks of 64 keys through shared memory, no T x T
// matrix; float32 math on float32, float16 or bfloat16 heads. Heads are at most 64 wide (D even).
// The tensor-core kernels (coop/attention_*.glsl) share the push constants and helpers.
//
// Head element (b, h, t, d) of q, k, v (and of dq, dk, dv) is at off + b sb + h sh + t st + d; the
// output o (and its cotangent) is a (B, T, H, D) contiguous buffer; lse and delta are (B, H, T).
#define DMAX 64
layout(push_constant) uniform Params {
  uint B, H, T, D;
  uint causal, in_type, out_type;  // T_F32, T_F16 or T_BF16: of q, k, v, o, do; of o or dq, dk, dv
  float scale;
  uint q_off, k_off, v_off;
  int sb, sh, st;
  uint g_off, g2_off;  // the outputs' offsets: o (forward); dq; dk and dv
  float drop, drop_scale;  // dropout on the attention weights: the probability (0: none), 1 / (1 - drop)
} p;

// Weight (bh, i, j) with dropout applied to x, its value or its gradient: kept (times drop_scale)
// where bit (bh T + i) T + j of the kernel's `mask` buffer (attention_mask.comp: the mask
// pcp.dropout draws over the (B, H, T, T) weights) is set. The host keeps B H T T below 2^32.
float dropped(uint bh, uint i, uint j, float x) {
  if (p.drop == 0.0) return x;
  const uint e = (bh * p.T + i) * p.T + j;
  return ((mask[e >> 5] >> (e & 31u)) & 1u) != 0u ? x * p.drop_scale : 0.0;
}

// Element e of a buffer of 32-bit words holding float32 or 16-bit values.
#define LOADX(buf, type, e)                                                     \
  ((type) == T_F32 ? uintBitsToFloat(buf[e])                                    \
                   : (type) == T_BF16 ? uintBitsToFloat(HALF_OF(buf, e) << 16) \
                                      : f16_value(HALF_OF(buf, e)))
// Row `vals` (DMAX floats, the first p.D real) into buf from element `base` (even for 16-bit types).
#define STORE_ROW(buf, type, base, vals)                                                            \
  if ((type) == T_F32) {                                                                            \
    for (uint d = 0; d < DMAX; ++d) if (d < p.D) buf[(base) + d] = floatBitsToUint(vals[d]); \
  } else {                                                                                          \
    for (uint d = 0; d < DMAX; d += 2)                                                   \
      if (d < p.D) buf[((base) + d) / 2] = (type) == T_BF16 ? bf16_bits(vals[d]) | bf16_bits(vals[d + 1]) << 16 \
                                                       : f16_bits(vals[d]) | f16_bits(vals[d + 1]) << 16; \
  }
uint head_row(uint off, uint b, uint h, uint t) { return uint(int(off) + int(b) * p.sb + int(h) * p.sh + int(t) * p.st); }
uint out_row(uint b, uint h, uint t) { return ((b * p.T + t) * p.H + h) * p.D; }
// Keys a query block (rows qb * 64 ..) attends to: all, or up to its last row when causal.
uint key_end(uint qb) { return p.causal != 0u ? min(p.T, (qb + 1u) * 64u) : p.T; }
bool attends(uint i, uint j) { return j < p.T && i < p.T && (p.causal == 0u || j <= i); }
