// The SQLite history's statements and transactions (sqlite_history.cpp):
// a prepared statement and a transaction that rolls back unless committed,
// their errors naming the database file and mapped to an exit code.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

namespace perfgate::sqlite {

// Not a database, corrupt, read-only or data the schema refuses (two
// repetitions with one index) is the user's input; the rest is the machine.
[[noreturn]] void ThrowSqliteError(sqlite3* db, const std::string& file, int rc);

// A prepared statement; errors name the database file.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& file, const std::string& sql) : db_(db), file_(file) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) Fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, const std::string& text) {
    Check(sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& BindBlob(int i, const std::string& bytes) {
    Check(sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& Bind(int i, double value) {
    Check(sqlite3_bind_double(stmt_, i, value));
    return *this;
  }
  Statement& Bind(int i, int64_t value) {
    Check(sqlite3_bind_int64(stmt_, i, value));
    return *this;
  }
  Statement& BindOptional(int i, const std::optional<double>& value) {
    Check(value && std::isfinite(*value) ? sqlite3_bind_double(stmt_, i, *value) : sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // True while there is a row.
  bool Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) Fail();
    return false;
  }
  // Runs an insert or update again with new bindings.
  void Run() {
    Step();
    sqlite3_reset(stmt_);
  }
  void Reset() { sqlite3_reset(stmt_); }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text ? reinterpret_cast<const char*>(text) : "";
  }
  std::string Blob(int column) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    return data ? std::string(static_cast<const char*>(data), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string();
  }
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK) Fail();
  }
  [[noreturn]] void Fail() const { ThrowSqliteError(db_, file_, sqlite3_extended_errcode(db_)); }
  sqlite3* db_;
  const std::string& file_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Rolls back unless committed.
class Transaction {
 public:
  // `begin`: BEGIN IMMEDIATE to write; BEGIN for a read that wants one snapshot.
  Transaction(sqlite3* db, const std::string& file, const char* begin = "BEGIN IMMEDIATE") : db_(db), file_(file) {
    Exec(begin);
  }
  ~Transaction() {
    if (!committed_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void Commit() {
    Exec("COMMIT");
    committed_ = true;
  }

 private:
  void Exec(const char* sql) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) ThrowSqliteError(db_, file_, rc);
  }
  sqlite3* db_;
  const std::string& file_;
  bool committed_ = false;
};

}  // namespace perfgate::sqlite
