#include "fleet/routed_request.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace fleetsim {
namespace {

template <typename T>
void Put(std::vector<std::byte>& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }
  template <typename T>
  T Get() {
    T value;
    Copy(&value, sizeof(T));
    return value;
  }
  void Copy(void* to, std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("truncated routed-request message");
    if (n == 0) return;  // `to` may be null (an empty vector's data())
    std::memcpy(to, bytes_.data() + at_, n);
    at_ += n;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

}  // namespace

void AppendRoutedRequest(const RoutedRequest& routed, std::vector<std::byte>& buffer) {
  const WorkloadRequest& r = routed.request;
  Put(buffer, routed.id);
  Put(buffer, routed.gateway);
  Put(buffer, routed.instance);
  Put(buffer, routed.instance_arrival);
  Put(buffer, routed.decode_instance);
  // Only a request handed over by a prefill instance carries its prefill leg: a mixed
  // fleet's messages stay as short as before disaggregation.
  const bool handed_over = routed.prefill.instance >= 0;
  Put(buffer, static_cast<uint8_t>(handed_over ? 1 : 0));
  if (handed_over) Put(buffer, routed.prefill);
  Put(buffer, r.arrival);
  Put(buffer, r.input_tokens);
  Put(buffer, r.output_tokens);
  Put(buffer, static_cast<int32_t>(r.hash_block_size));
  Put(buffer, static_cast<uint8_t>(r.hashes_cover_partial_block ? 1 : 0));
  Put(buffer, static_cast<uint64_t>(r.block_hashes.size()));
  const auto* hashes = reinterpret_cast<const std::byte*>(r.block_hashes.data());
  buffer.insert(buffer.end(), hashes, hashes + r.block_hashes.size() * sizeof(uint64_t));
  Put(buffer, static_cast<uint64_t>(r.id.size()));
  const auto* name = reinterpret_cast<const std::byte*>(r.id.data());
  buffer.insert(buffer.end(), name, name + r.id.size());
  Put(buffer, static_cast<uint64_t>(r.model.size()));
  const auto* model = reinterpret_cast<const std::byte*>(r.model.data());
  buffer.insert(buffer.end(), model, model + r.model.size());
}

std::vector<RoutedRequest> ParseRoutedRequests(std::span<const std::byte> bytes) {
  std::vector<RoutedRequest> out;
  Reader in(bytes);
  while (!in.done()) {
    RoutedRequest routed;
    WorkloadRequest& r = routed.request;
    routed.id = in.Get<int64_t>();
    routed.gateway = in.Get<int32_t>();
    routed.instance = in.Get<int32_t>();
    routed.instance_arrival = in.Get<SimTime>();
    routed.decode_instance = in.Get<int32_t>();
    if (in.Get<uint8_t>() != 0) routed.prefill = in.Get<PrefillLeg>();
    r.arrival = in.Get<SimTime>();
    r.input_tokens = in.Get<int64_t>();
    r.output_tokens = in.Get<int64_t>();
    r.hash_block_size = in.Get<int32_t>();
    r.hashes_cover_partial_block = in.Get<uint8_t>() != 0;
    r.block_hashes.resize(in.Get<uint64_t>());
    in.Copy(r.block_hashes.data(), r.block_hashes.size() * sizeof(uint64_t));
    r.id.resize(in.Get<uint64_t>());
    in.Copy(r.id.data(), r.id.size());
    r.model.resize(in.Get<uint64_t>());
    in.Copy(r.model.data(), r.model.size());
    out.push_back(std::move(routed));
  }
  return out;
}

}  // namespace fleetsim
