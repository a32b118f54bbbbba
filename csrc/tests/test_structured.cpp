// Structured-kernel support: broadcasting, TensorIteratorBase (promotion, devices, the
// elementwise loop), the wrappers' output handling (create_out, check_inplace, resize_out,
// copy_to_out), in-place resizing, host views and backend_key_set.
#include <array>
#include <optional>
#include <vector>

#include "core/broadcast.h"
#include "core/host_ops.h"
#include "core/structured_out.h"
#include "core/tensor_iterator.h"
#include "dispatch/backend_select.h"
#include "dispatch/local_dispatch_key_set.h"
#include "native/sibling_variants.h"
#include "tests/harness.h"

using namespace op;

namespace {

// A structured elementwise operator the way hand-written kernels define one...
struct TestAddMeta : TensorIteratorBase {
  void meta(const TensorBase& a, const TensorBase& b) { build_borrowing_binary_op(maybe_get_output(), a, b, "test_add"); }
};
struct TestAdd : TestAddMeta {
  void impl() {
    OP_DISPATCH_ALL_TYPES(common_dtype(), "test_add",
                          { for_each_element<scalar_t>([](scalar_t x, scalar_t y) -> scalar_t { return x + y; }); });
  }
};

// ...and the three wrappers the generator writes around it.
struct Functional final : TestAdd {
  void set_output_raw_strided(int64_t i, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) override {
    outputs_[i] = impl::create_out(sizes, strides, options);
  }
  const TensorBase& maybe_get_output(int64_t i) override { return outputs_[i]; }
  std::array<TensorBase, 1> outputs_;
};
struct Inplace final : TestAdd {
  explicit Inplace(const TensorBase& self) : self_(&self) {}
  void set_output_raw_strided(int64_t, IntArrayRef sizes, IntArrayRef, TensorOptions options) override {
    impl::check_inplace(*self_, sizes, options);
  }
  const TensorBase& maybe_get_output(int64_t) override { return *self_; }
  const TensorBase* self_;
};
struct Out final : TestAdd {
  explicit Out(const TensorBase& out) : out_(&out) {}
  void set_output_raw_strided(int64_t, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) override {
    impl::resize_out(*out_, sizes, strides, options);
  }
  const TensorBase& maybe_get_output(int64_t) override { return *out_; }
  const TensorBase* out_;
};

TensorBase add(const TensorBase& a, const TensorBase& b) {
  Functional k;
  k.meta(a, b);
  if (!k.output().is_meta()) k.impl();
  return k.outputs_[0];
}
const TensorBase& add_(const TensorBase& self, const TensorBase& b) {
  Inplace k(self);
  k.meta(self, b);
  k.impl();
  return self;
}
const TensorBase& add_out(const TensorBase& a, const TensorBase& b, const TensorBase& out) {
  Out k(out);
  k.meta(a, b);
  k.impl();
  return out;
}

// Comparison and float-unary builders, functional only.
struct Less final : TensorIteratorBase {
  void set_output_raw_strided(int64_t, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) override {
    out_ = impl::create_out(sizes, strides, options);
  }
  const TensorBase& maybe_get_output(int64_t) override { return out_; }
  TensorBase run(const TensorBase& a, const TensorBase& b) {
    build_borrowing_comparison_op(maybe_get_output(0), a, b, "test_lt");
    OP_DISPATCH_ALL_TYPES(common_dtype(), "test_lt",
                          { for_each_element<scalar_t>([](scalar_t x, scalar_t y) { return x < y; }); });
    return out_;
  }
  TensorBase out_;
};
struct Half final : TensorIteratorBase {
  void set_output_raw_strided(int64_t, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) override {
    out_ = impl::create_out(sizes, strides, options);
  }
  const TensorBase& maybe_get_output(int64_t) override { return out_; }
  TensorBase run(const TensorBase& a) {
    build_borrowing_unary_float_op(maybe_get_output(0), a, "test_half");
    OP_DISPATCH_ALL_TYPES(common_dtype(), "test_half",
                          { for_each_element<scalar_t>([](scalar_t x) -> scalar_t { return x / 2; }); });
    return out_;
  }
  TensorBase out_;
};

const Device kMeta{DeviceType::Meta};

}  // namespace

TEST(broadcast_shapes_align_from_the_right) {
  CHECK_EQ(broadcast_shapes({2, 3}, {3}), (std::vector<int64_t>{2, 3}));
  CHECK_EQ(broadcast_shapes({4, 1, 5}, {3, 1}), (std::vector<int64_t>{4, 3, 5}));
  CHECK_EQ(broadcast_shapes({}, {2}), (std::vector<int64_t>{2}));
  CHECK_EQ(broadcast_shapes({0, 1}, {1, 4}), (std::vector<int64_t>{0, 4}));
  CHECK_THROWS(broadcast_shapes({2, 3}, {2, 4}),
               "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
}

TEST(iterator_broadcasts_and_computes) {
  TensorBase a = TensorBase::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  TensorBase b = TensorBase::from_vector<float>({10, 20, 30});
  TensorBase c = add(a, b);
  CHECK(c.sizes() == IntArrayRef({2, 3}));
  CHECK_EQ(c.to_vector<double>(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  TensorBase col = TensorBase::from_vector<int64_t>({100, 200}, {2, 1});
  CHECK_EQ(add(col, TensorBase::from_vector<int64_t>({1, 2, 3})).to_vector<int64_t>(),
           (std::vector<int64_t>{101, 102, 103, 201, 202, 203}));
  // Strided (transposed) inputs read correctly.
  TensorBase at = host::transpose(a, 0, 1);
  CHECK_EQ(add(at, at).to_vector<double>(), (std::vector<double>{2, 8, 4, 10, 6, 12}));
  CHECK_THROWS(add(a, TensorBase::from_vector<float>({1, 2})),
               "test_add: The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
}

TEST(iterator_promotes_dtypes_with_zero_dim_tensors_as_numbers) {
  TensorBase i32 = TensorBase::from_vector<int32_t>({1, 2});
  TensorBase f32 = TensorBase::from_vector<float>({0.5f, 0.25f});
  TensorBase r = add(i32, f32);
  CHECK_EQ(r.dtype(), ScalarType::Float32);
  CHECK_EQ(r.to_vector<double>(), (std::vector<double>{1.5, 2.25}));
  CHECK_EQ(add(i32, TensorBase::scalar_tensor(int64_t{5})).dtype(), ScalarType::Int32);  // same category: tensor wins
  CHECK_EQ(add(f32, TensorBase::scalar_tensor(1.0)).dtype(), ScalarType::Float32);
  TensorBase up = add(i32, TensorBase::scalar_tensor(0.5));  // higher category counts
  CHECK_EQ(up.dtype(), ScalarType::Float64);
  CHECK_EQ(up.to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  TensorBase bools = TensorBase::from_vector<bool>({true, false});
  TensorBase ored = add(bools, bools);
  CHECK_EQ(ored.dtype(), ScalarType::Bool);
  CHECK_EQ(ored.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(iterator_comparison_and_float_ops) {
  TensorBase lt = Less().run(TensorBase::from_vector<int64_t>({1, 5, 3}), TensorBase::from_vector<double>({2.0, 2.0, 3.0}));
  CHECK_EQ(lt.dtype(), ScalarType::Bool);
  CHECK_EQ(lt.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  TensorBase half = Half().run(TensorBase::from_vector<int32_t>({1, 4}));
  CHECK_EQ(half.dtype(), ScalarType::Float32);
  CHECK_EQ(half.to_vector<double>(), (std::vector<double>{0.5, 2.0}));
  CHECK_EQ(Half().run(TensorBase::from_vector<double>({3.0})).dtype(), ScalarType::Float64);
}

TEST(iterator_devices) {
  TensorBase cpu = TensorBase::from_vector<float>({1, 2});
  TensorBase meta = TensorBase::empty({3, 2}, TensorOptions(ScalarType::Float32).with_device(kMeta));
  CHECK_THROWS(add(cpu, meta), "test_add: expected all tensors on the same device, but tensor a is on cpu and tensor b is on meta");
  // A 0-d cpu tensor joins any device, like a number; meta outputs have shape only.
  TensorBase m = add(meta, TensorBase::scalar_tensor(2.0));
  CHECK(m.is_meta());
  CHECK(m.sizes() == IntArrayRef({3, 2}));
  CHECK_EQ(m.dtype(), ScalarType::Float32);
  Functional k;
  k.meta(meta, meta);
  CHECK(k.shape() == IntArrayRef({3, 2}));
  CHECK_EQ(k.device(), kMeta);
  CHECK_THROWS(k.impl(), "meta tensors have no data");
}

TEST(inplace_checks_shape_dtype_and_device) {
  TensorBase self = TensorBase::from_vector<float>({1, 2});
  add_(self, TensorBase::from_vector<double>({0.5, 0.5}));  // float64 result casts into float32
  CHECK_EQ(self.to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  CHECK_THROWS(add_(self, TensorBase::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2})),
               "output with shape [2] doesn't match the broadcast shape [3, 2]");
  TensorBase ints = TensorBase::from_vector<int64_t>({1, 2});
  CHECK_THROWS(add_(ints, TensorBase::from_vector<float>({1, 2})),
               "result type float32 can't be cast to the desired output type int64");
  CHECK_THROWS(impl::check_inplace(self, {2}, TensorOptions(ScalarType::Float32).with_device(kMeta)),
               "the result is on device meta but the tensor written to is on cpu");
  // Output overlapping an input in another layout: computed through a buffer.
  TensorBase sq = TensorBase::from_vector<int64_t>({1, 2, 3, 4}, {2, 2});
  add_(sq, host::transpose(sq, 0, 1));
  CHECK_EQ(sq.to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 5, 8}));
}

TEST(out_is_resized_in_place_and_checked) {
  TensorBase out = TensorBase::empty({0}, ScalarType::Float32);
  TensorBase second_handle = out;
  add_out(TensorBase::from_vector<float>({1, 2, 3, 4}, {2, 2}), TensorBase::from_vector<float>({10, 20}), out);
  CHECK(second_handle.sizes() == IntArrayRef({2, 2}));
  CHECK_EQ(second_handle.to_vector<double>(), (std::vector<double>{11, 22, 13, 24}));
  // out keeps its dtype when the result casts into it without leaving its category.
  CHECK_THROWS(add_out(TensorBase::from_vector<float>({1}), TensorBase::from_vector<float>({1}), TensorBase::empty({1}, ScalarType::Int64)),
               "test_add: result type float32 can't be cast to the desired output type int64");
  TensorBase wide = TensorBase::empty({1}, ScalarType::Float64);
  add_out(TensorBase::from_vector<int32_t>({1}), TensorBase::from_vector<int32_t>({2}), wide);
  CHECK_EQ(wide.dtype(), ScalarType::Float64);
  CHECK_EQ(wide.to_vector<double>(), (std::vector<double>{3}));
  TensorBase meta_out = TensorBase::empty({1}, TensorOptions(ScalarType::Float32).with_device(kMeta));
  CHECK_THROWS(impl::resize_out(meta_out, {1}, {}, TensorOptions(ScalarType::Float32).with_device(Device())),
               "Expected out tensor to have device cpu, but got meta instead");
  // Same sizes: left alone (strides too).
  TensorBase t = host::transpose(TensorBase::zeros({2, 3}), 0, 1);
  impl::resize_out(t, {3, 2}, {}, ScalarType::Float32);
  CHECK(!t.is_contiguous());
}

// The host loop's row kinds: contiguous rows, broadcast rows (a stride-0 input read once per
// row), strided rows, dimensions reordered to follow the output, one element, no elements,
// and the optional row function for contiguous rows.
TEST(iterator_loop_layouts) {
  TensorBase m = TensorBase::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  TensorBase col = TensorBase::from_vector<int64_t>({10, 20}, {2, 1});
  CHECK_EQ(add(m, col).to_vector<int64_t>(), (std::vector<int64_t>{11, 12, 13, 24, 25, 26}));
  CHECK_EQ(add(col, TensorBase::from_vector<int64_t>({1, 2, 3})).to_vector<int64_t>(),
           (std::vector<int64_t>{11, 12, 13, 21, 22, 23}));
  CHECK_EQ(add(m, TensorBase::scalar_tensor(int64_t{100})).to_vector<int64_t>(),
           (std::vector<int64_t>{101, 102, 103, 104, 105, 106}));
  TensorBase every_other = host::slice(TensorBase::from_vector<int64_t>({1, 0, 2, 0, 3, 0}), 0, 0, 6, 2);
  CHECK_EQ(add(every_other, every_other).to_vector<int64_t>(), (std::vector<int64_t>{2, 4, 6}));
  // In place on a transposed tensor: the loop walks the output's memory order.
  TensorBase t = host::transpose(host::clone(m), 0, 1);  // [3, 2], strides [1, 3]
  add_(t, TensorBase::from_vector<int64_t>({100, 200}));
  CHECK_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{101, 204, 102, 205, 103, 206}));
  // Reading a row of the output while writing it: computed through a buffer.
  TensorBase self = host::clone(m);
  add_(self, host::select(self, 0, 0));
  CHECK_EQ(self.to_vector<int64_t>(), (std::vector<int64_t>{2, 4, 6, 5, 7, 9}));
  TensorBase zero_d = add(TensorBase::scalar_tensor(int64_t{2}), TensorBase::scalar_tensor(int64_t{3}));
  CHECK_EQ(zero_d.dim(), 0);
  CHECK_EQ(host::item<int64_t>(zero_d), 5);
  CHECK(add(TensorBase::empty({0, 3}, ScalarType::Float32), TensorBase::from_vector<float>({1, 2, 3})).sizes() ==
        IntArrayRef({0, 3}));

  // A row function sees exactly the contiguous rows.
  struct Doubler final : TensorIteratorBase {
    void set_output_raw_strided(int64_t, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) override {
      out_ = impl::create_out(sizes, strides, options);
    }
    const TensorBase& maybe_get_output(int64_t) override { return out_; }
    TensorBase run(const TensorBase& a, std::vector<int64_t>* row_lengths) {
      build_borrowing_unary_op(maybe_get_output(0), a, "test_double");
      for_each_element<float>([](float x) { return 2 * x; },
                              [row_lengths](float* out, const float* in, int64_t n) {
                                row_lengths->push_back(n);
                                for (int64_t i = 0; i < n; ++i) out[i] = 2 * in[i];
                              });
      return out_;
    }
    TensorBase out_;
  };
  std::vector<int64_t> rows;
  TensorBase f = TensorBase::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_EQ(Doubler().run(f, &rows).to_vector<double>(), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  CHECK_EQ(rows, (std::vector<int64_t>{6}));  // dimensions merged into one row
  rows.clear();
  CHECK_EQ(Doubler().run(host::transpose(f, 0, 1), &rows).to_vector<double>(),
           (std::vector<double>{2, 8, 4, 10, 6, 12}));
  CHECK(rows.empty());  // strided input: the element function only
}

TEST(resize_grows_storage_for_every_view) {
  TensorBase t = TensorBase::from_vector<int32_t>({1, 2, 3});
  TensorBase alias = host::slice(t, 0, 0, 1);  // a view of the same storage
  host::resize_(t, {2, 4});
  CHECK(t.sizes() == IntArrayRef({2, 4}));
  CHECK(t.strides() == IntArrayRef({4, 1}));
  CHECK_EQ(t.numel(), 8);
  CHECK(t.storage().nbytes() >= size_t{32});
  CHECK_EQ(host::item<int64_t>(alias), 1);  // old bytes kept, views see the new memory
  CHECK_EQ(t.get({0, 2}).to<int64_t>(), 3);
  host::resize_(t, {2});  // shrinking keeps the storage
  CHECK_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  TensorBase m = TensorBase::empty({1}, TensorOptions(ScalarType::Float64).with_device(kMeta));
  host::resize_(m, {4, 4});
  CHECK_EQ(m.storage().nbytes(), size_t{128});
  static double data[2] = {1, 2};
  TensorBase ext = TensorBase::from_storage(Storage::from_external(data, sizeof(data), Device(), [](void*) {}), {2}, {1}, 0,
                                    ScalarType::Float64);
  CHECK_THROWS(host::resize_(ext, {3}), "wraps external memory");
  host::resize_(ext, {1});  // fits: fine
  CHECK_THROWS(host::resize_(t, {-1}), "negative size -1");
}

TEST(create_out_copy_to_out_and_clone_for_functional) {
  TensorBase m = impl::create_out({2, 3}, {}, TensorOptions(ScalarType::Int64).with_device(kMeta));
  CHECK(m.is_meta());
  CHECK(m.strides() == IntArrayRef({3, 1}));
  TensorBase s = impl::create_out({2, 3}, {1, 2}, ScalarType::Float32);
  CHECK(s.strides() == IntArrayRef({1, 2}));
  CHECK_EQ(s.device(), Device(DeviceType::CPU));
  TensorBase out = TensorBase::empty({5}, ScalarType::Int64);
  TensorBase& r = impl::copy_to_out(out, TensorBase::from_vector<int64_t>({7, 8}, {1, 2}));
  CHECK(&r == &out);
  CHECK(out.sizes() == IntArrayRef({1, 2}));
  CHECK_EQ(out.to_vector<int64_t>(), (std::vector<int64_t>{7, 8}));
  CHECK_THROWS(impl::copy_to_out(out, TensorBase::from_vector<float>({1})), "Expected out tensor to have dtype float32");
  TensorBase t = host::transpose(TensorBase::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}), 0, 1);
  TensorBase c = impl::clone_for_functional(t);
  CHECK(c.is_contiguous());
  CHECK(!c.is_alias_of(t));
  CHECK(host::equal(c, t));
}

TEST(view_strides_follow_memory_chunks) {
  TensorBase t = TensorBase::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  TensorBase even = host::slice(t, 1, 0, 4, 2);  // [3, 2], strides [4, 2]: every other element
  TensorBase flat = host::view(even, {6});
  CHECK(flat.is_alias_of(t));
  CHECK(flat.strides() == IntArrayRef({2}));
  CHECK_EQ(flat.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));
  TensorBase cols = host::slice(t, 1, 0, 2);  // [3, 2], strides [4, 1]: rows of two, gaps between
  TensorBase split = host::view(host::transpose(t, 0, 1), {2, 2, 3});  // splitting a dim is always fine
  CHECK(split.strides() == IntArrayRef({2, 1, 4}));
  CHECK_EQ(host::view(split, {4, 3}).get({3, 2}).to<int64_t>(), 11);
  CHECK_THROWS(host::view(cols, {6}), "not contiguous");
  CHECK(host::view(host::unsqueeze(cols, 0), {3, 1, 2}).is_alias_of(t));  // size-1 dims fit anywhere
  CHECK(!host::view_strides({3, 2}, {4, 1}, {6}).has_value());
  CHECK(!host::view_strides({3, 2}, {4, 1}, {2, 3}).has_value());
  CHECK_EQ(*host::view_strides({2, 3}, {3, 1}, {3, 1, 2}), (std::vector<int64_t>{2, 2, 1}));
  CHECK(host::view(TensorBase::zeros({0, 3}), {3, 0}).sizes() == IntArrayRef({3, 0}));
  CHECK_EQ(host::view(TensorBase::scalar_tensor(1), {1, 1}).numel(), 1);
}

TEST(backend_key_set_picks_the_device_backend) {
  CHECK_EQ(impl::backend_key_set(std::nullopt), DispatchKeySet(DispatchKey::CPU));
  CHECK_EQ(impl::backend_key_set(Device(DeviceType::CPU)), DispatchKeySet(DispatchKey::CPU));
  CHECK_EQ(impl::backend_key_set(kMeta), DispatchKeySet(DispatchKey::Meta));
  CHECK_EQ(impl::backend_key_set(Device(DeviceType::CUDA, 0)), DispatchKeySet(DispatchKey::CUDA));
  DeviceType xla = register_device_type("xla", DispatchKey::XLA);
  CHECK_EQ(impl::backend_key_set(Device(xla)), DispatchKeySet(DispatchKey::XLA));
  {
    IncludeKeyGuard meta(DispatchKeySet(DispatchKey::Meta).add(DispatchKey::AutogradCPU));
    // Thread-local backend includes count; keys above BackendSelect do not.
    CHECK_EQ(impl::backend_key_set(std::nullopt), DispatchKeySet(DispatchKey::CPU).add(DispatchKey::Meta));
  }
  ExcludeKeyGuard no_cpu(DispatchKey::CPU);
  CHECK(impl::backend_key_set(std::nullopt).empty());
}
