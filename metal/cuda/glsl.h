// GLSL's types and built-in functions in CUDA C++, for PCP's compute kernels (metal/*.comp) as
// metal/glsl_to_cuda.py translates them: the CUDA runtime (cpp/pcp/backend/cuda/) compiles them
// with NVRTC. Only what the kernels use is here; a kernel that needs more fails to compile in
// tests/test_cuda_kernels.py, which compiles every one.
#pragma once

typedef unsigned int uint;

// ---- vectors: float, uint, int and bool, 2 to 4 components, std430's alignment ----
template <class T, int N>
struct gvec;

#define PCP_VEC_COMMON(N)                                                     \
  __device__ T& operator[](uint i) { return (&x)[i]; }                        \
  __device__ const T& operator[](uint i) const { return (&x)[i]; }            \
  __device__ gvec<T, 2> xy() const { return gvec<T, 2>((*this)[0], (*this)[1]); }

template <class T>
struct alignas(2 * sizeof(T)) gvec<T, 2> {
  T x, y;
  gvec() = default;
  __device__ explicit gvec(T s) : x(s), y(s) {}
  __device__ gvec(T a, T b) : x(a), y(b) {}
  template <class U>
  __device__ explicit gvec(const gvec<U, 2>& v) : x(T(v.x)), y(T(v.y)) {}
  PCP_VEC_COMMON(2)
};

template <class T>
struct alignas(4 * sizeof(T)) gvec<T, 3> {
  T x, y, z;
  gvec() = default;
  __device__ explicit gvec(T s) : x(s), y(s), z(s) {}
  __device__ gvec(T a, T b, T c) : x(a), y(b), z(c) {}
  template <class U>
  __device__ explicit gvec(const gvec<U, 3>& v) : x(T(v.x)), y(T(v.y)), z(T(v.z)) {}
  PCP_VEC_COMMON(3)
};

template <class T>
struct alignas(4 * sizeof(T)) gvec<T, 4> {
  T x, y, z, w;
  gvec() = default;
  __device__ explicit gvec(T s) : x(s), y(s), z(s), w(s) {}
  __device__ gvec(T a, T b, T c, T d) : x(a), y(b), z(c), w(d) {}
  __device__ gvec(gvec<T, 2> a, gvec<T, 2> b) : x(a.x), y(a.y), z(b.x), w(b.y) {}
  __device__ gvec(gvec<T, 3> a, T d) : x(a.x), y(a.y), z(a.z), w(d) {}
  template <class U>
  __device__ explicit gvec(const gvec<U, 4>& v) : x(T(v.x)), y(T(v.y)), z(T(v.z)), w(T(v.w)) {}
  PCP_VEC_COMMON(4)
  __device__ gvec<T, 2> zw() const { return gvec<T, 2>(z, w); }
  __device__ gvec<T, 3> xyz() const { return gvec<T, 3>(x, y, z); }
};

typedef gvec<float, 2> vec2;
typedef gvec<float, 3> vec3;
typedef gvec<float, 4> vec4;
typedef gvec<uint, 2> uvec2;
typedef gvec<uint, 3> uvec3;
typedef gvec<uint, 4> uvec4;
typedef gvec<int, 2> ivec2;
typedef gvec<int, 3> ivec3;
typedef gvec<int, 4> ivec4;
typedef gvec<bool, 2> bvec2;
typedef gvec<bool, 4> bvec4;

// Componentwise operators, vector with vector and with scalar on either side.
#define PCP_VEC_OP(op)                                                                        \
  template <class T, int N>                                                                   \
  __device__ gvec<T, N> operator op(gvec<T, N> a, const gvec<T, N>& b) {                      \
    for (int i = 0; i < N; ++i) a[i] = a[i] op b[i];                                          \
    return a;                                                                                 \
  }                                                                                           \
  template <class T, int N>                                                                   \
  __device__ gvec<T, N> operator op(gvec<T, N> a, T b) {                                      \
    for (int i = 0; i < N; ++i) a[i] = a[i] op b;                                             \
    return a;                                                                                 \
  }                                                                                           \
  template <class T, int N>                                                                   \
  __device__ gvec<T, N> operator op(T a, gvec<T, N> b) {                                      \
    for (int i = 0; i < N; ++i) b[i] = a op b[i];                                             \
    return b;                                                                                 \
  }                                                                                           \
  template <class T, int N, class U>                                                          \
  __device__ gvec<T, N>& operator op##=(gvec<T, N>& a, const U& b) {                          \
    return a = a op b;                                                                        \
  }
PCP_VEC_OP(+)
PCP_VEC_OP(-)
PCP_VEC_OP(*)
PCP_VEC_OP(/)
PCP_VEC_OP(&)
PCP_VEC_OP(|)
PCP_VEC_OP(^)
PCP_VEC_OP(<<)
PCP_VEC_OP(>>)
#undef PCP_VEC_OP

template <class T, int N>
__device__ gvec<T, N> operator-(gvec<T, N> a) {
  for (int i = 0; i < N; ++i) a[i] = -a[i];
  return a;
}

// Applies a scalar function to each component.
template <class R, class T, int N, class F>
__device__ gvec<R, N> pcp_map(const gvec<T, N>& v, F f) {
  gvec<R, N> r;
  for (int i = 0; i < N; ++i) r[i] = f(v[i]);
  return r;
}

// ---- bit casts ----
__device__ inline uint floatBitsToUint(float v) { return __float_as_uint(v); }
__device__ inline int floatBitsToInt(float v) { return __float_as_int(v); }
__device__ inline float uintBitsToFloat(uint v) { return __uint_as_float(v); }
__device__ inline float intBitsToFloat(int v) { return __int_as_float(v); }
template <int N>
__device__ gvec<uint, N> floatBitsToUint(const gvec<float, N>& v) {
  return pcp_map<uint>(v, [](float f) { return __float_as_uint(f); });
}
template <int N>
__device__ gvec<float, N> uintBitsToFloat(const gvec<uint, N>& v) {
  return pcp_map<float>(v, [](uint u) { return __uint_as_float(u); });
}

// ---- math GLSL has and C++ spells otherwise ----
__device__ inline float inversesqrt(float v) { return rsqrtf(v); }
__device__ inline float roundEven(float v) { return rintf(v); }
__device__ inline float fract(float v) { return v - floorf(v); }
__device__ inline float mod(float a, float b) { return a - b * floorf(a / b); }
__device__ inline float mix(float a, float b, float t) { return a * (1.0f - t) + b * t; }
__device__ inline float step(float edge, float v) { return v < edge ? 0.0f : 1.0f; }
__device__ inline float sign(float v) { return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v); }
__device__ inline int sign(int v) { return (v > 0) - (v < 0); }
__device__ inline float clamp(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }
__device__ inline uint clamp(uint v, uint lo, uint hi) { return min(max(v, lo), hi); }
__device__ inline int clamp(int v, int lo, int hi) { return min(max(v, lo), hi); }
__device__ inline float atan(float y, float x) { return atan2f(y, x); }
__device__ inline float radians(float v) { return v * 0.017453292519943295f; }
__device__ inline float frexp(float v, int& e) { return frexpf(v, &e); }

// Componentwise math on float vectors, and dot.
#define PCP_VEC_FN(fn)                                                         \
  template <int N>                                                             \
  __device__ gvec<float, N> fn(const gvec<float, N>& v) {                      \
    return pcp_map<float>(v, [](float f) { return fn(f); });                   \
  }
PCP_VEC_FN(exp)
PCP_VEC_FN(log)
PCP_VEC_FN(abs)
PCP_VEC_FN(sqrt)
PCP_VEC_FN(floor)
PCP_VEC_FN(inversesqrt)
#undef PCP_VEC_FN
template <int N>
__device__ float dot(const gvec<float, N>& a, const gvec<float, N>& b) {
  float s = 0.0f;
  for (int i = 0; i < N; ++i) s += a[i] * b[i];
  return s;
}
template <int N>
__device__ gvec<float, N> max(gvec<float, N> a, const gvec<float, N>& b) {
  for (int i = 0; i < N; ++i) a[i] = fmaxf(a[i], b[i]);
  return a;
}
template <int N>
__device__ gvec<float, N> min(gvec<float, N> a, const gvec<float, N>& b) {
  for (int i = 0; i < N; ++i) a[i] = fminf(a[i], b[i]);
  return a;
}

// ---- float64 and int64 (the wide kernels of metal/wide/) ----
typedef long long int64_t;
typedef unsigned long long uint64_t;
__device__ inline double packDouble2x32(const uvec2& w) { return __hiloint2double(int(w.y), int(w.x)); }
__device__ inline uvec2 unpackDouble2x32(double v) { return uvec2(uint(__double2loint(v)), uint(__double2hiint(v))); }
__device__ inline uint64_t packUint2x32(const uvec2& w) { return (uint64_t(w.y) << 32) | w.x; }
__device__ inline uvec2 unpackUint2x32(uint64_t v) { return uvec2(uint(v), uint(v >> 32)); }
__device__ inline double roundEven(double v) { return rint(v); }
__device__ inline double frexp(double v, int& e) { return frexp(v, &e); }
__device__ inline double mod(double a, double b) { return a - b * floor(a / b); }

// ---- integer functions ----
__device__ inline void umulExtended(uint a, uint b, uint& hi, uint& lo) {
  const unsigned long long p = (unsigned long long)a * b;
  hi = uint(p >> 32);
  lo = uint(p);
}
__device__ inline uint uaddCarry(uint a, uint b, uint& carry) {
  const uint s = a + b;
  carry = s < a ? 1u : 0u;
  return s;
}
__device__ inline uint usubBorrow(uint a, uint b, uint& borrow) {
  borrow = a < b ? 1u : 0u;
  return a - b;
}
__device__ inline int findMSB(uint v) { return v ? 31 - __clz(v) : -1; }
__device__ inline int findLSB(uint v) { return v ? __ffs(v) - 1 : -1; }
__device__ inline int bitCount(uint v) { return __popc(v); }

// ---- atomics on buffer elements (the translator passes their addresses) ----
__device__ inline uint atomicCompSwap(uint* p, uint compare, uint value) { return atomicCAS(p, compare, value); }
__device__ inline int atomicCompSwap(int* p, int compare, int value) { return atomicCAS(p, compare, value); }
__device__ inline uint atomicExchange(uint* p, uint value) { return atomicExch(p, value); }
__device__ inline int atomicExchange(int* p, int value) { return atomicExch(p, value); }

// ---- invocation ids, workgroups of blockDim.x invocations along x ----
#define gl_GlobalInvocationID uvec3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, \
                                    blockIdx.z * blockDim.z + threadIdx.z)
#define gl_LocalInvocationID uvec3(threadIdx.x, threadIdx.y, threadIdx.z)
#define gl_LocalInvocationIndex (threadIdx.x)
#define gl_WorkGroupID uvec3(blockIdx.x, blockIdx.y, blockIdx.z)
#define gl_NumWorkGroups uvec3(gridDim.x, gridDim.y, gridDim.z)
#define gl_WorkGroupSize uvec3(blockDim.x, blockDim.y, blockDim.z)
#define gl_SubgroupSize 32u
#define gl_SubgroupInvocationID (threadIdx.x & 31u)
#define gl_SubgroupID (threadIdx.x >> 5)
#define gl_NumSubgroups (blockDim.x >> 5)

// ---- barriers ----
#define barrier() __syncthreads()
#define memoryBarrierShared() __threadfence_block()
#define memoryBarrierBuffer() __threadfence()
#define memoryBarrier() __threadfence()
#define groupMemoryBarrier() __threadfence_block()

// ---- subgroup operations over a whole warp (every lane active, as where the kernels call them) ----
__device__ inline float subgroupAdd(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline uint subgroupAdd(uint v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline float subgroupMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline float subgroupMin(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline bool subgroupAny(bool b) { return __any_sync(0xffffffffu, b); }
__device__ inline bool subgroupAll(bool b) { return __all_sync(0xffffffffu, b); }
