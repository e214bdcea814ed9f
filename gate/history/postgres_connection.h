// The libpq connection of the PostgreSQL history (postgres_history.cpp):
// statements, COPY and transactions, each failure mapped to an exit code
// (a lost connection is the machine's, data the server refuses the
// user's), and the values of a result, text or binary.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"

namespace perfgate::pg {

using ResultPtr = std::unique_ptr<PGresult, decltype(&PQclear)>;

// Calls fn(result, row) for every row of `result`.
template <typename Fn>
void ForEachRow(const ResultPtr& result, Fn fn) {
  for (int row = 0; row < PQntuples(result.get()); ++row) fn(result.get(), row);
}
// A value for COPY's text format: backslash, tab, newline and carriage return escaped.
void AppendCopyText(std::string& out, const std::string& text);
// A double that reads back the same (%.17g).
std::string DoubleText(double value);
// A text[] literal: every element quoted, quotes and backslashes escaped.
std::string ArrayLiteral(const std::vector<std::string>& items);
// A bigint[] literal.
std::string IdArray(const std::vector<int64_t>& ids);

// Connects to the database at `url` (a libpq connection string or URI),
// with a connect timeout of 10 s unless the URL sets one, and the session
// settings perfgate reads with. A server that cannot be reached is an
// InfraError; credentials or a database it refuses, an InputError; both
// named by `name`, never with the password.
PGconn* Connect(const std::string& url, const std::string& name);

class Connection {
 public:
  // `name`: the history's name in messages (never its password).
  Connection(std::string name, PGconn* conn) : name_(std::move(name)), conn_(conn) {}
  ~Connection() { PQfinish(conn_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Errors: a dropped connection or a server that went away is the machine
  // (exit 3); data or a schema the server refuses is the user's (exit 2).
  [[noreturn]] void Fail(const PGresult* result, const std::string& doing) const;
  // `binary`: the result's values in PostgreSQL's binary format (BinaryInt, BinaryDouble).
  ResultPtr Exec(const std::string& sql, const std::vector<std::string>& params = {}, const std::string& doing = "",
                 bool binary = false) const;
  // COPY ... FROM STDIN of `rows` in the text format; nothing for none.
  void Copy(const std::string& sql, const std::string& rows, const std::string& doing);
  // Runs fn between BEGIN and COMMIT, rolling back when it throws.
  template <typename Fn>
  auto InTransaction(const std::string& doing, Fn fn) {
    Exec("BEGIN", {}, doing);
    try {
      auto result = fn();
      Exec("COMMIT", {}, doing);
      return result;
    } catch (const Error&) {
      if (PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  static std::string Text(const PGresult* r, int row, int column);
  static int64_t Int(const PGresult* r, int row, int column);
  static double Double(const PGresult* r, int row, int column);
  // A bigint (8 bytes, network order) or a double precision of a binary result.
  static int64_t BinaryInt(const PGresult* r, int row, int column);
  static double BinaryDouble(const PGresult* r, int row, int column);
  static std::string Bytes(const PGresult* r, int row, int column);

  // perfgate_schema's version, 0 without the table. `under_lock`: pg_class
  // read as a table rather than through to_regclass, since a migrator that
  // waited on the advisory lock must see the table the one before it made,
  // and the name lookup's cache is only refreshed by relation locks.
  int ReadSchemaVersion(bool under_lock) const;
  // Without perfgate_schema: a database that holds another program's tables
  // is not perfgate's to write into (nor to read as a history).
  void RefuseForeignTables() const;

  // SQLSTATE of the last failed statement.
  mutable std::string last_state_;

 protected:
  std::string name_;
  PGconn* conn_;
};

}  // namespace perfgate::pg
