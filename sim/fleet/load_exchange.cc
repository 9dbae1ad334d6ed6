#include "fleet/load_exchange.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "comm/collectives.h"

namespace fleetsim {

// Sent as raw bytes between ranks of the same binary.
static_assert(std::is_trivially_copyable_v<LoadChange>);

std::vector<LoadChange> ExchangeLoadChanges(const std::vector<LoadChange>& mine,
                                            const comm::Comm& comm) {
  const int size = comm::SizeOf(comm);
  if (size == 1) return mine;
  std::vector<std::byte> bytes(mine.size() * sizeof(LoadChange));
  if (!bytes.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  const std::vector<std::vector<std::byte>> outgoing(static_cast<std::size_t>(size), bytes);
  const std::vector<std::byte> received = comm::ExchangeBytes(outgoing, comm);
  if (received.size() % sizeof(LoadChange) != 0)
    throw std::logic_error("ExchangeLoadChanges: a partial load change arrived");
  std::vector<LoadChange> all(received.size() / sizeof(LoadChange));
  if (!all.empty()) std::memcpy(all.data(), received.data(), received.size());
  return all;
}

}  // namespace fleetsim
