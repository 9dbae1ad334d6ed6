// Hdf5File under 1, 2 and 4 MPI ranks: every rank writes its own slice of a table, and
// every rank then reads the committed file back with the serial HDF5 API.
#include "output/hdf5_file.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "core/input_error.h"
#include "output/hdf5_read_back.h"
#include "output/row_range.h"
#include "output/table_schema.h"
#include "output/test_world.h"

namespace fleetsim::output {
namespace {

namespace fs = std::filesystem;
using testing::ReadBack;
using testing::ScratchDirectory;
using testing::WorldRank;
using testing::WorldSize;

// Padding after `slot` and after `state`, so the test sees whether padding leaks out.
struct RequestRow {
  int64_t id;
  int32_t slot;
  double ttft_s;
  char state[12];
};

TableSchema RequestSchema() {
  TableSchema schema(sizeof(RequestRow));
  schema.Int64("id", offsetof(RequestRow, id), "index")
      .Int32("slot", offsetof(RequestRow, slot), "index")
      .Float64("ttft_s", offsetof(RequestRow, ttft_s), "s")
      .String("state", offsetof(RequestRow, state), sizeof(RequestRow::state));
  return schema;
}

// Different counts per rank, and rank 1 holds none when there are two or more ranks.
int64_t RowsOfRank(int rank, int size) {
  return size >= 2 && rank == 1 ? 0 : rank + 2;
}

RequestRow MakeRow(int rank, int64_t index) {
  RequestRow row;
  std::memset(&row, 0xAB, sizeof(row));  // garbage in padding and after the strings' NUL
  row.id = rank * 10 + index;
  row.slot = rank;
  row.ttft_s = 0.25 * static_cast<double>(row.id) + 1.0 / 3.0;
  // "running-long" fills all 12 chars: no NUL at all.
  const char* states[] = {"queued", "running-long", "done"};
  const char* state = states[index % 3];
  std::memcpy(row.state, state, std::min(std::strlen(state) + 1, sizeof(row.state)));
  return row;
}

std::vector<RequestRow> RowsOf(int rank, int size) {
  std::vector<RequestRow> rows;
  for (int64_t i = 0; i < RowsOfRank(rank, size); ++i)
    rows.push_back(MakeRow(rank, i));
  return rows;
}

// The read side's own view of a row: the string one longer, so it always ends in NUL.
struct ReadRow {
  int64_t id;
  int32_t slot;
  double ttft_s;
  char state[13];
};

internal::Hdf5Handle ReadRowType() {
  using internal::CheckedId;
  internal::Hdf5Handle row =
      CheckedId(H5Tcreate(H5T_COMPOUND, sizeof(ReadRow)), H5Tclose, "test", "H5Tcreate");
  const internal::Hdf5Handle text = CheckedId(H5Tcopy(H5T_C_S1), H5Tclose, "test", "H5Tcopy");
  H5Tset_size(text.get(), sizeof(ReadRow::state));
  H5Tset_strpad(text.get(), H5T_STR_NULLTERM);
  H5Tset_cset(text.get(), H5T_CSET_UTF8);  // as stored: HDF5 converts no string between sets
  H5Tinsert(row.get(), "id", offsetof(ReadRow, id), H5T_NATIVE_INT64);
  H5Tinsert(row.get(), "slot", offsetof(ReadRow, slot), H5T_NATIVE_INT32);
  H5Tinsert(row.get(), "ttft_s", offsetof(ReadRow, ttft_s), H5T_NATIVE_DOUBLE);
  H5Tinsert(row.get(), "state", offsetof(ReadRow, state), text.get());
  return row;
}

// Writes this rank's slice of /requests and the attributes, and commits.
void WriteRequests(const std::string& path, MPI_Comm comm, const std::vector<RequestRow>& rows) {
  const auto count = static_cast<int64_t>(rows.size());
  const RowRange range = RowRangeOf(count, comm);
  Hdf5File file(path, comm);
  file.WriteTable("/requests", RequestSchema(), rows.data(), range.offset, count, range.total);
  file.WriteAttribute("/", "fleetsim_version", std::string("0.1.0"));
  file.WriteAttribute("/requests", "ttft_unit", std::string("s"));
  file.WriteAttribute("/summary/fleet", "ranks", int64_t{WorldSize()});
  file.WriteAttribute("/summary/fleet", "mean_ttft_s", 1.5);
  file.WriteAttribute("/summary/fleet", "mean_ttft_s", 2.5);  // the second write wins
  file.WriteAttribute("/summary", "note", std::string());
  file.Commit();
}

TEST(Hdf5File, EveryRankWritesItsSliceInRankOrder) {
  const std::string path = (ScratchDirectory() / "requests.h5").string();
  WriteRequests(path, MPI_COMM_WORLD, RowsOf(WorldRank(), WorldSize()));

  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const ReadBack file(path);
  std::vector<RequestRow> expected;
  for (int rank = 0; rank < WorldSize(); ++rank) {
    for (const RequestRow& row : RowsOf(rank, WorldSize()))
      expected.push_back(row);
  }
  ASSERT_EQ(file.RowCount("/requests"), static_cast<int64_t>(expected.size()));
  const std::vector<ReadRow> rows = file.ReadRows<ReadRow>("/requests", ReadRowType().get());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(rows[i].id, expected[i].id);
    EXPECT_EQ(rows[i].slot, expected[i].slot);
    EXPECT_EQ(rows[i].ttft_s, expected[i].ttft_s);  // bit-exact: no conversion on the way
    EXPECT_EQ(std::string(rows[i].state),
              std::string(expected[i].state, strnlen(expected[i].state, 12)));
  }
  EXPECT_EQ(file.StringAttribute("/", "fleetsim_version"), "0.1.0");  // exactly 5 bytes
  EXPECT_EQ(file.StringAttribute("/requests", "ttft_unit"), "s");
  EXPECT_EQ(file.StringAttribute("/summary", "note"), std::string(1, '\0'));
  EXPECT_EQ(file.Int64Attribute("/summary/fleet", "ranks"), WorldSize());
  EXPECT_EQ(file.Float64Attribute("/summary/fleet", "mean_ttft_s"), 2.5);
}

TEST(Hdf5File, StoresPackedColumnsWithNulPaddedStrings) {
  const std::string path = (ScratchDirectory() / "members.h5").string();
  WriteRequests(path, MPI_COMM_WORLD, RowsOf(WorldRank(), WorldSize()));
  const std::vector<testing::StoredMember> members = ReadBack(path).Members("/requests");
  ASSERT_EQ(members.size(), 4u);
  EXPECT_EQ(members[0].name, "id");
  EXPECT_EQ(members[0].type_class, H5T_INTEGER);
  EXPECT_EQ(members[0].size, 8u);
  EXPECT_EQ(members[1].name, "slot");
  EXPECT_EQ(members[1].size, 4u);
  EXPECT_EQ(members[2].name, "ttft_s");
  EXPECT_EQ(members[2].type_class, H5T_FLOAT);
  EXPECT_EQ(members[3].name, "state");
  EXPECT_EQ(members[3].type_class, H5T_STRING);
  EXPECT_EQ(members[3].size, 12u);
  EXPECT_EQ(members[3].string_pad, H5T_STR_NULLPAD);
  EXPECT_EQ(members[3].cset, H5T_CSET_UTF8);
}

TEST(Hdf5File, NamesEveryColumnsUnitInOrder) {
  const std::string path = (ScratchDirectory() / "units.h5").string();
  WriteRequests(path, MPI_COMM_WORLD, RowsOf(WorldRank(), WorldSize()));
  EXPECT_EQ(ReadBack(path).StringListAttribute("/requests", "units"),
            (std::vector<std::string>{"index", "index", "s", "text"}));
}

TEST(Hdf5File, ChunksAndCompressesTablesWrittenByEveryRank) {
  // 40,000 rows per rank: several 1 MiB chunks (32-byte rows), each spanning ranks' slices.
  const std::string path = (ScratchDirectory() / "compressed.h5").string();
  const int64_t per_rank = 40000;
  std::vector<RequestRow> rows;
  for (int64_t i = 0; i < per_rank; ++i)
    rows.push_back(MakeRow(WorldRank(), i));
  for (int64_t i = 0; i < per_rank; ++i)
    rows[static_cast<std::size_t>(i)].id = WorldRank() * per_rank + i;
  WriteRequests(path, MPI_COMM_WORLD, rows);
  const ReadBack file(path);
  EXPECT_EQ(file.Filters("/requests"), (std::vector<int>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE}));
  EXPECT_EQ(file.ChunkRows("/requests"), (int64_t{1} << 20) / 32);
  const std::vector<ReadRow> back = file.ReadRows<ReadRow>("/requests", ReadRowType().get());
  ASSERT_EQ(back.size(), static_cast<std::size_t>(per_rank * WorldSize()));
  for (std::size_t i = 0; i < back.size(); ++i) {
    if (back[i].id != static_cast<int64_t>(i)) {
      ADD_FAILURE() << "row " << i << " holds id " << back[i].id;
      break;
    }
  }
  // Repetitive rows shrink: the file is far smaller than the packed rows.
  EXPECT_LT(fs::file_size(path), back.size() * 32 / 4);
}

TEST(Hdf5File, StoresTheSameBytesAsOneRankWritingEveryRow) {
  // Rows must not depend on how they were split across ranks (docs/DESIGN.md, STYLE.md 10).
  const std::string shared = (ScratchDirectory() / "split.h5").string();
  WriteRequests(shared, MPI_COMM_WORLD, RowsOf(WorldRank(), WorldSize()));
  if (WorldRank() != 0) return;
  std::vector<RequestRow> all;
  for (int rank = 0; rank < WorldSize(); ++rank) {
    for (const RequestRow& row : RowsOf(rank, WorldSize()))
      all.push_back(row);
  }
  const std::string alone = (ScratchDirectory() / "alone.h5").string();
  WriteRequests(alone, MPI_COMM_SELF, all);
  const std::vector<unsigned char> split_bytes = ReadBack(shared).RawBytes("/requests");
  EXPECT_EQ(split_bytes.size(), all.size() * 32);  // 8 + 4 + 8 + 12: no padding stored
  EXPECT_EQ(split_bytes, ReadBack(alone).RawBytes("/requests"));
}

TEST(Hdf5File, WithoutCommitLeavesNoFile) {
  const std::string path = (ScratchDirectory() / "abandoned.h5").string();
  {
    const std::vector<RequestRow> rows = RowsOf(WorldRank(), WorldSize());
    const auto count = static_cast<int64_t>(rows.size());
    const RowRange range = RowRangeOf(count, MPI_COMM_WORLD);
    Hdf5File file(path, MPI_COMM_WORLD);
    file.WriteTable("/requests", RequestSchema(), rows.data(), range.offset, count, range.total);
    EXPECT_TRUE(fs::exists(path + ".tmp"));
    EXPECT_FALSE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Hdf5File, MissingDirectoryIsAnInputErrorNamingOutput) {
  const std::string path = (ScratchDirectory() / "no-such-dir" / "run.h5").string();
  try {
    Hdf5File file(path, MPI_COMM_WORLD);
    ADD_FAILURE() << "created " << path;
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), "command line");
    EXPECT_EQ(error.field(), "--output");
    EXPECT_NE(std::string(error.what()).find("cannot create " + path), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Hdf5File, EmptyTableIsWrittenAndReadable) {
  const std::string path = (ScratchDirectory() / "empty.h5").string();
  {
    Hdf5File file(path, MPI_COMM_WORLD);
    file.WriteTable("/summary/empty", RequestSchema(), nullptr, 0, 0, 0);
    file.Commit();
  }
  const ReadBack file(path);
  EXPECT_EQ(file.RowCount("/summary/empty"), 0);
  EXPECT_EQ(file.Members("/summary/empty").size(), 4u);
  EXPECT_TRUE(file.ReadRows<ReadRow>("/summary/empty", ReadRowType().get()).empty());
}

// A cluster config is any size: over 64 KiB it cannot be an attribute (HDF5 refuses an
// object header message that large), so texts are datasets.
TEST(Hdf5File, WritesATextOfAnySizeAsAScalarStringDataset) {
  const std::string path = (ScratchDirectory() / "texts.h5").string();
  std::string big;
  for (int i = 0; big.size() < 200 * 1024; ++i)
    big += "# comment line " + std::to_string(i) + "\n";
  {
    Hdf5File file(path, MPI_COMM_WORLD);
    file.WriteText("/provenance", "cluster_config", big);
    file.WriteText("/provenance", "empty", "");
    file.WriteText("/", "top", "at the root");
    file.WriteAttribute("/provenance", "seed", int64_t{7});
    file.Commit();
  }
  const ReadBack file(path);
  EXPECT_EQ(file.Text("/provenance/cluster_config"), big);
  EXPECT_EQ(file.Text("/provenance/empty"), std::string(1, '\0'));
  EXPECT_EQ(file.Text("/top"), "at the root");
  EXPECT_EQ(file.Int64Attribute("/provenance", "seed"), 7);
}

TEST(Hdf5File, RowCountsThatDoNotAddUpThrowOnEveryRank) {
  const std::string path = (ScratchDirectory() / "short.h5").string();
  const std::vector<RequestRow> rows = RowsOf(WorldRank(), WorldSize());
  const auto count = static_cast<int64_t>(rows.size());
  const RowRange range = RowRangeOf(count, MPI_COMM_WORLD);
  Hdf5File file(path, MPI_COMM_WORLD);
  EXPECT_THROW(file.WriteTable("/requests", RequestSchema(), rows.data(), range.offset, count,
                               range.total + 1),
               std::invalid_argument);
}

TEST(Hdf5File, AnHdf5FailureThrowsTheSameErrorOnEveryRank) {
  const std::string path = (ScratchDirectory() / "twice.h5").string();
  Hdf5File file(path, MPI_COMM_WORLD);
  file.WriteTable("/summary/empty", RequestSchema(), nullptr, 0, 0, 0);
  try {
    file.WriteTable("/summary/empty", RequestSchema(), nullptr, 0, 0, 0);
    ADD_FAILURE() << "wrote a dataset twice";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("twice.h5: creating /summary/empty failed: H5Dcreate2 /summary/empty "
                        "failed"),
              std::string::npos)
        << error.what();
  }
  file.Commit();  // the file is still usable
  EXPECT_THROW(file.Commit(), std::logic_error);
}

}  // namespace
}  // namespace fleetsim::output
