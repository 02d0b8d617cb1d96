// Flash-style attention for one (batch, head): S = scale q k^T is computed in BR x BC blocks
// with the GEMM micro-kernel, softmax runs online over key blocks (a running max and sum per
// query row), and no T x T matrix is ever stored; the forward pass keeps only the log-sum-exp
// of each row. Under a causal mask, blocks above the diagonal are skipped. The backward pass
// recomputes the probabilities from the log-sum-exp (FlashAttention-2, Dao 2023).
#include <algorithm>
#include <vector>

#include "pcp/backend/cpu/kernels/common.h"

namespace pcp::cpu::PCP_ISA {

const KernelTable& kernel_table();

namespace {

// Per-thread scratch that only grows.
float* scratch(std::vector<float>& buf, size_t n) {
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}
thread_local std::vector<float> t_kt, t_vt, t_k, t_v, t_blk, t_dp, t_acc, t_qi, t_gi, t_dkv;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Keys row i may see within the key block starting at j0 of width nc (causal: keys <= i).
int64_t visible(int64_t i, int64_t j0, int64_t nc, bool causal) {
  if (!causal) return nc;
  return std::max<int64_t>(0, std::min(nc, i - j0 + 1));
}

// Rows are processed in whole chunks of W lanes (a fixed trip count: one vector register wide
// or a few), masked past `lim`, with per-lane accumulators: short causal rows would otherwise
// spend their time in scalar remainder loops. Row buffers are BC wide, a multiple of W.
constexpr int64_t W = 16;

float masked_max(const float* s, int64_t lim, float scale, float init) {
  float acc[W];
  for (int64_t j = 0; j < W; ++j) acc[j] = init;
  for (int64_t j0 = 0; j0 < lim; j0 += W)
    for (int64_t j = 0; j < W; ++j) {
      const float x = j0 + j < lim ? s[j0 + j] * scale : -INFINITY;
      acc[j] = x > acc[j] ? x : acc[j];
    }
#pragma GCC unroll 4
  for (int64_t w = W / 2; w > 0; w /= 2)  // a tree, not a chain of W dependent steps
#pragma GCC unroll 8
    for (int64_t j = 0; j < w; ++j) acc[j] = acc[j + w] > acc[j] ? acc[j + w] : acc[j];
  return acc[0];
}

// s[0, lim) = exp(scale * s - shift), s[lim, n) = 0; returns the sum of the kept values.
float exp_row(float* s, int64_t lim, int64_t n, float scale, float shift) {
  float acc[W] = {};
  for (int64_t j0 = 0; j0 < n; j0 += W)
    for (int64_t j = 0; j < W; ++j) {
      const float e = j0 + j < lim ? exp_nonpos_f(s[j0 + j] * scale - shift) : 0.0f;
      s[j0 + j] = e;
      acc[j] += e;
    }
#pragma GCC unroll 4
  for (int64_t w = W / 2; w > 0; w /= 2)
#pragma GCC unroll 8
    for (int64_t j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}

}  // namespace

static void attention_forward(int64_t T, int64_t D, float scale, bool causal, AttnView q, AttnView k, AttnView v,
                              float* o, int64_t o_rs, float* lse) {
  const KernelTable& kt = kernel_table();
  const int64_t MR = kt.gemm_mr, NR = kt.gemm_nr, BR = 4 * MR, BC = 4 * NR;
  const int64_t Dp = round_up(D, NR), Tp = round_up(T, NR);
  // k^T (D x T) and v (T x D) packed once into NR-column panels the micro-kernel streams.
  float* ktp = scratch(t_kt, size_t(D * Tp));
  float* vp = scratch(t_v, size_t(T * Dp));
  kt.gemm_pack_b(k.p, k.cs, k.rs, D, T, ktp);
  kt.gemm_pack_b(v.p, v.rs, v.cs, T, D, vp);
  float* s = scratch(t_blk, size_t(BR * BC));
  float* acc = scratch(t_acc, size_t(BR * Dp + 2 * BR));
  float *m = acc + BR * Dp, *l = m + BR;
  for (int64_t i0 = 0; i0 < T; i0 += BR) {
    const int64_t br = std::min(BR, T - i0);
    const int64_t kend = causal ? std::min(T, i0 + br) : T;
    std::fill(acc, acc + br * Dp, 0.0f);
    std::fill(m, m + br, -INFINITY);
    std::fill(l, l + br, 0.0f);
    for (int64_t j0 = 0; j0 < kend; j0 += BC) {
      const int64_t nc = std::min(BC, kend - j0);
      for (int64_t r0 = 0; r0 < br; r0 += MR) {
        const int64_t mr = std::min(MR, br - r0);
        const int64_t kc = causal ? std::min(nc, i0 + r0 + mr - j0) : nc;  // keys these rows may see
        if (kc <= 0) continue;  // these rows see none of the block's keys
        // Whole panels (packed k^T is zero-padded, the row buffers are BC wide): the columns past
        // kc are masked below, and the micro-kernel keeps its full-tile stores.
        for (int64_t c = 0; c < kc; c += NR)
          kt.gemm_micro(D, q.p + (i0 + r0) * q.rs, q.rs, q.cs, ktp + (j0 + c) * D, s + r0 * BC + c, BC, mr, NR,
                        false);
        for (int64_t r = r0; r < r0 + mr; ++r) {
          float* sr = s + r * BC;
          const int64_t lim = visible(i0 + r, j0, kc, causal);
          if (lim == 0) {  // row r sees none of these keys: its P row is zero
            std::fill(sr, sr + kc, 0.0f);
            continue;
          }
          const float mx = masked_max(sr, lim, scale, m[r]);
          const float alpha = exp_nonpos_f(m[r] - mx);  // 0 on the first block (m = -inf)
          l[r] = l[r] * alpha + exp_row(sr, lim, kc, scale, mx);
          m[r] = mx;
          if (alpha != 1.0f)
            for (int64_t d = 0; d < D; ++d) acc[r * Dp + d] *= alpha;
        }
        for (int64_t c = 0; c < D; c += NR)
          kt.gemm_micro(kc, s + r0 * BC, BC, 1, vp + c * T + j0 * NR, acc + r0 * Dp + c, Dp, mr,
                        std::min(NR, D - c), true);
      }
    }
    for (int64_t r = 0; r < br; ++r) {
      const float inv = 1.0f / l[r];
      float* orow = o + (i0 + r) * o_rs;
      for (int64_t d = 0; d < D; ++d) orow[d] = acc[r * Dp + d] * inv;
      lse[i0 + r] = m[r] + log_f(l[r]);
    }
  }
}

static void attention_backward(int64_t T, int64_t D, float scale, bool causal, AttnView q, AttnView k, AttnView v,
                               AttnView o, AttnView g, const float* lse, float* dq, float* dk, float* dv,
                               int64_t d_rs) {
  const KernelTable& kt = kernel_table();
  const int64_t MR = kt.gemm_mr, NR = kt.gemm_nr, BR = 4 * MR, BC = 4 * NR;
  const int64_t Dp = round_up(D, NR), Tp = round_up(T, NR);
  // Panels: k^T and v^T (D x T) for the score products, k (T x D) for dq.
  float* ktp = scratch(t_kt, size_t(D * Tp));
  float* vtp = scratch(t_vt, size_t(D * Tp));
  float* kp = scratch(t_k, size_t(T * Dp));
  kt.gemm_pack_b(k.p, k.cs, k.rs, D, T, ktp);
  kt.gemm_pack_b(v.p, v.cs, v.rs, D, T, vtp);
  kt.gemm_pack_b(k.p, k.rs, k.cs, T, D, kp);
  float* p = scratch(t_blk, size_t(BR * BC));
  float* dp = scratch(t_dp, size_t(BR * BC));
  float* qi = scratch(t_qi, size_t(BR * Dp));
  float* gi = scratch(t_gi, size_t(BR * Dp));
  float* dqa = scratch(t_acc, size_t(BR * Dp + BR));
  float* delta = dqa + BR * Dp;
  // dk and dv accumulate over query blocks: (T x Dp) each.
  float* dka = scratch(t_dkv, size_t(2 * T * Dp));
  float* dva = dka + T * Dp;
  std::fill(dka, dka + 2 * T * Dp, 0.0f);
  for (int64_t i0 = 0; i0 < T; i0 += BR) {
    const int64_t br = std::min(BR, T - i0);
    const int64_t kend = causal ? std::min(T, i0 + br) : T;
    // This block's q and dO rows as B panels (br x D), for dk = dS^T q and dv = P^T dO.
    kt.gemm_pack_b(q.p + i0 * q.rs, q.rs, q.cs, br, D, qi);
    kt.gemm_pack_b(g.p + i0 * g.rs, g.rs, g.cs, br, D, gi);
    for (int64_t r = 0; r < br; ++r) {  // delta_i = dO_i . O_i
      const float *gr = g.p + (i0 + r) * g.rs, *orow = o.p + (i0 + r) * o.rs;
      float sum = 0.0f;
      for (int64_t d = 0; d < D; ++d) sum += gr[d * g.cs] * orow[d * o.cs];
      delta[r] = sum;
    }
    std::fill(dqa, dqa + br * Dp, 0.0f);
    for (int64_t j0 = 0; j0 < kend; j0 += BC) {
      const int64_t nc = std::min(BC, kend - j0);
      for (int64_t r0 = 0; r0 < br; r0 += MR) {
        const int64_t mr = std::min(MR, br - r0);
        const int64_t kc = causal ? std::min(nc, i0 + r0 + mr - j0) : nc;
        if (kc <= 0) {  // rows that see none of these keys contribute nothing
          for (int64_t r = r0; r < r0 + mr; ++r) {
            std::fill(p + r * BC, p + r * BC + nc, 0.0f);
            std::fill(dp + r * BC, dp + r * BC + nc, 0.0f);
          }
          continue;
        }
        for (int64_t c = 0; c < kc; c += NR) {  // whole panels, as in the forward pass
          kt.gemm_micro(D, q.p + (i0 + r0) * q.rs, q.rs, q.cs, ktp + (j0 + c) * D, p + r0 * BC + c, BC, mr, NR, false);
          kt.gemm_micro(D, g.p + (i0 + r0) * g.rs, g.rs, g.cs, vtp + (j0 + c) * D, dp + r0 * BC + c, BC, mr, NR,
                        false);
        }
        for (int64_t r = r0; r < r0 + mr; ++r) {
          float *pr = p + r * BC, *dpr = dp + r * BC;
          const int64_t lim = visible(i0 + r, j0, kc, causal);
          exp_row(pr, lim, nc, scale, lse[i0 + r]);
          const float dl = delta[r];
          // dS = P (dP - delta) scale, zero past the visible keys (dP is not computed there).
          for (int64_t jw = 0; jw < nc; jw += W)
            for (int64_t j = jw; j < jw + W; ++j) dpr[j] = j < lim ? pr[j] * (dpr[j] - dl) * scale : 0.0f;
        }
        for (int64_t c = 0; c < D; c += NR)
          kt.gemm_micro(kc, dp + r0 * BC, BC, 1, kp + c * T + j0 * NR, dqa + r0 * Dp + c, Dp, mr,
                        std::min(NR, D - c), true);
      }
      // dv[j] += P^T dO_i and dk[j] += dS^T q_i over this block's key rows.
      for (int64_t jr = 0; jr < nc; jr += MR) {
        const int64_t mr = std::min(MR, nc - jr);
        // Causal: query rows before these keys see none of them (P and dS are zero there), so
        // the products start at the first row that does.
        const int64_t r1 = causal ? std::min(br, std::max<int64_t>(0, j0 + jr - i0)) : 0;
        if (r1 == br) continue;
        for (int64_t c = 0; c < D; c += NR) {
          const int64_t nr = std::min(NR, D - c);
          kt.gemm_micro(br - r1, p + r1 * BC + jr, 1, BC, gi + c * br + r1 * NR, dva + (j0 + jr) * Dp + c, Dp, mr, nr,
                        true);
          kt.gemm_micro(br - r1, dp + r1 * BC + jr, 1, BC, qi + c * br + r1 * NR, dka + (j0 + jr) * Dp + c, Dp, mr,
                        nr, true);
        }
      }
    }
    for (int64_t r = 0; r < br; ++r) std::copy(dqa + r * Dp, dqa + r * Dp + D, dq + (i0 + r) * d_rs);
  }
  for (int64_t j = 0; j < T; ++j) {
    std::copy(dka + j * Dp, dka + j * Dp + D, dk + j * d_rs);
    std::copy(dva + j * Dp, dva + j * Dp + D, dv + j * d_rs);
  }
}

void register_attention(KernelTable& t) {
  t.attention_forward = attention_forward;
  t.attention_backward = attention_backward;
}

}  // namespace pcp::cpu::PCP_ISA
