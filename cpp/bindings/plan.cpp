// Plans: the trace that records one (python/pcp/compile.py drives it) and the plan's replay.
#include <pybind11/stl.h>

#include "convert.h"
#include "pcp/ops/optim.h"
#include "pcp/plan/memory.h"
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
      .def("memory", [](const plan::Plan& p) {
             const plan::MemoryPlan m = plan::plan_memory(p);
             return py::dict(py::arg("peak_bytes") = m.peak_bytes, py::arg("peak_node") = m.peak_node,
                             py::arg("allocated_bytes") = m.allocated_bytes, py::arg("allocations") = m.allocations);
           }, "Buffer planning by liveness: the most bytes of values the run holds at once (peak_bytes, "
              "reached at node peak_node), against the bytes of every value it makes (allocated_bytes, over "
              "allocations values); views and the caller's tensors are not counted")
      .def_readwrite("command_lists", &plan::Plan::command_lists,
                     "Whether run() may replay as command lists on a Vulkan GPU (set before the first run)")
      .def_property_readonly("replay_mode", &plan::Plan::replay_mode,
                             "How run() replays: as command lists on a Vulkan GPU (recorded by the first run, "
                             "resubmitted after; live nodes such as optimizer steps and dropout run each time), "
                             "or node by node, and why")
      .def_property_readonly("num_captured", [](const plan::Plan& p) { return p.captured.size(); })
      .def_property_readonly("commands", [](const plan::Plan& p) -> py::object {
             const int64_t n = p.last_commands();
             return n < 0 ? py::object(py::none()) : py::object(py::int_(n));
           }, "The GPU commands (kernel dispatches, copies, transfers, library calls) its last run recorded, "
              "a command list's replay counting its commands; None before a run or without GPU values")
      .def_property_readonly("ops", [](const plan::Plan& p) {
        std::vector<std::string> names;
        for (const plan::Node& n : p.nodes) names.push_back(n.prim->name());
        return names;
      }, "The primitive of every node, in order")
      .def("__str__", [](const plan::Plan& p) { return p.str(); });
  // Plan files (python/pcp/_compile.py): a plan as plain data, and back.
  m.def("plan_record", [](const plan::Plan& p) {
    const plan::PlanRecord r = plan::record_of(p);
    py::list values, nodes, captured, grads, scalars;
    for (const TensorSpec& v : r.values) values.append(py::make_tuple(v.shape, dtype_name(v.dtype), v.device.str()));
    for (const plan::NodeRecord& n : r.nodes)
      nodes.append(py::dict(py::arg("op") = n.op, py::arg("attrs") = n.attrs, py::arg("inputs") = n.inputs,
                            py::arg("outputs") = n.outputs, py::arg("scalars") = n.scalars, py::arg("draws") = n.draws));
    for (const auto& [id, t] : r.captured) captured.append(py::make_tuple(id, t));
    for (const auto& [k, id] : r.grads) grads.append(py::make_tuple(k, id));
    for (const HostScalarPtr& h : r.scalars) scalars.append(h);
    return py::dict(py::arg("values") = values, py::arg("args") = r.args, py::arg("arg_strides") = r.arg_strides,
                    py::arg("captured") = captured, py::arg("constants") = r.constants, py::arg("nodes") = nodes,
                    py::arg("outputs") = r.outputs,
                    py::arg("grads") = grads, py::arg("scalars") = scalars, py::arg("draws") = r.draws,
                    py::arg("traced_nodes") = r.traced_nodes);
  }, arg("plan"), "The plan as plain data: what a plan file holds");
  m.def("plan_from_record", [](py::dict d, std::optional<std::string> device) {
    plan::PlanRecord r;
    for (py::handle v : d["values"]) {
      auto t = v.cast<py::tuple>();
      r.values.push_back({t[0].cast<Shape>(), dtype_from_name(t[1].cast<std::string>()),
                          parse_device(t[2].cast<std::string>())});
    }
    r.args = d["args"].cast<std::vector<int>>();
    r.arg_strides = d["arg_strides"].cast<std::vector<Strides>>();
    for (py::handle c : d["captured"]) {
      auto t = c.cast<py::tuple>();
      r.captured.push_back({t[0].cast<int>(), t[1].cast<Tensor>()});
    }
    if (d.contains("constants")) r.constants = d["constants"].cast<std::vector<int>>();  // older files have none
    for (py::handle n : d["nodes"]) {
      auto nd = n.cast<py::dict>();
      r.nodes.push_back({nd["op"].cast<std::string>(), nd["attrs"].cast<Attributes>(), nd["inputs"].cast<std::vector<int>>(),
                         nd["outputs"].cast<std::vector<int>>(), nd["scalars"].cast<std::vector<int>>(),
                         nd["draws"].cast<std::vector<int>>()});
    }
    r.outputs = d["outputs"].cast<std::vector<int>>();
    r.grads = d["grads"].cast<std::vector<std::pair<int, int>>>();
    for (py::handle h : d["scalars"]) r.scalars.push_back(h.cast<HostScalarPtr>());
    r.draws = d["draws"].cast<std::vector<uint64_t>>();
    r.traced_nodes = d["traced_nodes"].cast<int>();
    return plan::plan_from(device ? plan::placed_on(std::move(r), parse_device(*device)) : r);
  }, arg("record"), arg("device") = py::none(),
     "The plan a record (plan_record's dict) describes, placed on `device` when given (plan::placed_on), "
     "checked before it is returned");
  py::class_<plan::Trace>(m, "Trace", "An open trace on this thread (see pcp.compile)")
      .def(py::init<const std::vector<Tensor>&>(), arg("args"))
      .def("finish", &plan::Trace::finish, arg("outputs"), "Ends the trace with the function's outputs: the plan")
      .def("close", [](plan::Trace& t) { t.close(); }, "Closes the trace without a plan (the function raised)");
  m.def("primitive_names", &primitive_names, "The name of every primitive a plan may hold, sorted");
  m.def("primitives", [] {
    py::list out;
    for (const std::string& name : primitive_names()) {
      const PrimitiveRecord& r = *primitive_record(name);
      py::dict d;
      d["name"] = name;
      d["inputs"] = r.inputs.empty() ? py::object(py::none()) : py::object(py::cast(r.inputs));
      d["optional_inputs"] = r.optional_inputs;
      d["checked"] = r.check != nullptr;
      d["gpu"] = r.gpu;
      d["autocast"] = r.autocast == CastPolicy::Low ? "low" : r.autocast == CastPolicy::Float32 ? "float32" : "keep";
      out.append(d);
    }
    return out;
  }, "Every primitive's record, sorted by name: a dict of its name, the input counts it takes (None: "
     "any, which its check decides), the inputs a plan file may leave out, whether its attributes "
     "are checked against its inputs when a plan file is loaded, whether it runs on a GPU (gpu), and "
     "how autocast casts its floating inputs (autocast: 'low', 'float32' or 'keep')");
  m.def("_same_tensor", [](const Tensor& a, const Tensor& b) { return a.is_same(b); }, arg("a"), arg("b"),
        "Whether two handles are one tensor (Python makes a new handle each time one crosses over)");
  m.def("is_tracing", [] { return plan::Trace::active() != nullptr; }, "Whether a trace is open on this thread");
}

}  // namespace pcp::bindings
