// This ISA's kernel table.
#include "pcp/backend/cpu/kernels/common.h"

#define PCP_STR2(x) #x
#define PCP_STR(x) PCP_STR2(x)

namespace pcp::cpu::PCP_ISA {

void register_elementwise(KernelTable& t);
void register_reduce(KernelTable& t);
void register_nn(KernelTable& t);
void register_gemm(KernelTable& t);
void register_optim(KernelTable& t);
void register_attention(KernelTable& t);

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t{};
    t.isa = PCP_STR(PCP_ISA);
    register_elementwise(t);
    register_reduce(t);
    register_nn(t);
    register_gemm(t);
    register_optim(t);
    register_attention(t);
    return t;
  }();
  return table;
}

}  // namespace pcp::cpu::PCP_ISA
