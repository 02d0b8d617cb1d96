// The combining rules of reduce.comp and reduce_cols.comp. op: 0 sum, 1 max, 2 min, 3 argmax,
// 4 argmin (the first occurrence wins, and NaN beats any number, as NumPy). Needs p.op.
#define NO_INDEX 0xFFFFFFFFu

float combine(float u, float v) {
  if (p.op == 0) return u + v;
  if (isnan(u) || isnan(v)) return u + v;  // NaN wins, as NumPy
  return p.op == 1 ? max(u, v) : min(u, v);
}

// Whether (v, j) beats (u, i) for argmax / argmin; i == NO_INDEX is an empty slot.
bool better(float v, uint j, float u, uint i) {
  if (j == NO_INDEX) return false;
  if (i == NO_INDEX) return true;
  if (isnan(u) || isnan(v)) return isnan(v) && (!isnan(u) || j < i);
  if (v == u) return j < i;
  return p.op == 3 ? v > u : v < u;
}

float identity_of_op() { return p.op == 0 ? 0.0 : (p.op == 1 || p.op == 3 ? -1.0 / 0.0 : 1.0 / 0.0); }

// Folds (v, j) into the running (acc, at).
void fold(inout float acc, inout uint at, float v, uint j) {
  if (p.op < 3) acc = combine(acc, v);
  else if (better(v, j, acc, at)) acc = v, at = j;
}

// Writes result w: a float, or an int64 index as (low word, 0).
#define STORE_RESULT(w, acc, at)                    \
  if (p.op >= 3) {                                   \
    out_[p.out_off + 2 * (w)] = (at);                \
    out_[p.out_off + 2 * (w) + 1] = 0u;              \
  } else {                                           \
    out_[p.out_off + (w)] = floatBitsToUint(acc);    \
  }
