#include "fleet/routed_request.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace fleetsim {
namespace {

// Each field of a routed request's message in order, to `put(bytes, count)`: summed once
// for the message's size, then copied, so a message grows its buffer once.
template <typename PutBytes>
void ForEachField(const RoutedRequest& routed, PutBytes&& put) {
  const auto value = [&put](const auto& v) {
    static_assert(std::is_trivially_copyable_v<std::remove_cvref_t<decltype(v)>>);
    put(reinterpret_cast<const std::byte*>(&v), sizeof(v));
  };
  const auto run = [&put, &value](const auto& items) {
    value(static_cast<uint64_t>(items.size()));
    put(reinterpret_cast<const std::byte*>(items.data()), items.size() * sizeof(items[0]));
  };
  const WorkloadRequest& r = routed.request;
  value(routed.id);
  value(routed.gateway);
  value(routed.instance);
  value(routed.instance_arrival);
  value(routed.decode_instance);
  // Only a request handed over by a prefill instance carries its prefill leg: a mixed
  // fleet's messages stay as short as before disaggregation.
  const bool handed_over = routed.prefill.instance >= 0;
  value(static_cast<uint8_t>(handed_over ? 1 : 0));
  if (handed_over) value(routed.prefill);
  value(r.arrival);
  value(r.input_tokens);
  value(r.output_tokens);
  value(static_cast<int32_t>(r.hash_block_size));
  value(static_cast<uint8_t>(r.hashes_cover_partial_block ? 1 : 0));
  value(r.shared_hashes);
  value(r.family);
  value(r.family_hashes_from);
  value(r.family_ends);
  run(r.block_hashes);
  run(r.id);
  run(r.model);
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
  std::size_t size = 0;
  ForEachField(routed, [&size](const std::byte*, std::size_t n) { size += n; });
  std::size_t at = buffer.size();
  buffer.resize(at + size);
  ForEachField(routed, [&](const std::byte* bytes, std::size_t n) {
    if (n == 0) return;  // `bytes` may be null (an empty vector's data())
    std::memcpy(buffer.data() + at, bytes, n);
    at += n;
  });
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
    r.shared_hashes = in.Get<int64_t>();
    r.family = in.Get<uint64_t>();
    r.family_hashes_from = in.Get<int64_t>();
    r.family_ends = in.Get<SimTime>();
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
