// The one error agreement, on real ranks: runs under `mpirun -np N` (and without mpirun,
// as one rank). Every rank runs every test; each arranges which ranks fail, how, and checks
// that exactly the rank the rules pick rethrows its own error while every other rank
// throws QuietExit with that error's exit code.
#include "comm/error_agreement.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi_runtime.h"

namespace fleetsim::comm {
namespace {

int g_rank = 0;
int g_size = 1;

// What AgreeOnFailure did on this rank: "returned", "rethrew <what>" or "quiet <code>".
template <typename Fn>
std::string Outcome(Fn&& fn) {
  try {
    fn();
    return "returned";
  } catch (const QuietExit& e) {
    return "quiet " + std::to_string(e.code);
  } catch (const std::exception& e) {
    return std::string("rethrew ") + e.what();
  }
}

TEST(ErrorAgreement, ExitCodes) {
  EXPECT_EQ(ExitCodeOf(nullptr), 0);
  EXPECT_EQ(ExitCodeOf(std::make_exception_ptr(InputError("f", 3, "x", "bad"))), 2);
  EXPECT_EQ(ExitCodeOf(std::make_exception_ptr(std::runtime_error("oops"))), 1);
  EXPECT_EQ(ExitCodeOf(std::make_exception_ptr(QuietExit{143})), 143);
  EXPECT_EQ(ExitCodeOf(std::make_exception_ptr(42)), 1);
}

TEST(ErrorAgreement, TheFirstFailureStandsAndLaterPartsAreSkipped) {
  RankFailure failure;
  int ran = 0;
  failure.Guard([&] { ++ran; });
  failure.Guard([&] { throw std::runtime_error("first"); }, 7);
  failure.Guard([&] { ++ran; });
  failure.Hold(std::make_exception_ptr(InputError("f", 1, "x", "second")));
  EXPECT_EQ(ran, 1);
  ASSERT_TRUE(failure.failed());
  EXPECT_EQ(failure.count(), 1);
  EXPECT_EQ(failure.code(), 1);
  EXPECT_EQ(failure.order(), 7);
  EXPECT_FALSE(failure.reported());
}

TEST(ErrorAgreement, NoFailureReturnsEverywhere) {
  RankFailure failure;
  failure.Guard([] {});
  EXPECT_EQ(Outcome([&] { AgreeOnFailure(failure, MPI_COMM_WORLD); }), "returned");
}

TEST(ErrorAgreement, OneFailingRankRethrowsTheOthersExitQuietlyWithItsCode) {
  const int failing = g_size - 1;
  RankFailure failure;
  failure.Guard([&] {
    if (g_rank == failing) throw InputError("trace.jsonl", 251, "input_tokens", "not a number");
  });
  const std::string outcome = Outcome([&] { AgreeOnFailure(failure, MPI_COMM_WORLD); });
  if (g_rank == failing) {
    EXPECT_EQ(outcome, "rethrew trace.jsonl:251: input_tokens: not a number");
  } else {
    EXPECT_EQ(outcome, "quiet 2");
  }
}

TEST(ErrorAgreement, AmongEqualOrdersTheLowestRankSpeaksWithItsOwnCode) {
  // Rank 0 fails internally, every other rank with bad input: rank 0 speaks, code 1.
  RankFailure failure;
  failure.Guard([&] {
    if (g_rank == 0) throw std::runtime_error("rank 0 broke");
    throw InputError("f", 1, "x", "rank " + std::to_string(g_rank));
  });
  const std::string outcome = Outcome([&] { AgreeOnFailure(failure, MPI_COMM_WORLD); });
  EXPECT_EQ(outcome, g_rank == 0 ? "rethrew rank 0 broke" : "quiet 1");
}

TEST(ErrorAgreement, TheLowestOrderSpeaksWhateverItsRank) {
  // Rank r fails at order size - r (a sweep's point index): the highest rank has the
  // lowest order.
  RankFailure failure;
  failure.Guard([&] { throw InputError("p", 0, "", "point " + std::to_string(g_size - g_rank)); },
                g_size - g_rank);
  const std::string outcome = Outcome([&] { AgreeOnFailure(failure, MPI_COMM_WORLD); });
  EXPECT_EQ(outcome, g_rank == g_size - 1 ? "rethrew p: point 1" : "quiet 2");
}

TEST(ErrorAgreement, AnErrorAlreadyReportedYieldsToOneNotYetSaid) {
  // Rank 0 holds a QuietExit from an earlier agreement whose reporter was the last rank;
  // the last rank's own error must still be the one that is printed.
  if (g_size < 2) GTEST_SKIP() << "needs two ranks";
  RankFailure failure;
  failure.Guard([&] {
    if (g_rank == g_size - 1) throw InputError("c.yaml", 2, "tp", "odd");
    throw QuietExit{2};
  });
  EXPECT_EQ(failure.reported(), g_rank != g_size - 1);
  const std::string outcome = Outcome([&] { AgreeOnFailure(failure, MPI_COMM_WORLD); });
  EXPECT_EQ(outcome, g_rank == g_size - 1 ? "rethrew c.yaml:2: tp: odd" : "quiet 2");
}

TEST(ErrorAgreement, OnRankZeroTellsEveryRank) {
  int ran = 0;
  EXPECT_EQ(Outcome([&] { OnRankZero(MPI_COMM_WORLD, [&] { ++ran; }); }), "returned");
  EXPECT_EQ(ran, g_rank == 0 ? 1 : 0);
  const std::string outcome = Outcome(
      [&] { OnRankZero(MPI_COMM_WORLD, [] { throw std::runtime_error("cannot rename"); }); });
  EXPECT_EQ(outcome, g_rank == 0 ? "rethrew cannot rename" : "quiet 1");
}

TEST(ErrorAgreement, OnEveryRankSpeaksOnceForAnErrorEveryRankMeets) {
  const std::string outcome = Outcome([&] {
    OnEveryRank(MPI_COMM_WORLD, [] { throw InputError("c.yaml", 4, "gateways", "no"); });
  });
  EXPECT_EQ(outcome, g_rank == 0 ? "rethrew c.yaml:4: gateways: no" : "quiet 2");
}

TEST(ErrorAgreement, ReportFailuresPrintsOneLineWhereTheErrorIs) {
  ::testing::internal::CaptureStderr();
  const std::string outcome = Outcome([&] {
    ReportFailures([&] {
      OnEveryRank(MPI_COMM_WORLD, [] { throw InputError("c.yaml", 4, "gateways", "no"); });
    });
  });
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(outcome, "quiet 2");
  EXPECT_EQ(printed, g_rank == 0 ? "fleetsim: error: c.yaml:4: gateways: no\n" : "");

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Outcome([] { ReportFailures([] { throw std::logic_error("broken"); }); }), "quiet 1");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "fleetsim: internal error: broken\n");

  // Not a standard exception (FleetInterrupted, say): passes through, unprinted.
  EXPECT_THROW(ReportFailures([] { throw 7; }), int);
}

}  // namespace
}  // namespace fleetsim::comm

int main(int argc, char** argv) {
  fleetsim::comm::MpiRuntime mpi(&argc, &argv);
  fleetsim::comm::g_rank = mpi.rank();
  fleetsim::comm::g_size = mpi.size();
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints the results; every rank's failures still set the exit code.
  if (mpi.rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
