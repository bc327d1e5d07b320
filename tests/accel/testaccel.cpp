// A minimal non-CUDA accelerator for tests: the PrivateUse1 dispatch key, renamed "testaccel" by
// the Python loader. Memory is ordinary host memory; every operator without a kernel here runs
// through the CPU fallback. It counts what a test needs to prove that tensors lived on it.
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace testaccel {

constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

std::atomic<int64_t> allocations{0};
std::atomic<int64_t> fallback_ops{0};
std::atomic<int64_t> copies_in{0};
std::atomic<int64_t> copies_out{0};
std::atomic<int64_t> synchronizations{0};
std::atomic<int64_t> pinned_allocations{0};
thread_local c10::DeviceIndex current = 0;

void* host_alloc(size_t nbytes) {
  void* data = nullptr;
  TORCH_CHECK(posix_memalign(&data, 64, nbytes) == 0, "testaccel: out of memory (", nbytes, " bytes)");
  return data;
}
void host_free(void* ptr) { std::free(ptr); }

c10::DeviceIndex device_count() {
  static const c10::DeviceIndex count = [] {
    const char* env = std::getenv("TESTACCEL_DEVICE_COUNT");
    return static_cast<c10::DeviceIndex>(env ? std::atoi(env) : 2);
  }();
  return count;
}

void check_index(c10::DeviceIndex index) {
  TORCH_CHECK(index >= 0 && index < device_count(), "testaccel: invalid device index ", static_cast<int>(index),
              " (", static_cast<int>(device_count()), " devices)");
}

void set_device(c10::DeviceIndex index) {
  if (index < 0) return;
  check_index(index);
  current = index;
}

// Device memory: host memory, tagged with the device it was allocated on.
struct DeviceAllocator final : c10::Allocator {
  static void release(void* ptr) { host_free(ptr); }
  c10::DataPtr allocate(size_t nbytes) override {
    ++allocations;
    void* data = nbytes ? host_alloc(nbytes) : nullptr;
    return {data, data, &release, c10::Device(kType, current)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

// Page-locked host memory stands for ordinary host memory whose pointers are remembered.
struct PinnedAllocator final : c10::Allocator {
  static std::mutex& lock() { static std::mutex m; return m; }
  static std::unordered_set<const void*>& pinned() { static std::unordered_set<const void*> s; return s; }
  static void release(void* ptr) {
    { std::lock_guard<std::mutex> guard(lock()); pinned().erase(ptr); }
    host_free(ptr);
  }
  c10::DataPtr allocate(size_t nbytes) override {
    ++pinned_allocations;
    void* data = nbytes ? host_alloc(nbytes) : nullptr;
    if (data) { std::lock_guard<std::mutex> guard(lock()); pinned().insert(data); }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
  static bool is_pinned(const void* ptr) {
    std::lock_guard<std::mutex> guard(lock());
    return pinned().count(ptr) > 0;
  }
};

DeviceAllocator device_allocator;
PinnedAllocator pinned_allocator;
REGISTER_ALLOCATOR(kType, &device_allocator);

// One stream per device, always idle: work runs synchronously on the host.
struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  GuardImpl() = default;
  explicit GuardImpl(c10::DeviceType t) { TORCH_CHECK(t == kType); }
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = getDevice();
    if (d.index() != current) set_device(d.index());
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kType, current); }
  void setDevice(c10::Device d) const override { set_device(d.index()); }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count()) current = d.index();
  }
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return getStream(d); }
  c10::Stream getNewStream(c10::Device d, int priority = 0) const override { return getStream(d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool high = false) const override { return getStream(d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return getStream(s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex index,
              const c10::EventFlag flag) const override {
    static int marker = 0;
    *event = &marker;
  }
  void block(void* event, const c10::Stream& stream) const override {}
  bool queryEvent(void* event) const override { return true; }
  void destroyEvent(void* event, const c10::DeviceIndex index) const noexcept override {}
  bool queryStream(const c10::Stream& stream) const override { return true; }
  void synchronizeStream(const c10::Stream& stream) const override { ++synchronizations; }
  void synchronizeEvent(void* event) const override {}
  void synchronizeDevice(const c10::DeviceIndex index) const override { ++synchronizations; }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex index) const override { set_device(index); }
  c10::DeviceIndex getCurrentDevice() const override { return current; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    auto old = current;
    set_device(index);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override { return exchangeDevice(index); }
  at::Allocator* getPinnedMemoryAllocator() const override { return &pinned_allocator; }
  bool isPinnedPtr(const void* data) const override { return PinnedAllocator::is_pinned(data); }
  at::Device getDeviceFromPtr(void*) const override { return at::Device(kType, current); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override {
    // Random numbers come from the CPU generator (random operators run through the fallback).
    return at::detail::getDefaultCPUGenerator();
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), newsize);
  }
};

// Views of device memory as CPU tensors, for the kernels below.
at::Tensor as_cpu(const at::Tensor& t) {
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(size, &device_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(size, stride, &device_allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> offset) {
  return at::cpu::as_strided_symint(self, size, stride, std::move(offset));
}

const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), memory_format);
}

at::Tensor reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  if (self.is_cpu()) {
    ++copies_in;
    as_cpu(dst).copy_(self);
  } else if (dst.is_cpu()) {
    ++copies_out;
    const_cast<at::Tensor&>(dst).copy_(as_cpu(self));
  } else {
    as_cpu(dst).copy_(as_cpu(self));
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  at::native::resize_(dst, self.sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  ++copies_out;
  return at::native::_local_scalar_dense_cpu(as_cpu(self));
}

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& source) { return at::native::set_tensor_(self, source); }
at::Tensor& set_storage(at::Tensor& self, at::Storage source) { return at::native::set_(self, source); }
at::Tensor& set_storage_offset(at::Tensor& self, at::Storage storage, int64_t offset, c10::IntArrayRef size,
                               c10::IntArrayRef stride) {
  return at::cpu::set_(self, storage, offset, size, stride);
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  as_cpu(self).fill_(value);
  return self;
}

// Convolutions reach a backend through the *_overrideable operators, which have no CPU kernel for
// the fallback to call: run the CPU convolution on copies instead.
std::optional<at::Tensor> host(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? std::optional<at::Tensor>(t->cpu()) : std::nullopt;
}

at::Tensor device_like(const at::Tensor& result, const at::Tensor& like) {
  return result.defined() ? result.to(like.device()) : result;
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                       bool transposed, c10::SymIntArrayRef output_padding, c10::SymInt groups) {
  ++fallback_ops;
  auto out = at::convolution(input.cpu(), weight.cpu(), host(bias), C10_AS_INTARRAYREF_SLOW(stride),
                             C10_AS_INTARRAYREF_SLOW(padding), C10_AS_INTARRAYREF_SLOW(dilation), transposed,
                             C10_AS_INTARRAYREF_SLOW(output_padding), groups.expect_int());
  return device_like(out, input);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::SymIntArrayRef stride,
    c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation, bool transposed, c10::SymIntArrayRef output_padding,
    c10::SymInt groups, std::array<bool, 3> output_mask) {
  ++fallback_ops;
  const int64_t g = groups.expect_int();
  const int64_t bias_size = transposed ? weight.size(1) * g : weight.size(0);
  auto grads = at::convolution_backward(grad_output.cpu(), input.cpu(), weight.cpu(), at::IntArrayRef{bias_size},
                                        C10_AS_INTARRAYREF_SLOW(stride), C10_AS_INTARRAYREF_SLOW(padding),
                                        C10_AS_INTARRAYREF_SLOW(dilation), transposed,
                                        C10_AS_INTARRAYREF_SLOW(output_padding), g, output_mask);
  return {device_like(std::get<0>(grads), input), device_like(std::get<1>(grads), input),
          device_like(std::get<2>(grads), input)};
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  ++fallback_ops;
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", as_strided);
  m.impl("resize_", resize_);
  m.impl("_reshape_alias", reshape_alias);
  m.impl("view", view);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("set_.source_Tensor", set_tensor);
  m.impl("set_.source_Storage", set_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage_offset);
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Autocast: matrix products run in the lower precision, everything else as written.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  KERNEL_PRIVATEUSEONE(mm, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(matmul, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(addmm, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(linear, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(mse_loss, fp32)
}

struct Registration {
  Registration() { at::RegisterPrivateUse1HooksInterface(new Hooks()); }
};
const Registration registration;

}  // namespace testaccel

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  using namespace testaccel;
  m.def("device_count", [] { return static_cast<int>(device_count()); });
  m.def("current_device", [] { return static_cast<int>(current); });
  m.def("set_device", [](int index) { set_device(static_cast<c10::DeviceIndex>(index)); });
  m.def("counters", [] {
    return std::map<std::string, int64_t>{
        {"allocations", allocations.load()},     {"fallback_ops", fallback_ops.load()},
        {"copies_in", copies_in.load()},         {"copies_out", copies_out.load()},
        {"synchronizations", synchronizations.load()}, {"pinned_allocations", pinned_allocations.load()}};
  });
}
