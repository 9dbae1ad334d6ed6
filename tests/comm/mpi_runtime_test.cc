// Runs under `mpirun -np N` (and without mpirun, as one rank): every rank runs these
// tests, and each checks that all N ranks took part, so a launch that silently started N
// singletons -- or fewer ranks than asked -- fails.
#include "comm/mpi_runtime.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

#include <gtest/gtest.h>
#include <mpi.h>

namespace {

fleetsim::comm::MpiRuntime* g_mpi = nullptr;
int g_expected_ranks = -1;
// --user-isolated=V: the test's environment set OMPI_MCA_ess_singleton_isolated to V.
std::string g_user_isolated;
// --user-pml=V: the test's environment set OMPI_MCA_pml to V.
std::string g_user_pml;
// --user-tmpdir=V: the test's environment set OMPI_MCA_orte_tmpdir_base to V.
std::string g_user_tmpdir;
// --inherited-tmpdir=V: it set OMPI_MCA_orte_tmpdir_base to V and marked V as a fleetsim
// parent's (FLEETSIM_MPI_SESSION_BASE=V).
std::string g_inherited_tmpdir;
// Session directories laid out before MPI started, as a singleton killed earlier (its
// process gone) and one still running (this test's parent) would have left them.
std::filesystem::path g_orphan;
std::filesystem::path g_live;

TEST(MpiRuntime, WorldHasTheExpectedRanks) {
  ASSERT_GT(g_expected_ranks, 0) << "pass --expected-ranks=N";
  EXPECT_EQ(g_mpi->size(), g_expected_ranks);
  EXPECT_GE(g_mpi->rank(), 0);
  EXPECT_LT(g_mpi->rank(), g_mpi->size());
}

TEST(MpiRuntime, EveryRankContributesToAnAllGather) {
  // Each rank sends a value only it knows; all must arrive, in rank order.
  const std::vector<int> all = g_mpi->AllGather(1000 + g_mpi->rank());
  ASSERT_EQ(static_cast<int>(all.size()), g_mpi->size());
  for (int r = 0; r < g_mpi->size(); ++r)
    EXPECT_EQ(all[static_cast<std::size_t>(r)], 1000 + r);
}

TEST(MpiRuntime, GrantsFunneledThreadSupport) {
  // Threads work inside a process; only the main thread calls MPI.
  EXPECT_GE(g_mpi->thread_level(), MPI_THREAD_FUNNELED);
}

TEST(MpiRuntime, KnowsEveryRanksHost) {
  const std::vector<std::string> hosts = g_mpi->HostNames();
  ASSERT_EQ(static_cast<int>(hosts.size()), g_mpi->size());
  for (const std::string& host : hosts)
    EXPECT_FALSE(host.empty());
}

std::string EnvOr(const char* name, const char* otherwise) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : otherwise;
}

TEST(MpiRuntime, ASingletonStartsWithoutADaemonOrTransportProbesAndAUsersSettingWins) {
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  const std::string pml = g_user_pml.empty() ? "ob1" : g_user_pml;
  if (launched) {
    // mpirun's processes keep mpirun's daemon; every test run here is on one node, so
    // none probes the inter-node transports either.
    EXPECT_EQ(EnvOr("OMPI_MCA_ess_singleton_isolated", "unset"), "unset");
    EXPECT_EQ(EnvOr("OMPI_COMM_WORLD_LOCAL_SIZE", "unset"), EnvOr("OMPI_COMM_WORLD_SIZE", ""));
    EXPECT_EQ(EnvOr("OMPI_MCA_pml", "unset"), pml);
    return;
  }
  EXPECT_EQ(EnvOr("OMPI_MCA_pml", "unset"), pml);
  EXPECT_EQ(EnvOr("OMPI_MCA_ess_singleton_isolated", "unset"),
            g_user_isolated.empty() ? "1" : g_user_isolated);
}

TEST(MpiRuntime, ASingletonKeepsItsSessionTreeInADirectoryOfItsOwn) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) {
    // mpirun chose the session directory for the whole job.
    EXPECT_TRUE(g_mpi->session_base().empty());
    return;
  }
  if (!g_user_tmpdir.empty()) {
    EXPECT_TRUE(g_mpi->session_base().empty());
    EXPECT_EQ(EnvOr("OMPI_MCA_orte_tmpdir_base", "unset"), g_user_tmpdir);
    return;
  }
  const std::filesystem::path base = g_mpi->session_base();
  ASSERT_FALSE(base.empty());
  EXPECT_NE(base.string(), g_inherited_tmpdir) << "a parent's directory was taken over";
  EXPECT_EQ(EnvOr("OMPI_MCA_orte_tmpdir_base", "unset"), base.string());
  EXPECT_EQ(EnvOr(fleetsim::comm::MpiRuntime::kSessionBaseVariable, "unset"), base.string());
  EXPECT_EQ(base.filename().string().rfind("fleetsim-mpi-", 0), 0U) << base;
  // A killed singleton's directory went; a running one's stayed.
  EXPECT_FALSE(std::filesystem::exists(g_orphan)) << g_orphan;
  EXPECT_TRUE(std::filesystem::exists(g_live)) << g_live;
  std::filesystem::remove_all(g_live);
  // Open MPI made its tree (ompi.<host>.<uid>/jf.0/...) there, not in the shared temp dir.
  bool tree = false;
  for (const auto& entry : std::filesystem::directory_iterator(base))
    tree = tree || entry.path().filename().string().rfind("ompi.", 0) == 0;
  EXPECT_TRUE(tree) << "no ompi.* session tree in " << base;
}

// The pid of a process that has ended (a child, reaped).
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// Runs the suite while MPI is up; `session_base` gets a singleton's own session directory,
// for main to check once MPI is finalized.
int RunSuite(int argc, char** argv, std::filesystem::path& session_base) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
    const std::filesystem::path temp = std::filesystem::temp_directory_path();
    // Named after a dead process and a live one (ctest, our parent), each ending in our
    // own pid: the singleton variants run side by side under one ctest, and one's cleanup
    // must not take the other's live directory.
    const std::string mine = "-test" + std::to_string(::getpid());
    g_orphan = temp / ("fleetsim-mpi-" + std::to_string(DeadPid()) + mine);
    g_live = temp / ("fleetsim-mpi-" + std::to_string(::getppid()) + mine);
    std::filesystem::create_directories(g_orphan / "ompi.host.0" / "jf.0");
    std::filesystem::create_directories(g_live);
  }
  fleetsim::comm::MpiRuntime mpi(&argc, &argv);
  g_mpi = &mpi;
  session_base = mpi.session_base();
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--expected-ranks=", 17) == 0)
      g_expected_ranks = std::atoi(argv[i] + 17);
    if (std::strncmp(argv[i], "--user-isolated=", 16) == 0) g_user_isolated = argv[i] + 16;
    if (std::strncmp(argv[i], "--user-pml=", 11) == 0) g_user_pml = argv[i] + 11;
    if (std::strncmp(argv[i], "--user-tmpdir=", 14) == 0) g_user_tmpdir = argv[i] + 14;
    if (std::strncmp(argv[i], "--inherited-tmpdir=", 19) == 0) g_inherited_tmpdir = argv[i] + 19;
  }
  // Only rank 0 prints the report; every rank's result decides mpirun's exit code.
  if (mpi.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (mpi.rank() == 0) {
    std::printf("%d of %d ranks ran the suite; %s\n", mpi.size(), g_expected_ranks,
                any_failed ? "some failed" : "all passed");
  }
  return any_failed;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path session_base;
  const int any_failed = RunSuite(argc, argv, session_base);
  std::error_code ignored;  // the laid-out directories, where a run kept them
  std::filesystem::remove_all(g_orphan, ignored);
  std::filesystem::remove_all(g_live, ignored);
  // MPI is finalized: a singleton's own session directory is gone with it.
  if (!session_base.empty() && std::filesystem::exists(session_base)) {
    std::printf("FAILED: the singleton's session directory %s outlived MPI_Finalize\n",
                session_base.c_str());
    return 1;
  }
  return any_failed;
}
