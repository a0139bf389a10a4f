// The OpenCL library on device memory (cl_mem buffers of its context), on
// PoCL in CI: results against the reference, and bad handles (a host pointer,
// a null handle, a buffer too small, a buffer of another context) rejected
// with an Error naming the argument, before anything runs.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "batchconv/device.h"
#include "reference.h"

namespace batchconv::test {
namespace {

struct Cl {
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  Cl() {
    void *c = nullptr, *q = nullptr;
    opencl::native_handles(&c, &q);
    ctx = static_cast<cl_context>(c);
    queue = static_cast<cl_command_queue>(q);
  }
  cl_mem upload(const std::vector<float>& v) {
    cl_int err = 0;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, v.size() * 4, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    EXPECT_EQ(clEnqueueWriteBuffer(queue, m, CL_TRUE, 0, v.size() * 4, v.data(), 0, nullptr, nullptr), CL_SUCCESS);
    return m;
  }
  std::vector<float> download(cl_mem m, size_t n) {
    std::vector<float> v(n);
    EXPECT_EQ(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, n * 4, v.data(), 0, nullptr, nullptr), CL_SUCCESS);
    return v;
  }
};

uint64_t h(cl_mem m) { return reinterpret_cast<uint64_t>(m); }

std::vector<float> random_data(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

#define SKIP_WITHOUT_OPENCL()                                                          \
  do {                                                                                 \
    const std::string why = opencl::unavailable_reason();                              \
    if (!why.empty()) GTEST_SKIP() << "skipped: " << why;                              \
  } while (0)

TEST(OpenClBuffers, ConvAndLinearOnDeviceMemory) {
  SKIP_WITHOUT_OPENCL();
  Cl cl;
  std::mt19937 rng(5);
  std::vector<float> x = random_data(rng, 2 * 6 * 9 * 7), w = random_data(rng, 9 * 2 * 3 * 3),
                     b = random_data(rng, 9);
  ConvDesc d = ConvDesc::with_padding(1);
  d.groups = 3;
  d.activation = Activation::ReLU;
  TensorView xv(x.data(), {2, 6, 9, 7}), wv(w.data(), {9, 2, 3, 3}), bv(b.data(), {9});
  std::vector<int64_t> ys;
  const std::vector<double> ref = ref::grouped_conv(xv, wv, &bv, d, &ys);
  cl_mem dx = cl.upload(x), dw = cl.upload(w), db = cl.upload(b), dy = cl.upload(std::vector<float>(ref.size()));
  DeviceTensor tb(h(db), {9});
  opencl::grouped_conv(DeviceTensor(h(dx), xv.shape), DeviceTensor(h(dw), wv.shape), &tb, DeviceTensor(h(dy), ys),
                       d, DeviceContext{});
  opencl::synchronize();
  std::vector<float> y = cl.download(dy, ref.size());
  EXPECT_LT(ref::max_rel_error(TensorView(y.data(), ys), ref), 1e-4);

  std::vector<float> lx = random_data(rng, 3 * 5 * 11), lw = random_data(rng, 3 * 11 * 17);
  TensorView lxv(lx.data(), {3, 5, 11}), lwv(lw.data(), {3, 11, 17});
  std::vector<int64_t> lys;
  const std::vector<double> lref = ref::batched_linear(lxv, lwv, nullptr, Activation::None, &lys);
  cl_mem mx = cl.upload(lx), mw = cl.upload(lw), my = cl.upload(std::vector<float>(lref.size()));
  opencl::batched_linear(DeviceTensor(h(mx), lxv.shape), DeviceTensor(h(mw), lwv.shape), nullptr,
                         DeviceTensor(h(my), lys));
  std::vector<float> ly = cl.download(my, lref.size());
  EXPECT_LT(ref::max_rel_error(TensorView(ly.data(), lys), lref), 1e-4);
  for (cl_mem m : {dx, dw, db, dy, mx, mw, my}) clReleaseMemObject(m);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(OpenClBuffers, BadHandlesAreRefused) {
  SKIP_WITHOUT_OPENCL();
  Cl cl;
  std::vector<float> hx(1 * 2 * 5 * 5, 1.0f), hw(4 * 2 * 3 * 3, 1.0f), hy(1 * 4 * 3 * 3, 1.0f);
  cl_mem dx = cl.upload(hx), dw = cl.upload(hw), dy = cl.upload(hy);
  cl_mem small = cl.upload(std::vector<float>(4));
  const std::vector<int64_t> xs{1, 2, 5, 5}, ws{4, 2, 3, 3}, ys{1, 4, 3, 3};
  auto run = [&](uint64_t x, uint64_t w, uint64_t y) {
    return error_of([&] {
      opencl::grouped_conv(DeviceTensor(x, xs), DeviceTensor(w, ws), nullptr, DeviceTensor(y, ys), ConvDesc{});
    });
  };
  // A host pointer where a cl_mem goes.
  std::string e = run(reinterpret_cast<uint64_t>(hx.data()), h(dw), h(dy));
  EXPECT_NE(e.find("x (0x"), std::string::npos) << e;
  EXPECT_NE(e.find("is not an OpenCL buffer"), std::string::npos) << e;
  e = run(h(dx), h(dw), 0);
  EXPECT_NE(e.find("y is a null cl_mem"), std::string::npos) << e;
  e = run(h(dx), h(small), h(dy));
  EXPECT_NE(e.find("w (0x"), std::string::npos) << e;
  EXPECT_NE(e.find("holds 16 bytes"), std::string::npos) << e;
  // A buffer of another context (same device).
  cl_device_id dev = nullptr;
  clGetCommandQueueInfo(cl.queue, CL_QUEUE_DEVICE, sizeof dev, &dev, nullptr);
  cl_int err = 0;
  cl_context other = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, hy.size() * 4, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  e = run(h(dx), h(dw), h(foreign));
  EXPECT_NE(e.find("belongs to another OpenCL context"), std::string::npos) << e;
  // Unit innermost stride only.
  e = error_of([&] {
    opencl::grouped_conv(DeviceTensor(h(dx), {1, 2, 5, 3}, {50, 25, 5, 2}), DeviceTensor(h(dw), ws), nullptr,
                         DeviceTensor(h(dy), {1, 4, 3, 1}), ConvDesc{});
  });
  EXPECT_NE(e.find("innermost stride 2"), std::string::npos) << e;
  // Nothing was written to y.
  EXPECT_EQ(cl.download(dy, hy.size())[0], 1.0f);
  for (cl_mem m : {dx, dw, dy, small, foreign}) clReleaseMemObject(m);
  clReleaseContext(other);
}

}  // namespace
}  // namespace batchconv::test
