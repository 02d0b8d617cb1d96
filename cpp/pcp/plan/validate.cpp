// What a plan file's nodes must satisfy before any of them runs (plan.h: plan_from). A traced
// plan holds them by construction (its nodes came from validated op calls); a file may hold
// anything, so each node's attributes are checked against its inputs' recorded specs by its
// primitive's record (ops/primitive.h: PrimitiveRecord::check, beside each primitive), and
// Plan::check() then proves every recorded spec is the one its node infers.
#include "pcp/plan/plan.h"

namespace pcp::plan {

void check_node_record(const NodeRecord& n, const std::vector<TensorSpec>& in) {
  if (const PrimitiveRecord* r = primitive_record(n.op); r && r->check) r->check(NodeCheck{n.op, n.attrs, in});
}

}  // namespace pcp::plan
