#version 450
#extension GL_GOOGLE_include_directive : require
// The global norm of clip_grad_norm from the partial sums of squares of every gradient
// (sum_squares.comp), summed in a fixed order by one workgroup: writes the norm and the factor
// min(max_norm / (norm + eps), 1) that every gradient is then multiplied by.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer Parts { float parts[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float out_[]; };  // norm, factor
layout(push_constant) uniform Params { uint n, out_off; float max_norm, eps; } p;

shared float partial[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint i = lid; i < p.n; i += 256u) acc += parts[i];
  partial[lid] = acc;
  barrier();
  for (uint h = 128u; h > 0u; h >>= 1) {
    if (lid < h) partial[lid] += partial[lid + h];
    barrier();
  }
  if (lid == 0u) {
    const float norm = sqrt(partial[0]);
    out_[p.out_off] = norm;
    out_[p.out_off + 1u] = min(p.max_norm / (norm + p.eps), 1.0);
  }
}
