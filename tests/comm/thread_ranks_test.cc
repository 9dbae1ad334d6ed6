// Threads as ranks (comm/communicator.h), on real MPI ranks: runs under `mpirun -np N` (and
// without mpirun). Each test starts `threads` threads per process, every one a rank of
// its own, and checks that the collectives give each rank what the same number of MPI
// ranks would: the exchanges' bytes in source-rank order, every rank's values, the
// reductions, rank 0's string, and the error agreement's one speaker.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/collectives.h"
#include "comm/communicator.h"
#include "comm/error_agreement.h"
#include "comm/mpi_runtime.h"

namespace fleetsim::comm {
namespace {

// Runs body(comm) on `threads` threads of this process, each a rank; the calling thread is
// thread 0 (the one that talks MPI). What a thread throws comes back by thread.
template <typename Body>
std::vector<std::exception_ptr> OnThreads(int threads, const Body& body) {
  LocalRanks local(threads, ThreadsFitProcessors(threads, MPI_COMM_WORLD));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  const auto rank = [&](int t) {
    try {
      body(Comm(MPI_COMM_WORLD, local, t));
    } catch (...) {
      errors[static_cast<std::size_t>(t)] = std::current_exception();
      local.Break();
    }
  };
  std::vector<std::jthread> helpers;
  for (int t = 1; t < threads; ++t)
    helpers.emplace_back(rank, t);
  rank(0);
  helpers.clear();  // joins
  return errors;
}

std::string What(const std::exception_ptr& e) {
  if (!e) return "returned";
  try {
    std::rethrow_exception(e);
  } catch (const QuietExit& q) {
    return "quiet " + std::to_string(q.code);
  } catch (const std::exception& x) {
    return std::string("threw ") + x.what();
  }
}

std::vector<std::byte> Bytes(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::transform(s.begin(), s.end(), b.begin(), [](char c) { return static_cast<std::byte>(c); });
  return b;
}

std::string Text(const std::vector<std::byte>& b) {
  std::string s(b.size(), '\0');
  std::transform(b.begin(), b.end(), s.begin(), [](std::byte c) { return static_cast<char>(c); });
  return s;
}

int Processes() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

TEST(ThreadRanks, RanksAreThreadsOfConsecutiveProcessBlocks) {
  std::mutex mutex;
  std::vector<int> seen;
  const auto errors = OnThreads(3, [&](const Comm& comm) {
    EXPECT_EQ(comm.size(), 3 * Processes());
    EXPECT_EQ(comm.rank(), comm.process() * 3 + comm.thread());
    EXPECT_EQ(comm.lead(), comm.thread() == 0);
    const std::lock_guard lock(mutex);
    seen.push_back(comm.rank());
  });
  for (const auto& e : errors)
    EXPECT_EQ(What(e), "returned");
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen.front() % 3, 0);
  EXPECT_EQ(seen.back() - seen.front(), 2);
}

// Rank r sends "r>d" to rank d (nothing to itself when r is odd) and values {r, 10 r}:
// every rank receives the senders' texts in rank order and every rank's values.
TEST(ThreadRanks, ExchangesArriveInSourceRankOrder) {
  for (int threads : {1, 2, 3}) {
    const auto errors = OnThreads(threads, [&](const Comm& comm) {
      const int size = comm.size();
      for (int round = 0; round < 50; ++round) {
        std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size));
        for (int d = 0; d < size; ++d) {
          if (d == comm.rank() && comm.rank() % 2 == 1) continue;
          out[static_cast<std::size_t>(d)] =
              Bytes(std::to_string(comm.rank()) + ">" + std::to_string(d) + ";");
        }
        const std::vector<int64_t> values = {comm.rank(), 10 * comm.rank() + round};
        const WindowExchange got = ExchangeWindow(out, values, comm);
        std::string expected;
        for (int s = 0; s < size; ++s) {
          if (s == comm.rank() && s % 2 == 1) continue;
          expected += std::to_string(s) + ">" + std::to_string(comm.rank()) + ";";
        }
        ASSERT_EQ(Text(got.bytes), expected) << "rank " << comm.rank() << " round " << round;
        ASSERT_EQ(got.values.size(), 2u * static_cast<std::size_t>(size));
        for (int s = 0; s < size; ++s) {
          ASSERT_EQ(got.values[2 * static_cast<std::size_t>(s)], s);
          ASSERT_EQ(got.values[2 * static_cast<std::size_t>(s) + 1], 10 * s + round);
        }
        ASSERT_EQ(Text(ExchangeBytes(out, comm)), expected);
      }
    });
    for (const auto& e : errors)
      EXPECT_EQ(What(e), "returned") << threads << " thread(s)";
  }
}

TEST(ThreadRanks, ReductionsAndBroadcastCoverEveryRank) {
  const auto errors = OnThreads(3, [&](const Comm& comm) {
    const int64_t n = comm.size();
    const int64_t r = comm.rank();
    std::vector<int64_t> minsum = {100 - r, r, 1};
    AllReduceMinSum(minsum, comm);
    EXPECT_EQ(minsum, (std::vector<int64_t>{100 - (n - 1), n * (n - 1) / 2, n}));
    std::vector<int32_t> sums = {1, static_cast<int32_t>(r)};
    AllReduceSum(sums, comm);
    EXPECT_EQ(sums, (std::vector<int32_t>{static_cast<int32_t>(n),
                                          static_cast<int32_t>(n * (n - 1) / 2)}));
    EXPECT_EQ(AllReduceMin(r + 5, comm), 5);
    EXPECT_EQ(AllReduceMax(r + 5, comm), n + 4);
    const std::string said = BroadcastString("from " + std::to_string(r), comm);
    EXPECT_EQ(said, "from 0");
  });
  for (const auto& e : errors)
    EXPECT_EQ(What(e), "returned");
}

// The failure whose rank is highest but whose order is lowest speaks; every other rank,
// thread or process, exits quietly with its code.
TEST(ThreadRanks, OneRankSpeaksForAnAgreedFailure) {
  const auto errors = OnThreads(2, [&](const Comm& comm) {
    RankFailure failure;
    if (comm.rank() == comm.size() - 1)
      failure.Guard([] { throw InputError("c.yaml", 3, "tp", "odd"); }, 0);
    else if (comm.rank() == 0)
      failure.Guard([] { throw std::runtime_error("later"); }, 5);
    AgreeOnFailure(failure, comm);
  });
  const bool last_process = [] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank == Processes() - 1;
  }();
  EXPECT_EQ(What(errors[1]), last_process ? "threw c.yaml:3: tp: odd" : "quiet 2");
  EXPECT_EQ(What(errors[0]), "quiet 2");
}

// A thread that leaves alone (outside any agreement) does not leave its process's other
// threads waiting: they stop with LocalRanksBroken. Within one process only: with MPI
// ranks the job is aborted (run_job.cc), which a test cannot survive.
TEST(ThreadRanks, AThreadLeavingAloneBreaksTheOthersWaits) {
  if (Processes() > 1) GTEST_SKIP() << "one process only: other processes would wait in MPI";
  const auto errors = OnThreads(3, [&](const Comm& comm) {
    if (comm.thread() == 2) throw std::logic_error("gone");
    std::vector<int64_t> v = {1};
    AllReduceSum(v, comm);
  });
  EXPECT_EQ(What(errors[2]), "threw gone");
  EXPECT_EQ(What(errors[0]), "threw a thread of this process left the run");
  EXPECT_EQ(What(errors[1]), "threw a thread of this process left the run");
}

TEST(ThreadRanks, ThreadsInDifferentCollectivesAreReported) {
  if (Processes() > 1) GTEST_SKIP() << "one process only: other processes would wait in MPI";
  const auto errors = OnThreads(2, [&](const Comm& comm) {
    if (comm.thread() == 0) {
      AllReduceMax(1, comm);
    } else {
      std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(comm.size()));
      ExchangeBytes(out, comm);
    }
  });
  EXPECT_NE(What(errors[0]).find("met in different collectives"), std::string::npos)
      << What(errors[0]);
  EXPECT_EQ(What(errors[1]), "threw a thread of this process left the run");
}

}  // namespace
}  // namespace fleetsim::comm

int main(int argc, char** argv) {
  fleetsim::comm::MpiRuntime mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (mpi.rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
