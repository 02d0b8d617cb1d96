// reduce.comp's reduction on 64-bit values, for reduce_f64.comp and reduce_i64.comp: define VAL
// (double or int64_t), LOWEST and HIGHEST (the identities of max and min) and IS_NAN(v) first.
// A contiguous (O, R, I) block along R, one workgroup per result, its invocations striding over
// R and then a tree in shared memory (a fixed order: the same bits every run). op: 0 sum, 1 max,
// 2 min, 3 argmax, 4 argmin (the first occurrence wins, NaN beats any number, as NumPy); the
// result is a VAL, or an int64 index.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { VAL x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { VAL out_[]; };
layout(push_constant) uniform Params { uint O, R, I, x_off, out_off, op; } p;

#define NO_INDEX 0xFFFFFFFFu

VAL combine(VAL u, VAL v) {
  if (p.op == 0) return u + v;
  if (IS_NAN(u)) return u;
  if (IS_NAN(v)) return v;
  return p.op == 1 ? (u > v ? u : v) : (u < v ? u : v);
}

bool better(VAL v, uint j, VAL u, uint i) {
  if (j == NO_INDEX) return false;
  if (i == NO_INDEX) return true;
  if (IS_NAN(u) || IS_NAN(v)) return IS_NAN(v) && (!IS_NAN(u) || j < i);
  if (v == u) return j < i;
  return p.op == 3 ? v > u : v < u;
}

VAL identity_of_op() { return p.op == 0 ? VAL(0) : (p.op == 1 || p.op == 3 ? LOWEST : HIGHEST); }

void fold(inout VAL acc, inout uint at, VAL v, uint j) {
  if (p.op < 3) acc = combine(acc, v);
  else if (better(v, j, acc, at)) acc = v, at = j;
}

shared VAL partial[256];
shared uint partial_index[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint w = gl_WorkGroupID.x; w < p.O * p.I; w += gl_NumWorkGroups.x) {
    const uint o = w / p.I, i = w % p.I;
    const uint base = p.x_off + o * p.R * p.I + i;
    VAL acc = identity_of_op();
    uint at = NO_INDEX;
    for (uint r = lid; r < p.R; r += 256) fold(acc, at, x[base + r * p.I], r);
    partial[lid] = acc;
    partial_index[lid] = at;
    barrier();
    for (uint h = 128; h > 0; h >>= 1) {
      if (lid < h) {
        VAL a = partial[lid];
        uint ai = partial_index[lid];
        fold(a, ai, partial[lid + h], partial_index[lid + h]);
        partial[lid] = a;
        partial_index[lid] = ai;
      }
      barrier();
    }
    if (lid == 0) out_[p.out_off + w] = p.op >= 3 ? VAL(partial_index[0]) : partial[0];
    barrier();
  }
}
