// The history tests run on both backends: an SQLite file in a scratch
// directory, and a fresh database on the throw-away PostgreSQL server that
// ctest starts (tests/harness/postgres_cluster.sh, fixture "postgres").
// Without that server they skip, except under CI=true, where they fail.
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "harness/environment.h"
#include "harness/files.h"
#include "harness/paths.h"

namespace perfgate::testing {

enum class HistoryBackend { kSqlite, kPostgres };

inline std::string BackendName(const ::testing::TestParamInfo<HistoryBackend>& info) {
  return info.param == HistoryBackend::kSqlite ? "SQLite" : "PostgreSQL";
}

// The socket directory of the test server; empty when it is not running.
inline std::string PostgresSocketDir() {
  if (*PERFGATE_TEST_POSTGRES_STATE == '\0') return "";  // an executable that runs no PostgreSQL tests
  std::ifstream in(std::string(PERFGATE_TEST_POSTGRES_STATE) + "/socket_dir");
  std::string dir;
  std::getline(in, dir);
  if (!dir.empty() && access((dir + "/.s.PGSQL.5432").c_str(), F_OK) == 0) return dir;
  return "";
}

// postgresql://USER[:PASSWORD]@/DATABASE?host=SOCKET_DIR on the test server.
inline std::string PostgresUrl(const std::string& database, const std::string& user = "postgres",
                               const std::string& password = "") {
  return "postgresql://" + user + (password.empty() ? "" : ":" + password) + "@/" + database +
         "?host=" + PostgresSocketDir();
}

// Runs SQL on a database of the test server; "" or the first row's first column.
inline std::string PostgresQuery(const std::string& database, const std::string& sql) {
  PGconn* conn = PQconnectdb(PostgresUrl(database).c_str());
  std::string out;
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    const ExecStatusType status = PQresultStatus(r);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      ADD_FAILURE() << sql << ": " << PQresultErrorMessage(r);
    } else if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) {
      out = PQgetvalue(r, 0, 0);
    }
    PQclear(r);
  }
  PQfinish(conn);
  return out;
}

// One history of one test: a file, or a database of its own dropped at the end.
class TestHistory {
 public:
  explicit TestHistory(HistoryBackend backend) : backend_(backend) {
    if (backend == HistoryBackend::kSqlite) {
      location_ = dir_ / "history.sqlite";
      return;
    }
    static std::atomic<int> counter{0};
    database_ = "perfgate_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" +
                std::to_string(std::random_device{}() % 100000);
    PostgresQuery("postgres", "CREATE DATABASE " + database_);
    location_ = PostgresUrl(database_);
  }
  ~TestHistory() {
    if (!database_.empty()) PostgresQuery("postgres", "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }
  TestHistory(const TestHistory&) = delete;
  TestHistory& operator=(const TestHistory&) = delete;

  // What --db takes.
  const std::string& location() const { return location_; }
  bool postgres() const { return backend_ == HistoryBackend::kPostgres; }
  const std::string& database() const { return database_; }
  const ScratchDir& dir() const { return dir_; }

  // SQL in the backend's own dialect; the first row's first column.
  std::string Sql(const std::string& sql) const {
    if (postgres()) return PostgresQuery(database_, sql);
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(location_.c_str(), &db), SQLITE_OK);
    std::string out;
    auto first = [](void* to, int n, char** values, char**) {
      auto* text = static_cast<std::string*>(to);
      if (text->empty() && n > 0 && values[0]) *text = values[0];
      return 0;
    };
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), first, &out, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
    return out;
  }
  int64_t Count(const std::string& table) const {
    return std::strtoll(Sql("SELECT count(*) FROM " + table).c_str(), nullptr, 10);
  }

 private:
  HistoryBackend backend_;
  ScratchDir dir_;
  std::string location_;
  std::string database_;
};

}  // namespace perfgate::testing

// In a test parameterized over HistoryBackend: the PostgreSQL server must run
// (ctest starts it); skipped without it, a failure under CI=true.
#define PERFGATE_REQUIRE_HISTORY_BACKEND(backend)                                                                     \
  PERFGATE_REQUIRE_ENVIRONMENT(                                                                                       \
      (backend) == ::perfgate::testing::HistoryBackend::kSqlite || !::perfgate::testing::PostgresSocketDir().empty(), \
      "the test PostgreSQL server is not running (ctest starts it: fixture postgres, "                                \
      "tests/harness/postgres_cluster.sh)")
