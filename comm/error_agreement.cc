#include "comm/error_agreement.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "comm/collectives.h"

namespace fleetsim::comm {
namespace {

constexpr int64_t kNoFailure = std::numeric_limits<int64_t>::max();
constexpr int64_t kCodes = 256;                  // exit codes 1..255
constexpr int64_t kMaxOrder = int64_t{1} << 31;  // orders beyond this rank as equal
constexpr int64_t kMaxRanks = int64_t{1} << 20;  // keeps the key below 2^63

// One integer per rank whose minimum over the ranks names the failure that speaks: its
// order, then whether it was reported already, then its rank; its exit code rides in the
// lowest bits (ranks are distinct, so the code never decides).
int64_t KeyOf(const RankFailure& failure, int rank) {
  if (!failure.failed()) return kNoFailure;
  const int64_t order = std::clamp<int64_t>(failure.order(), 0, kMaxOrder);
  const int64_t code = std::clamp<int64_t>(failure.code(), 1, kCodes - 1);
  return ((order * 2 + (failure.reported() ? 1 : 0)) * kMaxRanks + rank) * kCodes + code;
}

int RankOfKey(int64_t key) {
  return static_cast<int>(key / kCodes % kMaxRanks);
}

}  // namespace

int ExitCodeOf(const std::exception_ptr& error) {
  if (!error) return 0;
  try {
    std::rethrow_exception(error);
  } catch (const QuietExit& e) {
    return e.code;
  } catch (const InputError&) {
    return kExitInputError;
  } catch (...) {
    return 1;
  }
}

void RankFailure::Hold(std::exception_ptr error, int64_t order) {
  if (error_ || !error) return;
  code_ = ExitCodeOf(error);
  order_ = order;
  try {
    std::rethrow_exception(error);
  } catch (const QuietExit&) {
    reported_ = true;
  } catch (...) {
    reported_ = false;
  }
  error_ = std::move(error);
}

namespace {
// The failure the last agreement rethrew on this thread.
std::exception_ptr& LastAgreed() {
  thread_local std::exception_ptr last;
  return last;
}
}  // namespace

bool Agreed(const std::exception_ptr& error) {
  return error && error == LastAgreed();
}

void AdoptAgreed(const std::exception_ptr& error) {
  LastAgreed() = error;
}

void AgreeOnFailure(const RankFailure& mine, const Comm& comm) {
  const int rank = comm.rank();
  if (comm.size() > kMaxRanks)
    throw std::runtime_error("more ranks than the error agreement counts");
  const int64_t first = AllReduceMin(KeyOf(mine, rank), comm);
  if (first == kNoFailure) return;
  if (RankOfKey(first) == rank) {
    LastAgreed() = mine.error();
    std::rethrow_exception(mine.error());
  }
  throw QuietExit{static_cast<int>(first % kCodes)};
}

void ReportAndExit(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const QuietExit&) {
    throw;
  } catch (const InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "fleetsim: internal error: an unknown exception\n");
  }
  std::fflush(stderr);
  throw QuietExit{ExitCodeOf(error)};
}

}  // namespace fleetsim::comm
