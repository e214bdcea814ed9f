#include "history/postgres_connection.h"

#include <endian.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace perfgate::pg {

void AppendCopyText(std::string& out, const std::string& text) {
  for (char c : text) {
    const char* escaped = c == '\\' ? "\\\\" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : nullptr;
    if (escaped != nullptr)
      out += escaped;
    else
      out += c;
  }
}

std::string DoubleText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string ArrayLiteral(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string IdArray(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (int64_t id : ids) {
    if (out.size() > 1) out += ',';
    out += std::to_string(id);
  }
  return out + "}";
}

void Connection::Fail(const PGresult* result, const std::string& doing) const {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string code = state ? state : "";
  last_state_ = code;
  std::string message = FirstLine(result ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  if (message.empty()) message = FirstLine(PQerrorMessage(conn_));
  if (message.rfind("ERROR:  ", 0) == 0) message.erase(0, 8);
  const bool connection_lost =
      PQstatus(conn_) == CONNECTION_BAD || code.rfind("08", 0) == 0 || code.rfind("57P", 0) == 0 || code.empty();
  if (connection_lost) {
    throw InfraError(name_ + ": the connection to the server was lost" + (doing.empty() ? "" : " " + doing) +
                     (message.empty() ? "" : " (" + message + ")"));
  }
  const bool input = code.rfind("22", 0) == 0 || code.rfind("23", 0) == 0 || code.rfind("42", 0) == 0 ||
                     code.rfind("28", 0) == 0 || code.rfind("3D", 0) == 0 || code.rfind("25006", 0) == 0;
  if (input) throw InputError(name_ + ": " + message);
  throw InfraError(name_ + ": " + message);
}

ResultPtr Connection::Exec(const std::string& sql, const std::vector<std::string>& params, const std::string& doing,
                           bool binary) const {
  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  // Without parameters, the simple protocol: a migration is several statements.
  ResultPtr result(params.empty() && !binary ? PQexec(conn_, sql.c_str())
                                             : PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()),
                                                            nullptr, values.data(), nullptr, nullptr, binary ? 1 : 0),
                   &PQclear);
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) Fail(result.get(), doing);
  return result;
}

void Connection::Copy(const std::string& sql, const std::string& rows, const std::string& doing) {
  if (rows.empty()) return;
  ResultPtr start(PQexec(conn_, sql.c_str()), &PQclear);
  if (!start || PQresultStatus(start.get()) != PGRES_COPY_IN) Fail(start.get(), doing);
  if (PQputCopyData(conn_, rows.data(), static_cast<int>(rows.size())) != 1 || PQputCopyEnd(conn_, nullptr) != 1)
    Fail(nullptr, doing);
  ResultPtr end(PQgetResult(conn_), &PQclear);
  const bool ok = end && PQresultStatus(end.get()) == PGRES_COMMAND_OK;
  while (PGresult* more = PQgetResult(conn_)) PQclear(more);
  if (!ok) Fail(end.get(), doing);
}

std::string Connection::Text(const PGresult* r, int row, int column) {
  return PQgetisnull(r, row, column) ? std::string() : std::string(PQgetvalue(r, row, column));
}
int64_t Connection::Int(const PGresult* r, int row, int column) {
  return std::strtoll(PQgetvalue(r, row, column), nullptr, 10);
}
double Connection::Double(const PGresult* r, int row, int column) {
  return std::strtod(PQgetvalue(r, row, column), nullptr);
}

int64_t Connection::BinaryInt(const PGresult* r, int row, int column) {
  uint64_t bits = 0;
  std::memcpy(&bits, PQgetvalue(r, row, column), sizeof bits);
  return static_cast<int64_t>(be64toh(bits));
}
double Connection::BinaryDouble(const PGresult* r, int row, int column) {
  uint64_t bits = static_cast<uint64_t>(BinaryInt(r, row, column));
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
std::string Connection::Bytes(const PGresult* r, int row, int column) {
  size_t size = 0;
  unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r, row, column)), &size);
  std::string out(reinterpret_cast<const char*>(bytes), size);
  PQfreemem(bytes);
  return out;
}
int Connection::ReadSchemaVersion(bool under_lock) const {
  ResultPtr exists =
      under_lock ? Exec(
                       "SELECT count(*) > 0 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = "
                       "c.relnamespace WHERE c.relname = 'perfgate_schema' AND n.nspname = current_schema()")
                 : Exec("SELECT to_regclass('perfgate_schema') IS NOT NULL");
  if (Text(exists.get(), 0, 0) != "t") return 0;
  ResultPtr version = Exec("SELECT max(version) FROM perfgate_schema");
  return PQgetisnull(version.get(), 0, 0) ? 0 : static_cast<int>(Int(version.get(), 0, 0));
}

void Connection::RefuseForeignTables() const {
  ResultPtr tables = Exec(
      "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p', 'f')");
  if (Int(tables.get(), 0, 0) > 0)
    throw InputError(name_ + ": a PostgreSQL database, but not a perfgate history (it has tables of its own)");
}

PGconn* Connect(const std::string& url, const std::string& name) {
  // The URL's own settings win (they come after): without a connect_timeout
  // an unreachable host would keep a CI job waiting for minutes.
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "perfgate", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  if (conn == nullptr) throw InfraError(name + ": out of memory connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    // libpq says which host it tried and why; never the password.
    std::string why = FirstLine(PQerrorMessage(conn));
    PQfinish(conn);
    const std::string message = name + ": cannot connect: " + why;
    // Credentials or a database that the server refuses are the user's to
    // fix; a server that cannot be reached is the machine's.
    if (why.find("password") != std::string::npos || why.find("does not exist") != std::string::npos ||
        why.find("no pg_hba.conf entry") != std::string::npos || why.find("permission denied") != std::string::npos ||
        why.find("invalid") != std::string::npos || why.find("authentication") != std::string::npos)
      throw InputError(message);
    throw InfraError(message);
  }
  PQclear(PQexec(conn, "SET client_min_messages = warning"));
  // JIT compiling a suite's year of values costs seconds and saves less
  // (a year's trend read measured 11.2 s with it, 8.8 s without).
  PQclear(PQexec(conn, "SET jit = off"));
  return conn;
}

}  // namespace perfgate::pg
