#include "history/sqlite_statement.h"

#include "base/error.h"

namespace perfgate::sqlite {

void ThrowSqliteError(sqlite3* db, const std::string& file, int rc) {
  std::string message = file + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_READONLY ||
      primary == SQLITE_CANTOPEN || primary == SQLITE_CONSTRAINT) {
    throw InputError(message);
  }
  throw InfraError(message);
}

}  // namespace perfgate::sqlite
