// Tensors, storage, devices, dtypes and type promotion.
#include "core/allocator.h"
#include "core/device.h"
#include "core/host_ops.h"
#include "core/tensor.h"
#include "core/type_promotion.h"
#include "tests/harness.h"

using namespace op;

TEST(promote_types_is_category_then_width) {
  CHECK_EQ(promote_types(ScalarType::Bool, ScalarType::Int32), ScalarType::Int32);
  CHECK_EQ(promote_types(ScalarType::Int32, ScalarType::Int64), ScalarType::Int64);
  CHECK_EQ(promote_types(ScalarType::Int64, ScalarType::Float32), ScalarType::Float32);
  CHECK_EQ(promote_types(ScalarType::Float64, ScalarType::Int32), ScalarType::Float64);
  CHECK_EQ(promote_types(ScalarType::Bool, ScalarType::Bool), ScalarType::Bool);
  for (int a = 0; a < kNumScalarTypes; ++a)
    for (int b = 0; b < kNumScalarTypes; ++b)
      CHECK_EQ(promote_types(ScalarType(a), ScalarType(b)), promote_types(ScalarType(b), ScalarType(a)));
}

TEST(result_type_follows_dimension_priority) {
  TensorBase i32 = TensorBase::zeros({2}, ScalarType::Int32);
  TensorBase f32 = TensorBase::zeros({2}, ScalarType::Float32);
  TensorBase b = TensorBase::zeros({2}, ScalarType::Bool);
  TensorBase zero_dim_f64 = TensorBase::scalar_tensor(1.5, ScalarType::Float64);
  TensorBase zero_dim_i64 = TensorBase::scalar_tensor(int64_t{3});
  CHECK_EQ(result_type({i32, f32}), ScalarType::Float32);
  CHECK_EQ(result_type({i32}, {Scalar(2)}), ScalarType::Int32);      // same category: tensor wins
  CHECK_EQ(result_type({i32}, {Scalar(2.5)}), ScalarType::Float32);  // higher category: default float
  CHECK_EQ(result_type({b}, {Scalar(2)}), ScalarType::Int64);
  CHECK_EQ(result_type({f32, zero_dim_f64}), ScalarType::Float32);  // zero-dim of same category loses
  CHECK_EQ(result_type({i32, zero_dim_f64}), ScalarType::Float64);  // ... of a higher one counts
  CHECK_EQ(result_type({i32, zero_dim_i64}), ScalarType::Int32);
  CHECK_EQ(result_type({zero_dim_i64}, {Scalar(1.0)}), ScalarType::Float32);
  CHECK_THROWS(result_type({}), "at least one");
}

TEST(scalar_type_names) {
  CHECK_EQ(std::string(to_string(ScalarType::Float64)), "float64");
  CHECK_EQ(scalar_type_from_string("long"), ScalarType::Int64);
  CHECK_EQ(scalar_type_from_string("float32"), ScalarType::Float32);
  CHECK_THROWS(scalar_type_from_string("half"), "unsupported dtype 'half'");
}

TEST(scalar_holds_bool_int_double) {
  CHECK(Scalar(true).is_bool());
  CHECK(Scalar(3).is_integral());
  CHECK(Scalar(int64_t{3}).type() == ScalarType::Int64);
  CHECK(Scalar(2.5).type() == ScalarType::Float64);
  CHECK_EQ(Scalar(2.5).to<int64_t>(), 2);
  CHECK_EQ(Scalar(1.0).to_string(), "1.0");
  CHECK_EQ(Scalar(false).to_string(), "False");
  CHECK(Scalar(1) != Scalar(1.0));
}

TEST(devices_parse_and_register) {
  CHECK_EQ(Device("cpu"), Device(DeviceType::CPU));
  CHECK_EQ(Device("cuda:1").index(), 1);
  CHECK_EQ(Device("meta").str(), "meta");
  CHECK_THROWS(Device("tpu"), "unknown device type 'tpu'");
  CHECK_THROWS(Device("cuda:x"), "bad device string");
  DeviceType xla = register_device_type("xla", DispatchKey::XLA);
  CHECK_EQ(register_device_type("xla", DispatchKey::XLA), xla);  // idempotent
  CHECK_THROWS(register_device_type("xla", DispatchKey::Lazy), "already registered");
  CHECK_THROWS(register_device_type("bad", DispatchKey::AutogradCPU), "backend dispatch key");
  CHECK_EQ(Device("xla:0").str(), "xla:0");
  CHECK_EQ(key_set_of(xla), DispatchKeySet(DispatchKey::XLA).add(DispatchKey::AutogradXLA).add(DispatchKey::ADInplaceOrView));
  CHECK_EQ(key_set_of(DeviceType::CPU), DispatchKeySet(DispatchKey::CPU).add(DispatchKey::AutogradCPU).add(DispatchKey::ADInplaceOrView));
  CHECK_EQ(key_set_of(DeviceType::Meta), DispatchKeySet(DispatchKey::Meta));
}

TEST(tensor_basics) {
  TensorBase t = TensorBase::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_EQ(t.dim(), 2);
  CHECK_EQ(t.numel(), 6);
  CHECK(t.sizes() == IntArrayRef({2, 3}));
  CHECK(t.strides() == IntArrayRef({3, 1}));
  CHECK(t.is_contiguous());
  CHECK_EQ(t.dtype(), ScalarType::Int64);
  CHECK_EQ(t.get({1, 2}).to<int64_t>(), 6);
  CHECK_EQ(t.get({-1, -1}).to<int64_t>(), 6);
  CHECK_EQ(t.to_string(), "tensor([[1, 2, 3], [4, 5, 6]])");
  CHECK_EQ(t.key_set(), DispatchKeySet(DispatchKey::CPU).add(DispatchKey::AutogradCPU).add(DispatchKey::ADInplaceOrView));
  CHECK_THROWS(t.get({2, 0}), "out of range");
  CHECK_THROWS(t.data_ptr<float>(), "data_ptr<float32>() called on a tensor of dtype int64");
  CHECK(!TensorBase().defined());
  CHECK(TensorBase().key_set().empty());
  CHECK_THROWS(TensorBase().sizes(), "undefined tensor");
}

TEST(views_share_storage) {
  TensorBase t = TensorBase::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  TensorBase tt = host::transpose(t, 0, 1);
  CHECK(tt.is_alias_of(t));
  CHECK(!tt.is_contiguous());
  CHECK(tt.sizes() == IntArrayRef({3, 2}));
  CHECK_EQ(tt.get({2, 1}).to<double>(), 5.0);
  tt.set({2, 1}, 50);  // writes through the view
  CHECK_EQ(t.get({1, 2}).to<double>(), 50.0);
  TensorBase row = host::select(t, 0, 1);
  CHECK_EQ(row.to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 50}));
  CHECK_EQ(row.storage_offset(), 3);
  TensorBase sl = host::slice(t, 1, 0, 3, 2);
  CHECK_EQ(sl.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 3, 50}));
  TensorBase flat = host::view(t, {-1});
  CHECK_EQ(flat.numel(), 6);
  CHECK(flat.is_alias_of(t));
  CHECK_THROWS(host::view(tt, {6}), "not contiguous");
  CHECK_THROWS(host::view(t, {4, 2}), "invalid for 6 elements");
  CHECK_EQ(t.storage().use_count(), 5);  // t, tt, row, sl and flat share one StorageImpl
  TensorBase c = host::contiguous(tt);
  CHECK(!c.is_alias_of(t));
  CHECK(c.is_contiguous());
  CHECK_EQ(c.to_vector<int64_t>(), tt.to_vector<int64_t>());
  CHECK(host::equal(host::clone(tt), tt));
  TensorBase same = host::contiguous(t);
  CHECK(same.is_alias_of(t));  // already contiguous: no copy
  TensorBase e = host::expand(TensorBase::from_vector<int32_t>({7, 8}, {2, 1}), {2, 3});
  CHECK_EQ(e.stride(1), 0);
  CHECK_EQ(e.to_vector<int32_t>(), (std::vector<int32_t>{7, 7, 7, 8, 8, 8}));
  TensorBase p = host::permute(TensorBase::zeros({2, 3, 4}), {2, 0, 1});
  CHECK(p.sizes() == IntArrayRef({4, 2, 3}));
  CHECK(host::unsqueeze(p, 0).sizes() == IntArrayRef({1, 4, 2, 3}));
  CHECK_THROWS(host::as_strided(t, {3, 3}, {3, 1}), "need 36 bytes but the storage has 24");
}

TEST(storage_lives_while_a_view_does) {
  TensorBase view;
  long count = 0;
  {
    TensorBase base = TensorBase::full({4}, 7, ScalarType::Int32);
    view = host::slice(base, 0, 2, 4);
    count = base.storage().use_count();
  }
  CHECK_EQ(count, 2);
  CHECK_EQ(view.storage().use_count(), 1);
  CHECK_EQ(view.to_vector<int32_t>(), (std::vector<int32_t>{7, 7}));
}

TEST(copy_and_conversion) {
  TensorBase f = TensorBase::from_vector<double>({1.5, -2.5, 3.0});
  TensorBase i = host::to(f, ScalarType::Int32);
  CHECK_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3}));
  TensorBase big = TensorBase::from_vector<int64_t>({(int64_t{1} << 62) + 1});
  CHECK_EQ(host::item<int64_t>(host::clone(big)), (int64_t{1} << 62) + 1);  // no trip through double
  TensorBase b = host::to(TensorBase::from_vector<double>({0.0, 2.0}), ScalarType::Bool);
  CHECK_EQ(b.to_string(), "tensor([False, True])");
  TensorBase x = TensorBase::from_vector<float>({1, 2, 3, 4}, {2, 2});
  host::copy_(x, host::transpose(x, 0, 1));  // overlapping source
  CHECK_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 4}));
  CHECK_EQ(TensorBase::scalar_tensor(2.5).to_string(), "tensor(2.5, dtype=float64)");
  CHECK_EQ(TensorBase::full({2}, 1, ScalarType::Float32).to_string(), "tensor([1., 1.])");
}

TEST(meta_tensors_have_shape_but_no_data) {
  TensorBase m = TensorBase::empty({2, 3}, TensorOptions(ScalarType::Float64).with_device(Device(DeviceType::Meta)));
  CHECK(m.is_meta());
  CHECK_EQ(m.numel(), 6);
  CHECK_EQ(m.storage().nbytes(), size_t{48});
  CHECK(!m.storage().has_data());
  CHECK_EQ(m.key_set(), DispatchKeySet(DispatchKey::Meta));
  CHECK(host::transpose(m, 0, 1).sizes() == IntArrayRef({3, 2}));  // views work
  CHECK_THROWS(m.get({0, 0}), "meta tensors have no data");
  CHECK_THROWS(m.data_ptr(), "meta tensors have no data");
  CHECK_EQ(m.to_string(), "tensor(..., size=(2, 3), device='meta', dtype=float64)");
  TensorBase c = host::clone(m);
  CHECK(c.is_meta());
}

TEST(cuda_without_allocator_is_a_clear_error) {
  // A CUDA build installs an allocator when the library loads; take it away for this test.
  Allocator* previous = set_allocator(DeviceType::CUDA, nullptr);
  CHECK_THROWS(TensorBase::empty({2}, DeviceType::CUDA), "no allocator for device 'cuda'");
  // A test (or a CUDA build) can install one; host memory stands in here.
  set_allocator(DeviceType::CUDA, cpu_allocator());
  TensorBase t = TensorBase::empty({2}, DeviceType::CUDA);
  set_allocator(DeviceType::CUDA, previous);
  CHECK_EQ(t.key_set(), DispatchKeySet(DispatchKey::CUDA).add(DispatchKey::AutogradCUDA).add(DispatchKey::ADInplaceOrView));
  CHECK_THROWS(host::item(t), "2 elements");
  CHECK_THROWS(host::fill_(t, 1), "CUDA memory is not readable");
}

TEST(external_storage_runs_its_release) {
  static bool released = false;
  static double data[3] = {1, 2, 3};
  {
    Storage s = Storage::from_external(data, sizeof(data), Device(DeviceType::CPU), [](void*) { released = true; });
    TensorBase t = TensorBase::from_storage(s, {3}, {1}, 0, ScalarType::Float64);
    CHECK_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3}));
  }
  CHECK(released);
}
