// Workgroup-wide reductions for the row kernels (one workgroup of 256 invocations per row).
// Every invocation of the workgroup must call them (they contain barriers).
shared float red_[256];

float wg_sum(float v) {
  const uint lid = gl_LocalInvocationID.x;
  barrier();
  red_[lid] = v;
  barrier();
  for (uint s = 128; s > 0; s >>= 1) {
    if (lid < s) red_[lid] += red_[lid + s];
    barrier();
  }
  return red_[0];
}

// NaN-propagating max: GLSL's max may return either operand when one is NaN.
float max_nan(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : max(a, b)); }

float wg_max(float v) {
  const uint lid = gl_LocalInvocationID.x;
  barrier();
  red_[lid] = v;
  barrier();
  for (uint s = 128; s > 0; s >>= 1) {
    if (lid < s) red_[lid] = max_nan(red_[lid], red_[lid + s]);
    barrier();
  }
  return red_[0];
}

// (M, log S): the row's max and log of sum(exp(x - M)), from each invocation's running
// (max m, sum s of exp(x - m)). Kept apart, x - M - log S loses nothing to cancellation.
vec2 wg_max_logsum(float m, float s) {
  const float M = wg_max(m);
  const float S = wg_sum(m == -1.0 / 0.0 ? 0.0 : s * exp(m - M));
  return vec2(M, log(S));
}

// Folds v into a running (max m, sum s of exp(x - m)): online softmax, one pass over the row.
// A NaN becomes the running max, so that the whole row is NaN (as on the CPU).
void online_add(inout float m, inout float s, float v) {
  if (isnan(v) || isnan(m)) {
    m = uintBitsToFloat(0x7FC00000u);
    s = m;
  } else if (v > m) {
    s = s * exp(m - v) + 1.0;
    m = v;
  } else {
    s += exp(v - m);
  }
}
