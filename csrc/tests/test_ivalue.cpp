// IValue boxing: every argument type round-trips; the wrong accessor is a clear error.
#include "core/ivalue.h"
#include "tests/harness.h"

using namespace op;

TEST(ivalue_boxes_every_argument_type) {
  TensorBase t = TensorBase::zeros({2});
  CHECK(IValue().is_none());
  CHECK(IValue(std::nullopt).is_none());
  CHECK(IValue(t).is_tensor());
  CHECK(IValue(std::optional<TensorBase>()).is_none());
  CHECK(IValue(std::optional<TensorBase>(t)).to_optional_tensor()->is_alias_of(t));
  CHECK_EQ(IValue(std::vector<TensorBase>{t, t}).to_tensor_list().size(), size_t{2});
  CHECK_EQ(IValue(std::vector<std::optional<TensorBase>>{t, std::nullopt}).to_optional_tensor_list().size(), size_t{2});
  CHECK_EQ(IValue(3).to_int(), 3);
  CHECK_EQ(IValue(int64_t{1} << 40).to_int(), int64_t{1} << 40);
  CHECK_EQ(IValue(2.5).to_double(), 2.5);
  CHECK_EQ(IValue(3).to_double(), 3.0);  // ints widen to float
  CHECK_EQ(IValue(true).to_bool(), true);
  CHECK_EQ(IValue("mean").to_str(), "mean");
  CHECK(IValue(Scalar(1.5)).to_scalar() == Scalar(1.5));
  CHECK(IValue(4).to_scalar() == Scalar(4));
  CHECK(IValue(false).to_scalar() == Scalar(false));
  CHECK_EQ(IValue(std::vector<int64_t>{1, 2}).to_int_list(), (std::vector<int64_t>{1, 2}));
  CHECK_EQ(IValue(std::vector<double>{0.5}).to_double_list(), (std::vector<double>{0.5}));
  CHECK_EQ(IValue(std::vector<bool>{true, false}).to_bool_list(), (std::vector<bool>{true, false}));
  CHECK_EQ(IValue(ScalarType::Float64).to_scalar_type(), ScalarType::Float64);
  CHECK_EQ(IValue(Device(DeviceType::Meta)).to_device(), Device(DeviceType::Meta));
}

TEST(ivalue_wrong_accessor_throws_clear_error) {
  CHECK_THROWS(IValue(3).to_tensor(), "expected a value of type Tensor but got int (3)");
  CHECK_THROWS(IValue().to_int(), "expected a value of type int but got None");
  CHECK_THROWS(IValue(1.5).to_int(), "but got float (1.5)");
  CHECK_THROWS(IValue(true).to_int(), "but got bool (True)");  // bools are not ints
  CHECK_THROWS(IValue("x").to_scalar(), "expected a value of type Scalar");
  CHECK_THROWS(IValue(3).to_optional_tensor(), "Tensor? but got int");
  CHECK_THROWS(IValue(std::vector<int64_t>{1}).to_tensor_list(), "Tensor[] but got int[] ([1])");
  CHECK_THROWS(IValue(TensorBase::zeros({2, 3})).to_str(), "got Tensor (Tensor(float32[2, 3] on cpu))");
}

TEST(ivalue_repr_and_equality) {
  CHECK_EQ(IValue(std::vector<double>{1.0, 0.5}).repr(), "[1.0, 0.5]");
  CHECK_EQ(IValue("a").repr(), "'a'");
  CHECK_EQ(IValue(ScalarType::Int32).repr(), "int32");
  TensorBase t = TensorBase::zeros({1});
  CHECK(IValue(t) == IValue(t));
  CHECK(IValue(t) != IValue(TensorBase::zeros({1})));  // tensors compare by identity
  CHECK(IValue(1) != IValue(1.0));
  CHECK(IValue(std::vector<int64_t>{1}) == IValue(std::vector<int64_t>{1}));
  CHECK(IValue() == IValue(std::nullopt));
}

TEST(ivalue_boxes_pytorchs_other_types) {
  const std::vector<Scalar> scalars{Scalar(1), Scalar(2.5), Scalar(true)};
  CHECK(IValue(scalars).to_scalar_list() == scalars);
  CHECK_EQ(IValue(scalars).repr(), "[1, 2.5, True]");
  CHECK(IValue(std::vector<int64_t>{1, 2}).as_scalar_list() == (std::vector<Scalar>{Scalar(1), Scalar(2)}));
  CHECK_THROWS(IValue("x").as_scalar_list(), "expected a value of type Scalar[] but got str");
  TensorBase t = TensorBase::zeros({2});
  CHECK(IValue(t.storage()) == IValue(t.storage()));  // storages compare by identity
  CHECK(IValue(t.storage()) != IValue(TensorBase::zeros({2}).storage()));
  CHECK_EQ(IValue(t.storage()).repr(), "Storage(8 bytes on cpu)");
  CHECK(IValue(Stream(Device(DeviceType::Meta), 3)).to_stream() == Stream(Device(DeviceType::Meta), 3));
  CHECK_EQ(IValue(Stream()).repr(), "Stream(device=cpu, id=0)");
  CHECK(IValue(Dimname("N")).to_dimname() == Dimname("N"));
  CHECK_EQ(IValue(std::vector<Dimname>{Dimname("N"), Dimname::wildcard()}).repr(), "[N, *]");
  CHECK_THROWS(IValue(Dimname("N")).to_str(), "expected a value of type str but got Dimname (N)");
}

TEST(dimnames_are_interned_identifiers) {
  Dimname a("batch"), b(std::string("bat") + "ch");
  CHECK(a == b);
  CHECK(&a.str() == &b.str());  // one copy of each name
  CHECK(a != Dimname("channel"));
  CHECK(Dimname::wildcard().is_wildcard() && Dimname::wildcard().matches(a) && !a.matches(Dimname("C")));
  CHECK_THROWS(Dimname("1x"), "invalid dimension name '1x'");
  CHECK_THROWS(Dimname(""), "invalid dimension name ''");
}
