// Plans: the trace that records one (python/pcp/compile.py drives it) and the plan's replay.
#include <pybind11/stl.h>

#include "convert.h"
#include "pcp/plan/trace.h"

namespace pcp::bindings {

void bind_plan(py::module_& m) {
  using py::arg;
  py::class_<plan::Plan, std::shared_ptr<plan::Plan>>(m, "Plan", "A traced computation, replayed by run()")
      .def("run", [](const plan::Plan& p, const std::vector<Tensor>& args) {
             py::gil_scoped_release release;
             return p.run(args);
           }, arg("args"), "Runs the plan on tensors of the traced specs and returns its outputs")
      .def("check", &plan::Plan::check,
           "Infers every node's outputs again (no kernel runs) and compares them with the recorded ones")
      .def_property_readonly("num_nodes", [](const plan::Plan& p) { return p.nodes.size(); })
      .def_property_readonly("traced_nodes", [](const plan::Plan& p) { return p.traced_nodes; },
                             "Nodes as traced, before constant folding and dead-code elimination")
      .def_property_readonly("num_captured", [](const plan::Plan& p) { return p.captured.size(); })
      .def_property_readonly("ops", [](const plan::Plan& p) {
        std::vector<std::string> names;
        for (const plan::Node& n : p.nodes) names.push_back(n.prim->name());
        return names;
      }, "The primitive of every node, in order")
      .def("__str__", [](const plan::Plan& p) { return p.str(); });
  py::class_<plan::Trace>(m, "Trace", "An open trace on this thread (see pcp.compile)")
      .def(py::init<const std::vector<Tensor>&>(), arg("args"))
      .def("finish", &plan::Trace::finish, arg("outputs"), "Ends the trace with the function's outputs: the plan")
      .def("close", [](plan::Trace& t) { t.close(); }, "Closes the trace without a plan (the function raised)");
  m.def("is_tracing", [] { return plan::Trace::active() != nullptr; }, "Whether a trace is open on this thread");
}

}  // namespace pcp::bindings
