// Whether ops record the graph (thread-local, like torch.no_grad / torch.enable_grad).
#pragma once

namespace pcp {

bool grad_enabled();
void set_grad_enabled(bool on);

// RAII guard: sets grad mode for a scope and restores the previous value.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

struct NoGradGuard : GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace pcp
